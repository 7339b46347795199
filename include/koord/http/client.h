// koord's HTTP/1.1 client (Kubernetes API, webhooks, peers): a keep-alive connection pool per
// scheme+host+port, deadlines on every request, and TLS with server and optional client certs.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include <boost/system/error_code.hpp>

#include "koord/core/result.h"
#include "koord/http/message.h"

namespace boost::asio {
class io_context;
}

namespace koord::http {

namespace detail {
struct ClientState;
struct StreamControl;
}  // namespace detail

/// Stops a Client::stream() from any thread. Copyable; a default-constructed one does nothing.
class StreamHandle {
 public:
  StreamHandle() = default;
  explicit StreamHandle(std::shared_ptr<detail::StreamControl> control)
      : control_(std::move(control)) {}
  /// Thread-safe and idempotent. The socket is closed on its strand, so a callback already under
  /// way (or about to start) may still run once; then on_done gets net::error::operation_aborted.
  void cancel() const;

 private:
  std::shared_ptr<detail::StreamControl> control_;
};

struct ClientOptions {
  /// Trusted CAs for https (file and/or PEM text); the system store when both are empty.
  std::string ca_file;
  std::string ca_pem;
  /// Optional client certificate, from files or PEM text.
  std::string client_cert_file, client_key_file;
  std::string client_cert_pem, client_key_pem;
  bool insecure_skip_verify = false;
  /// Overrides the name sent as SNI and checked against the server's certificate.
  std::string server_name;
  std::size_t max_idle_per_host = 8;
  /// Connections (in use or idle, streams not counted) to one host at most; requests beyond it
  /// wait for one to come free. 0: no cap.
  std::size_t max_conns_per_host = 0;
  std::chrono::milliseconds connect_timeout{10000};  // resolve + connect + TLS handshake
  std::chrono::milliseconds request_timeout{30000};  // whole request, connect included
  std::chrono::milliseconds idle_timeout{90000};     // pooled connections older than this close
  std::size_t response_body_limit = 64 << 20;
  std::string user_agent = "koord";
};

struct ClientRequest {
  std::string method = "GET";
  std::string url;  // http:// or https://
  Headers headers;
  std::string body;
  std::chrono::milliseconds timeout{0};  // 0 = ClientOptions::request_timeout
};

/// Errors: koord::Errc::kTimeout when a deadline passes, kTlsVerifyFailed when the server's
/// certificate is not trusted or does not name the host, kBodyTooLarge, kBadResponse for
/// unparsable responses, kInvalidArgument for bad URLs; otherwise the socket's or TLS's own
/// error code. An HTTP error status is a successful Result; check Response::status.
///
/// A request that finds its pooled connection closed by the server is retried once on a new
/// connection when nothing of it reached the server, or when its method is idempotent and the
/// connection died before any response byte (the server's idle close crossed our write).
///
/// Streaming responses (Kubernetes watch) use stream(): the same connection setup and TLS as
/// send(), but on a dedicated connection that never returns to the pool.
class Client {
 public:
  /// Throws std::runtime_error when the CA or client certificate cannot be loaded.
  Client(boost::asio::io_context& io, ClientOptions options);
  /// Closes idle connections; requests in flight still complete and call their callbacks.
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  /// Thread-safe. `done` runs once, on one of the io_context's threads.
  void send(ClientRequest request, std::function<void(Result<Response>)> done);
  /// Blocks until the response arrives. Must not be called on the io_context's own threads
  /// (it would wait on itself); doing so returns Errc::kInvalidArgument.
  Result<Response> sendSync(ClientRequest request);

  /// Sends `request` on a new connection and hands the response body over as it arrives
  /// (chunked encoding already decoded). Connect + write + response header are bounded by
  /// request.timeout (or ClientOptions::request_timeout); the body has no overall deadline, only
  /// `idle_timeout` between reads when it is non-zero, because a watch legitimately stays open for
  /// minutes. Callbacks run serially on the connection's strand. on_headers or on_data returning
  /// false ends the stream like cancel(). `on_done` runs exactly once: success when the server
  /// ended the body, operation_aborted after cancel or a false return, otherwise the error as
  /// send() reports it (kTimeout when idle_timeout passes).
  StreamHandle stream(ClientRequest request,
                      std::function<bool(int status, const Headers& headers)> on_headers,
                      std::function<bool(std::string_view chunk)> on_data,
                      std::function<void(boost::system::error_code)> on_done,
                      std::chrono::milliseconds idle_timeout = std::chrono::milliseconds(0));

  /// Closes the pooled idle connections and pools none from now on (requests still work, their
  /// connections close after use). For graceful shutdown: an idle keep-alive connection is work
  /// in flight to the io_context, which would otherwise wait for it until its deadline.
  void closeIdleConnections();

  /// For tests and debugging.
  std::size_t idleConnections() const;
  std::size_t connectionsOpened() const;

 private:
  std::shared_ptr<detail::ClientState> state_;
};

}  // namespace koord::http
