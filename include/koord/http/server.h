// koord's HTTP/1.1 server (webhooks, metrics, health probes): keep-alive, per-request deadlines,
// bounded bodies and connections, and TLS whose certificate is reloaded from disk while serving.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "koord/http/message.h"

namespace boost::asio {
class io_context;
}

namespace koord::http {

namespace detail {
struct ServerState;
}

struct TlsServerConfig {
  std::string cert_file;  // PEM chain, leaf first
  std::string key_file;
  /// When set, clients must present a certificate that chains to one of these CAs.
  std::string client_ca_file;
  /// How often, at most, new handshakes look at the files' mtime and size for a rotated cert.
  std::chrono::milliseconds reload_check{1000};
  /// With client_ca_file: when not empty, the client certificate's subject CN must also be one
  /// of these, so that a CA shared with other clients does not admit them all.
  std::vector<std::string> client_common_names{};
  /// In-memory PEM used instead of cert_file/key_file when set (a self-signed pair that lives
  /// only as long as the process); never reloaded.
  std::string cert_pem{};
  std::string key_pem{};
};

struct ServerOptions {
  /// "host:port"; ":port" listens on all interfaces; port 0 picks an ephemeral port.
  std::string address = ":8080";
  std::size_t body_limit = 1 << 20;
  /// The whole exchange: reading the request, the handler and writing the response. The first
  /// request on a connection counts from accept, so a silent client cannot hold a slot.
  std::chrono::milliseconds request_deadline{10000};
  /// How long a keep-alive connection may wait for its next request.
  std::chrono::milliseconds idle_timeout{60000};
  std::size_t max_connections = 1024;
  /// Request body bytes all connections together may hold: reserved from Content-Length before
  /// the body is read (as it is read, for chunked bodies) and given back when the response is
  /// written, or, for an async handler, when it drops the request and `done`. A request that
  /// would pass it gets 503 with Retry-After, its body unread. 0: no bound but body_limit per
  /// connection. start() refuses a bound below body_limit, which would refuse some bodies forever.
  std::size_t max_body_bytes_in_flight = 0;
  std::optional<TlsServerConfig> tls;
  /// The `server` label of this server's metrics and the prefix of its log lines.
  std::string name = "http";
};

/// Runs on the connection's strand; keep it short or use handleAsync.
using Handler = std::function<Response(const Request&)>;
/// `done` must be called exactly once, from any thread. If request_deadline passes first the
/// client gets a 503 and the late response is dropped.
using AsyncHandler = std::function<void(Request, std::function<void(Response)> done)>;

class Server {
 public:
  Server(boost::asio::io_context& io, ServerOptions options);
  /// Stops (as stop()); connections still running keep the internals alive until they finish.
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  /// Exact path match. Register before start(); registering later or twice throws logic_error.
  void handle(std::string path, Handler handler);
  void handleAsync(std::string path, AsyncHandler handler);

  /// Loads the TLS material, binds and listens. Throws std::runtime_error naming the address
  /// (or file) on failure.
  void start();
  /// The bound port; 0 before start().
  std::uint16_t port() const;
  /// Thread-safe and idempotent. Closes the acceptor and idle connections; requests in flight
  /// finish and their connections then close.
  void stop();

  /// For tests and debugging.
  std::size_t connectionsAccepted() const;
  std::size_t activeConnections() const;
  std::size_t bodyBytesInFlight() const;

 private:
  std::shared_ptr<detail::ServerState> state_;
};

}  // namespace koord::http
