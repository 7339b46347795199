#include "qosmanager/sysreconcile/kernel_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <boost/system/error_code.hpp>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace koord::roles::koordlet::qosmanager {

namespace {

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0)
      ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

kube::Error errnoError(std::string message, int e) {
  return kube::Error(fmt::format("{}: {}", message, std::strerror(e)),
                     boost::system::error_code(e, boost::system::system_category()));
}

// Reads up to `limit` bytes; `overflow` says whether more was there.
kube::Expected<std::optional<std::string>> readUpTo(const std::filesystem::path& path,
                                                    std::size_t limit, bool* overflow) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  if (fd.get() < 0) {
    const int e = errno;
    if (e == ENOENT)
      return std::optional<std::string>();
    return errnoError(fmt::format("read {}", path.string()), e);
  }
  std::string out;
  char buf[4096];
  *overflow = false;
  while (true) {
    auto n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0) {
      const int e = errno;
      if (e == EINTR)
        continue;
      return errnoError(fmt::format("read {}", path.string()), e);
    }
    if (n == 0)
      break;
    out.append(buf, static_cast<std::size_t>(n));
    if (out.size() > limit) {
      out.resize(limit);
      *overflow = true;
      break;
    }
  }
  return std::optional<std::string>(std::move(out));
}

}  // namespace

std::string_view trimKernelText(std::string_view s) {
  constexpr std::string_view kSpace = " \t\r\n";
  auto first = s.find_first_not_of(kSpace);
  if (first == std::string_view::npos)
    return {};
  auto last = s.find_last_not_of(kSpace);
  return s.substr(first, last - first + 1);
}

kube::Expected<std::optional<std::string>> readKernelFile(const std::filesystem::path& path,
                                                          std::size_t limit) {
  bool overflow = false;
  auto text = readUpTo(path, limit, &overflow);
  if (text && overflow)
    return kube::makeKubeError(fmt::format("read {}: longer than {} bytes", path.string(), limit));
  return text;
}

kube::Expected<std::optional<std::string>> readKernelFileHead(const std::filesystem::path& path,
                                                              std::size_t limit) {
  bool overflow = false;
  return readUpTo(path, limit, &overflow);
}

kube::Expected<void> writeKernelFile(const std::filesystem::path& path, std::string_view value) {
  // No O_CREAT: a kernel file that is not there is an error, never a new regular file.
  Fd fd(::open(path.c_str(), O_WRONLY | O_NOFOLLOW | O_CLOEXEC | O_TRUNC));
  auto what = [&] { return fmt::format("write {} = {:?}", path.string(), std::string(value)); };
  if (fd.get() < 0) {
    const int e = errno;
    return errnoError(what(), e);
  }
  auto n = ::write(fd.get(), value.data(), value.size());
  if (n < 0) {
    const int e = errno;
    return errnoError(what(), e);
  }
  if (static_cast<std::size_t>(n) != value.size())
    return errnoError(what(), EIO);
  return {};
}

kube::Expected<KernelWrite> updateKernelFile(const std::filesystem::path& path,
                                             std::string_view value) {
  auto current = readKernelFile(path);
  if (!current)
    return current.error();
  if (!*current)
    return errnoError(fmt::format("write {} = {:?}", path.string(), std::string(value)), ENOENT);
  if (trimKernelText(**current) == trimKernelText(value))
    return KernelWrite::kUnchanged;
  auto written = writeKernelFile(path, value);
  if (!written)
    return written.error();
  return KernelWrite::kWritten;
}

}  // namespace koord::roles::koordlet::qosmanager
