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

void prepareUnixSocketPath(const std::string& path, bool create_directory) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path dir = fs::path(path).parent_path();
  if (create_directory) {
    fs::create_directories(dir, ec);
    if (ec)
      throw ConfigError(fmt::format("creating the directory of {}: {}", path, ec.message()));
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
  if (::unlink(path.c_str()) != 0 && errno != ENOENT)
    throw ConfigError(fmt::format("removing stale socket {}: {}", path, std::strerror(errno)));
  KOORD_LOG_INFO("replaced the stale socket {}", path);
}

}  // namespace koord::app
