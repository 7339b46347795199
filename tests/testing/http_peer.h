// A loopback HTTP/1.1 peer for the unit tests of koord's API clients (informer, event recorder,
// leader election, watcher): every connection on a thread of its own, answers whole or streamed.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace koord::testing {

struct PeerRequest {
  std::string method;
  std::string target;  // "/api/v1/...?watch=true"
  std::string path;    // the target up to '?'
  std::string query;   // after '?', still percent-encoded
  std::string body;
};

/// The query parameter `key` of `query` ("" when absent); values are returned undecoded.
std::string queryParam(const std::string& query, const std::string& key);

struct PeerReply {
  int status = 200;
  std::string body;
  /// Set for a streamed answer (a watch): the body goes out chunked, each call's text as it
  /// comes. "" means nothing yet (the peer checks whether the client left and asks again; the
  /// function should wait a little first), nullopt ends the stream.
  std::function<std::optional<std::string>()> next_chunk;
};

/// Listens on 127.0.0.1 and hands each request to `handler` on the connection's thread, so a
/// handler may block (a held-open watch) without holding up other requests. Keep-alive as the
/// client asks; bodies are read by Content-Length.
class HttpPeer {
 public:
  using Handler = std::function<PeerReply(const PeerRequest&)>;

  explicit HttpPeer(Handler handler);
  /// Closes every connection and joins their threads: streams end, handlers must return.
  ~HttpPeer();
  HttpPeer(const HttpPeer&) = delete;
  HttpPeer& operator=(const HttpPeer&) = delete;

  std::string url() const;

 private:
  void acceptLoop();
  void serve(int fd);
  bool readRequest(int fd, std::string& buffer, PeerRequest& request);
  bool stream(int fd, const PeerReply& reply);

  Handler handler_;
  int listen_fd_ = -1;
  std::uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::vector<int> fds_;                  // under mu_: open connections
  std::vector<std::thread> connections_;  // under mu_
  std::thread acceptor_;
};

}  // namespace koord::testing
