#include "koord/h2/unix_listen.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

namespace koord::h2 {

// Why this way: bind() creates the socket file as 0777 less the umask, so the umask would
// decide who may connect (under umask 0, any local user could drive root's runtime). A chmod
// after bind() leaves a window in which the socket is open to them, and unlink() of a stale
// socket followed by bind() races with whatever else appears at the path meanwhile. So the
// socket is bound in a private directory (mkdtemp's 0700, made next to the path so the rename
// stays on one filesystem), given its mode there where nobody else can reach it, listened on,
// and only then renamed over the path: it appears there with its final mode, already accepting,
// and a stale socket is replaced atomically. The umask is never touched: it is process-wide and
// other threads create files.
int listenUnixSocket(const std::string& path, unsigned mode, std::error_code& error) {
  namespace fs = std::filesystem;
  const auto fail = [&](int err) {
    error = std::error_code(err, std::generic_category());
    return -1;
  };
  const fs::path target(path);
  std::string dir = (target.parent_path() / ".sockXXXXXX").string();
  const std::string bound = dir + "/s";
  sockaddr_un addr{};
  if (path.size() >= sizeof addr.sun_path || bound.size() >= sizeof addr.sun_path)
    return fail(ENAMETOOLONG);
  if (::mkdtemp(dir.data()) == nullptr)
    return fail(errno);
  const std::string tmp = dir + "/s";
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, tmp.c_str(), tmp.size() + 1);
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int err = fd < 0 ? errno : 0;
  if (err == 0 && ::bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0)
    err = errno;
  if (err == 0 && ::chmod(tmp.c_str(), static_cast<mode_t>(mode)) != 0)
    err = errno;
  if (err == 0 && ::listen(fd, SOMAXCONN) != 0)
    err = errno;
  if (err == 0 && ::rename(tmp.c_str(), path.c_str()) != 0)
    err = errno;
  if (err != 0) {
    ::unlink(tmp.c_str());
    if (fd >= 0)
      ::close(fd);
  }
  ::rmdir(dir.c_str());
  return err == 0 ? fd : fail(err);
}

}  // namespace koord::h2
