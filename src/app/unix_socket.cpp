#include "koord/app/unix_socket.h"

#include <fmt/format.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "koord/app/role_app.h"
#include "koord/core/log.h"

namespace koord::app {

bool unixSocketServed(const std::string& path) {
  sockaddr_un addr{};
  if (path.size() >= sizeof(addr.sun_path))
    return false;
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return false;
  const bool connected = ::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0;
  ::close(fd);
  return connected;
}

namespace {

// mkdir -p with 0755 rather than 0777 less the umask: a directory others may write to would
// let them rename the socket away and put one of their own in its place.
void createDirectories(const std::filesystem::path& dir) {
  std::filesystem::path at;
  for (const auto& part : dir) {
    at /= part;
    if (::mkdir(at.c_str(), 0755) != 0 && errno != EEXIST)
      throw ConfigError(
          fmt::format("creating the directory {}: {}", at.string(), std::strerror(errno)));
  }
}

}  // namespace

void prepareUnixSocketPath(const std::string& path, bool create_directory) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path dir = fs::path(path).parent_path();
  if (create_directory) {
    createDirectories(dir);
  } else if (!fs::is_directory(dir, ec)) {
    throw ConfigError(fmt::format("{}: the directory {} does not exist", path, dir.string()));
  }
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT)
      return;
    throw ConfigError(fmt::format("{}: {}", path, std::strerror(errno)));
  }
  if (!S_ISSOCK(st.st_mode))
    throw ConfigError(fmt::format("{} exists and is not a socket", path));
  if (unixSocketServed(path))
    throw ConfigError(fmt::format("{}: another process is serving this socket", path));
  // Not unlinked here: the server's new socket is renamed over it (h2::listenUnixSocket), so
  // the path never stands empty for another process to bind.
  KOORD_LOG_INFO("replacing the stale socket {}", path);
}

}  // namespace koord::app
