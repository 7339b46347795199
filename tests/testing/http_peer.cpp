#include "http_peer.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <stdexcept>
#include <string_view>

namespace koord::testing {

namespace {

bool sendAll(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n <= 0)
      return false;
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

std::string lower(std::string s) {
  for (auto& c : s)
    c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return s;
}

// The value of header `name` (lower case) in `head`, "" when absent.
std::string header(const std::string& head, const std::string& name) {
  const std::string l = lower(head);
  auto at = l.find("\r\n" + name + ":");
  if (at == std::string::npos)
    return "";
  at += name.size() + 3;
  auto end = l.find("\r\n", at);
  std::string v = head.substr(at, end - at);
  v.erase(0, v.find_first_not_of(' '));
  return v;
}

}  // namespace

std::string queryParam(const std::string& query, const std::string& key) {
  std::size_t at = 0;
  while (at <= query.size()) {
    auto end = query.find('&', at);
    if (end == std::string::npos)
      end = query.size();
    std::string_view pair(query.data() + at, end - at);
    if (pair.size() > key.size() && pair.substr(0, key.size()) == key && pair[key.size()] == '=')
      return std::string(pair.substr(key.size() + 1));
    at = end + 1;
  }
  return "";
}

HttpPeer::HttpPeer(Handler handler) : handler_(std::move(handler)) {
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (listen_fd_ < 0 || ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      ::listen(listen_fd_, 64) != 0 ||
      ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    if (listen_fd_ >= 0)
      ::close(listen_fd_);
    throw std::runtime_error("HttpPeer: cannot listen on 127.0.0.1");
  }
  port_ = ntohs(a.sin_port);
  acceptor_ = std::thread([this] { acceptLoop(); });
}

HttpPeer::~HttpPeer() {
  stop_ = true;
  acceptor_.join();
  std::vector<std::thread> threads;
  {
    std::lock_guard lock(mu_);
    // Wakes a connection thread blocked reading; it closes its own fd.
    for (int fd : fds_)
      ::shutdown(fd, SHUT_RDWR);
    threads = std::move(connections_);
  }
  for (auto& t : threads)
    t.join();
  ::close(listen_fd_);
}

std::string HttpPeer::url() const {
  return "http://127.0.0.1:" + std::to_string(port_);
}

void HttpPeer::acceptLoop() {
  while (!stop_) {
    pollfd p{listen_fd_, POLLIN, 0};
    if (::poll(&p, 1, 20) <= 0)
      continue;
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0)
      continue;
    std::lock_guard lock(mu_);
    fds_.push_back(fd);
    connections_.emplace_back([this, fd] { serve(fd); });
  }
}

void HttpPeer::serve(int fd) {
  std::string buffer;
  PeerRequest request;
  while (!stop_ && readRequest(fd, buffer, request)) {
    PeerReply reply = handler_(request);
    bool ok;
    if (reply.next_chunk) {
      ok = stream(fd, reply);
    } else {
      ok = sendAll(fd, "HTTP/1.1 " + std::to_string(reply.status) +
                           " X\r\nContent-Type: application/json\r\nContent-Length: " +
                           std::to_string(reply.body.size()) + "\r\n\r\n" + reply.body);
    }
    if (!ok)
      break;
  }
  std::lock_guard lock(mu_);
  std::erase(fds_, fd);
  ::close(fd);
}

bool HttpPeer::readRequest(int fd, std::string& buffer, PeerRequest& request) {
  for (;;) {
    auto head_end = buffer.find("\r\n\r\n");
    if (head_end != std::string::npos) {
      const std::string head = buffer.substr(0, head_end + 2);
      const std::string length = header(head, "content-length");
      const std::size_t body = length.empty() ? 0 : std::stoul(length);
      if (buffer.size() >= head_end + 4 + body) {
        auto sp1 = head.find(' ');
        auto sp2 = head.find(' ', sp1 + 1);
        request.method = head.substr(0, sp1);
        request.target = head.substr(sp1 + 1, sp2 - sp1 - 1);
        auto q = request.target.find('?');
        request.path = request.target.substr(0, q);
        request.query = q == std::string::npos ? "" : request.target.substr(q + 1);
        request.body = buffer.substr(head_end + 4, body);
        buffer.erase(0, head_end + 4 + body);
        return true;
      }
    }
    char chunk[16384];
    ssize_t n = ::recv(fd, chunk, sizeof chunk, 0);
    if (n <= 0)
      return false;
    buffer.append(chunk, static_cast<std::size_t>(n));
  }
}

bool HttpPeer::stream(int fd, const PeerReply& reply) {
  if (!sendAll(fd,
               "HTTP/1.1 " + std::to_string(reply.status) +
                   " X\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"))
    return false;
  while (!stop_) {
    auto next = reply.next_chunk();
    if (!next)
      return sendAll(fd, "0\r\n\r\n");
    if (next->empty()) {
      // The client cancels a stream by closing the connection: it is readable at EOF.
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, 0) > 0)
        return false;
      continue;
    }
    char size[32];
    std::snprintf(size, sizeof size, "%zx\r\n", next->size());
    if (!sendAll(fd, size + *next + "\r\n"))
      return false;
  }
  return false;
}

}  // namespace koord::testing
