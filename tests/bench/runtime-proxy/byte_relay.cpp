// The floor for any CRI proxy on this machine: a relay that parses nothing. Each connection it
// accepts gets a connection of its own to the runtime, and one thread copies bytes both ways.
// What it adds is the two socket wake-ups and four copies a relayed call costs in any proxy;
// run.sh times it beside koord runtime-proxy so that "added p99" has a reference.
//
//   koord_bench_byte_relay --listen /tmp/relay.sock --runtime /run/containerd/containerd.sock
#include <fmt/format.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace {

[[noreturn]] void fail(std::string_view what) {
  throw std::runtime_error(fmt::format("{}: {}", what, std::strerror(errno)));
}

sockaddr_un addressOf(const std::string& path) {
  sockaddr_un a{};
  if (path.size() >= sizeof a.sun_path)
    throw std::invalid_argument("socket path too long: " + path);
  a.sun_family = AF_UNIX;
  std::memcpy(a.sun_path, path.c_str(), path.size() + 1);
  return a;
}

int unixSocket() {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    fail("socket");
  return fd;
}

// Blocking writes: the bench's messages are small and the peers read them at once.
bool writeAll(int fd, const char* data, std::size_t n) {
  while (n > 0) {
    const ssize_t k = ::write(fd, data, n);
    if (k < 0 && errno == EINTR)
      continue;
    if (k <= 0)
      return false;
    data += k;
    n -= static_cast<std::size_t>(k);
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) try {
  std::string listen_path, runtime_path;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string_view a = argv[i];
    if (a == "--listen")
      listen_path = argv[i + 1];
    else if (a == "--runtime")
      runtime_path = argv[i + 1];
    else
      throw std::invalid_argument(fmt::format("unknown argument {}", a));
  }
  if (listen_path.empty() || runtime_path.empty())
    throw std::invalid_argument("usage: koord_bench_byte_relay --listen PATH --runtime PATH");
  std::signal(SIGPIPE, SIG_IGN);

  const int listener = unixSocket();
  ::unlink(listen_path.c_str());
  const sockaddr_un listen_addr = addressOf(listen_path);
  if (::bind(listener, reinterpret_cast<const sockaddr*>(&listen_addr), sizeof listen_addr) < 0)
    fail("bind " + listen_path);
  if (::listen(listener, 64) < 0)
    fail("listen");
  const int ep = ::epoll_create1(EPOLL_CLOEXEC);
  if (ep < 0)
    fail("epoll_create1");
  auto watch = [&](int fd) {
    epoll_event e{};
    e.events = EPOLLIN;
    e.data.fd = fd;
    if (::epoll_ctl(ep, EPOLL_CTL_ADD, fd, &e) < 0)
      fail("epoll_ctl");
  };
  watch(listener);

  std::unordered_map<int, int> peer;  // both directions: kubelet side <-> runtime side
  std::vector<char> buffer(1 << 16);
  auto drop = [&](int fd) {
    const int other = peer.at(fd);
    peer.erase(fd);
    peer.erase(other);
    ::close(fd);
    ::close(other);
  };
  for (;;) {
    epoll_event events[32];
    const int n = ::epoll_wait(ep, events, 32, -1);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      fail("epoll_wait");
    for (int i = 0; i < n; ++i) {
      const int fd = events[i].data.fd;
      if (fd == listener) {
        const int client = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
        if (client < 0)
          continue;
        const int runtime = unixSocket();
        const sockaddr_un runtime_addr = addressOf(runtime_path);
        if (::connect(runtime, reinterpret_cast<const sockaddr*>(&runtime_addr),
                      sizeof runtime_addr) < 0) {
          fmt::print(stderr, "koord_bench_byte_relay: connect {}: {}\n", runtime_path,
                     std::strerror(errno));
          ::close(runtime);
          ::close(client);
          continue;
        }
        peer[client] = runtime;
        peer[runtime] = client;
        watch(client);
        watch(runtime);
        continue;
      }
      if (!peer.contains(fd))
        continue;  // closed earlier in this batch, with its peer
      const ssize_t got = ::read(fd, buffer.data(), buffer.size());
      if (got < 0 && (errno == EINTR || errno == EAGAIN))
        continue;
      if (got <= 0 || !writeAll(peer.at(fd), buffer.data(), static_cast<std::size_t>(got)))
        drop(fd);
    }
  }
} catch (const std::exception& e) {
  fmt::print(stderr, "koord_bench_byte_relay: {}\n", e.what());
  return 1;
}
