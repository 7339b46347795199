// Fixtures shared by the HTTP layer's tests: an io_context on background threads, a throwaway
// PKI, and a raw loopback socket for speaking broken HTTP (scratch directories are TempTree's).
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "koord/core/result.h"
#include "koord/http/cert.h"
#include "koord/http/client.h"
#include "koord/http/file_util.h"
#include "koord/http/message.h"
#include "koord/http/server.h"
#include "temp_tree.h"

// Boost's operator<< for result<T> would need one for Response; failures print this instead.
template <>
struct Catch::StringMaker<koord::Result<koord::http::Response>> {
  static std::string convert(const koord::Result<koord::http::Response>& r) {
    if (!r)
      return "error: " + r.error().message();
    return "HTTP " + std::to_string(r->status) + " body=" + r->body.substr(0, 200);
  }
};

namespace koord::http::testing {

using namespace std::chrono_literals;
using SteadyClock = std::chrono::steady_clock;

/// Runs an io_context on `n` threads; joins them on destruction after letting queued work
/// (connection closes, acceptor shutdown) drain for a moment.
class IoThreads {
 public:
  explicit IoThreads(int n = 2) : work_(boost::asio::make_work_guard(io)) {
    for (int i = 0; i < n; ++i) {
      ++running_;
      threads_.emplace_back([this] {
        io.run();
        --running_;
      });
    }
  }
  ~IoThreads() {
    work_.reset();
    auto deadline = SteadyClock::now() + 3s;
    while (running_.load() > 0 && SteadyClock::now() < deadline)
      std::this_thread::sleep_for(5ms);
    io.stop();
    for (auto& t : threads_)
      t.join();
  }
  IoThreads(const IoThreads&) = delete;
  IoThreads& operator=(const IoThreads&) = delete;

  boost::asio::io_context io;

 private:
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_;
  std::atomic<int> running_{0};
  std::vector<std::thread> threads_;
};

inline void writeOrThrow(const std::string& path, const std::string& content) {
  auto r = writeFileAtomic(path, content, 0600);
  if (!r)
    throw std::runtime_error("writing " + path + ": " + r.error().message());
}

/// A CA and a serving certificate for 127.0.0.1 / localhost.
struct Pki {
  KeyPair ca;
  KeyPair serving;

  static Pki make(const std::string& ca_name) {
    Pki p;
    p.ca = generateCA(ca_name, std::chrono::hours(24));
    p.serving = generateServingCert(p.ca, "koord-test", {"localhost"}, {"127.0.0.1", "::1"},
                                    std::chrono::hours(24));
    return p;
  }
};

/// Key generation dominates TLS test time; each named PKI is made once per process.
inline const Pki& sharedPki(const std::string& ca_name) {
  static std::mutex mu;
  static std::map<std::string, Pki> cache;
  std::lock_guard lock(mu);
  auto it = cache.find(ca_name);
  if (it == cache.end())
    it = cache.emplace(ca_name, Pki::make(ca_name)).first;
  return it->second;
}

/// A blocking loopback TCP socket, for clients the real Client would never be.
class RawSocket {
 public:
  explicit RawSocket(std::uint16_t port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd_ < 0)
      throw std::runtime_error("socket failed");
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
      ::close(fd_);
      throw std::runtime_error("connect failed");
    }
    int one = 1;
    ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  }
  ~RawSocket() { ::close(fd_); }
  RawSocket(const RawSocket&) = delete;
  RawSocket& operator=(const RawSocket&) = delete;

  /// False once the peer has closed or reset the connection.
  bool send(std::string_view data) {
    while (!data.empty()) {
      ssize_t n = ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
      if (n <= 0)
        return false;
      data.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
  }

  /// Reads until `until` has been seen, the peer closes, or `timeout` passes.
  std::string read(std::chrono::milliseconds timeout, std::string_view until = {}) {
    auto deadline = SteadyClock::now() + timeout;
    while (!closed_) {
      if (!until.empty() && buffer_.find(until) != std::string::npos)
        break;
      auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - SteadyClock::now());
      if (left.count() <= 0)
        break;
      readOnce(left);
    }
    return buffer_;
  }

  /// Reads one response with a Content-Length body; returns it whole, or what arrived.
  std::string readResponse(std::chrono::milliseconds timeout = 2s) {
    auto deadline = SteadyClock::now() + timeout;
    read(timeout, "\r\n\r\n");
    auto header_end = buffer_.find("\r\n\r\n");
    if (header_end == std::string::npos)
      return take(buffer_.size());
    std::size_t length = 0;
    auto pos = buffer_.find("Content-Length: ");
    if (pos != std::string::npos && pos < header_end)
      length = std::stoul(buffer_.substr(pos + 16));
    std::size_t total = header_end + 4 + length;
    while (buffer_.size() < total && !closed_ && SteadyClock::now() < deadline) {
      readOnce(
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - SteadyClock::now()));
    }
    return take(std::min(total, buffer_.size()));
  }

  /// True if the peer closed (or reset) within `timeout`; data it sent first is kept.
  bool waitClosed(std::chrono::milliseconds timeout) {
    auto deadline = SteadyClock::now() + timeout;
    while (!closed_) {
      auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - SteadyClock::now());
      if (left.count() <= 0)
        return false;
      readOnce(left);
    }
    return true;
  }

  bool closed() const { return closed_; }

 private:
  void readOnce(std::chrono::milliseconds timeout) {
    pollfd p{fd_, POLLIN, 0};
    int r = ::poll(&p, 1, static_cast<int>(std::max<long>(timeout.count(), 1)));
    if (r <= 0)
      return;
    char buf[4096];
    ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
    if (n <= 0) {
      closed_ = true;
      return;
    }
    buffer_.append(buf, static_cast<std::size_t>(n));
  }

  std::string take(std::size_t n) {
    std::string out = buffer_.substr(0, n);
    buffer_.erase(0, n);
    return out;
  }

  int fd_ = -1;
  bool closed_ = false;
  std::string buffer_;
};

inline std::string url(std::uint16_t port, std::string_view path, bool tls = false) {
  return std::string(tls ? "https" : "http") + "://127.0.0.1:" + std::to_string(port) +
         std::string(path);
}

/// A server bound to an ephemeral loopback port, named for its metrics and logs.
inline ServerOptions localOptions(std::string name) {
  ServerOptions o;
  o.address = "127.0.0.1:0";
  o.name = std::move(name);
  return o;
}

/// A plain GET with a 5 s deadline.
inline ClientRequest get(std::uint16_t port, std::string_view path) {
  ClientRequest r;
  r.url = url(port, path);
  r.timeout = std::chrono::seconds(5);
  return r;
}

/// A listening TCP socket on 127.0.0.1 with an ephemeral port, for hand-written test servers.
/// Returns the fd and sets `port`; throws naming `who` if the socket cannot listen.
inline int listenOnLoopback(std::uint16_t& port, std::string_view who) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::listen(fd, 8) != 0) {
    if (fd >= 0)
      ::close(fd);
    throw std::runtime_error(std::string(who) + ": listen failed");
  }
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  port = ntohs(addr.sin_port);
  return fd;
}

}  // namespace koord::http::testing
