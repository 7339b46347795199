#include "koord/http/file_util.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>

#include "koord/core/log.h"

namespace koord::http {

namespace {

boost::system::error_code lastError() {
  return {errno, boost::system::system_category()};
}

bool writeAll(int fd, std::string_view content) {
  while (!content.empty()) {
    ssize_t n = ::write(fd, content.data(), content.size());
    if (n < 0) {
      if (errno == EINTR)
        continue;
      return false;
    }
    content.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

}  // namespace

Result<std::string> readFile(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return lastError();
  std::string out;
  char buf[16384];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      auto ec = lastError();
      ::close(fd);
      return ec;
    }
    if (n == 0)
      break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return out;
}

Result<void> writeFileAtomic(const std::string& path, std::string_view content, mode_t mode) {
  std::filesystem::path target(path);
  std::filesystem::path dir = target.parent_path();
  if (dir.empty())
    dir = ".";
  // Built by appending: GCC 12 at -O3 warns falsely (-Wrestrict) on "literal" + std::string.
  std::string name = ".";
  name += target.filename().string();
  name += ".tmp.XXXXXX";
  std::string tmp = (dir / name).string();
  int fd = ::mkstemp(tmp.data());
  if (fd < 0)
    return lastError();

  // Every failure below must remove the temporary file, or a crash loop would fill the disk.
  auto fail = [&](boost::system::error_code ec) -> Result<void> {
    ::close(fd);
    ::unlink(tmp.c_str());
    return ec;
  };
  if (::fchmod(fd, mode) != 0)
    return fail(lastError());
  if (!writeAll(fd, content))
    return fail(lastError());
  if (::fsync(fd) != 0)
    return fail(lastError());
  if (::close(fd) != 0) {
    auto ec = lastError();
    ::unlink(tmp.c_str());
    return ec;
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    auto ec = lastError();
    ::unlink(tmp.c_str());
    return ec;
  }
  // The rename is durable only once the directory entry is; failing here loses nothing that
  // readers can see, so it is logged rather than returned.
  int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd >= 0) {
    if (::fsync(dir_fd) != 0) {
      KOORD_LOG_WARNING("fsync of directory {} after writing {} failed: {}", dir.string(), path,
                        lastError().message());
    }
    ::close(dir_fd);
  }
  return {};
}

}  // namespace koord::http
