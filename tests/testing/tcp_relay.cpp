#include "tcp_relay.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

namespace koord::testing {

namespace {

int listenLoopback() {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    throw std::runtime_error(std::string("TcpRelay: socket: ") + std::strerror(errno));
  int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd, 64) != 0) {
    ::close(fd);
    throw std::runtime_error(std::string("TcpRelay: bind/listen: ") + std::strerror(errno));
  }
  return fd;
}

int connectTo(const std::string& host, int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (::inet_pton(AF_INET, host.c_str(), &addr.sin_addr) != 1 ||
      ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

}  // namespace

struct TcpRelay::Impl {
  struct Pair {
    int client;
    int server;
  };

  std::string host;
  int target_port;
  int listen_fd = -1;
  int port = 0;
  int wake[2] = {-1, -1};  // a pipe that interrupts poll() for cut() and shutdown
  std::mutex mu;
  std::condition_variable cv;
  bool is_cut = false;       // under mu
  bool cut_applied = false;  // under mu: the thread has closed everything since cut()
  bool quit = false;         // under mu
  std::atomic<int> relayed{0};
  std::atomic<int> refused{0};
  std::vector<Pair> pairs;  // only the relay thread touches it
  std::thread thread;

  void closeAll() {
    for (auto& p : pairs) {
      ::close(p.client);
      ::close(p.server);
    }
    pairs.clear();
  }

  void run() {
    char buf[64 << 10];
    for (;;) {
      bool cut_now, quit_now;
      {
        std::lock_guard lock(mu);
        cut_now = is_cut;
        quit_now = quit;
      }
      if (quit_now)
        break;
      if (cut_now) {
        closeAll();
        std::lock_guard lock(mu);
        cut_applied = true;
        cv.notify_all();
      }
      std::vector<pollfd> fds;
      fds.push_back({wake[0], POLLIN, 0});
      fds.push_back({listen_fd, POLLIN, 0});
      for (auto& p : pairs) {
        fds.push_back({p.client, POLLIN, 0});
        fds.push_back({p.server, POLLIN, 0});
      }
      if (::poll(fds.data(), fds.size(), 1000) < 0 && errno != EINTR)
        break;
      if (fds[0].revents & POLLIN) {
        char drain[64];
        while (::read(wake[0], drain, sizeof drain) > 0) {
        }
      }
      const std::size_t polled = pairs.size();  // pairs accepted below were not polled yet
      if (fds[1].revents & POLLIN) {
        int c = ::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
        if (c >= 0) {
          std::lock_guard lock(mu);
          int s = is_cut ? -1 : connectTo(host, target_port);
          if (s < 0) {
            ::close(c);
            refused.fetch_add(1);
          } else {
            pairs.push_back({c, s});
            relayed.fetch_add(1);
          }
        }
      }
      // Copy what is readable; a closed or failed side closes the pair. Writes block: test
      // traffic is small and the peers read promptly.
      std::vector<Pair> keep;
      for (std::size_t i = 0; i < pairs.size(); ++i) {
        bool alive = true;
        for (int side = 0; side < 2 && alive && i < polled; ++side) {
          const pollfd& pf = fds[2 + 2 * i + static_cast<std::size_t>(side)];
          if (!(pf.revents & (POLLIN | POLLHUP | POLLERR)))
            continue;
          int from = side == 0 ? pairs[i].client : pairs[i].server;
          int to = side == 0 ? pairs[i].server : pairs[i].client;
          ssize_t n = ::read(from, buf, sizeof buf);
          if (n <= 0) {
            alive = false;
            break;
          }
          for (ssize_t off = 0; off < n;) {
            ssize_t w = ::send(to, buf + off, static_cast<std::size_t>(n - off), MSG_NOSIGNAL);
            if (w <= 0) {
              alive = false;
              break;
            }
            off += w;
          }
        }
        if (alive) {
          keep.push_back(pairs[i]);
        } else {
          ::close(pairs[i].client);
          ::close(pairs[i].server);
        }
      }
      pairs.swap(keep);
    }
    closeAll();
  }

  void poke() { [[maybe_unused]] auto n = ::write(wake[1], "x", 1); }
};

TcpRelay::TcpRelay(std::string target_host, int target_port) : impl_(std::make_unique<Impl>()) {
  impl_->host = std::move(target_host);
  impl_->target_port = target_port;
  impl_->listen_fd = listenLoopback();
  sockaddr_in addr{};
  socklen_t len = sizeof addr;
  ::getsockname(impl_->listen_fd, reinterpret_cast<sockaddr*>(&addr), &len);
  impl_->port = ntohs(addr.sin_port);
  if (::pipe2(impl_->wake, O_CLOEXEC | O_NONBLOCK) != 0) {
    ::close(impl_->listen_fd);
    throw std::runtime_error("TcpRelay: pipe2 failed");
  }
  impl_->thread = std::thread([impl = impl_.get()] { impl->run(); });
}

TcpRelay::~TcpRelay() {
  {
    std::lock_guard lock(impl_->mu);
    impl_->quit = true;
  }
  impl_->poke();
  impl_->thread.join();
  ::close(impl_->listen_fd);
  ::close(impl_->wake[0]);
  ::close(impl_->wake[1]);
}

int TcpRelay::port() const {
  return impl_->port;
}

void TcpRelay::cut() {
  std::unique_lock lock(impl_->mu);
  impl_->is_cut = true;
  impl_->cut_applied = false;
  impl_->poke();
  impl_->cv.wait(lock, [this] { return impl_->cut_applied; });
}

void TcpRelay::restore() {
  std::lock_guard lock(impl_->mu);
  impl_->is_cut = false;
}

int TcpRelay::connectionsRelayed() const {
  return impl_->relayed.load();
}

int TcpRelay::connectionsRefused() const {
  return impl_->refused.load();
}

}  // namespace koord::testing
