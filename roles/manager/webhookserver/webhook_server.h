// The HTTPS server the apiserver calls for admission: one path per webhook, POST only, bounded
// bodies (each and together) and deadlines, handlers on worker threads, optionally only for
// callers with the apiserver's client certificate, latency and outcome metrics per path.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace boost::asio {
class io_context;
}
namespace koord::http {
class Server;
}
namespace koord::metrics {
class Registry;
}

namespace koord::roles::manager {

class AdmissionWorkers;

/// What an admission handler answers: the HTTP status, the response body (an AdmissionReview,
/// or a plain message for a 4xx), and the outcome label for metrics ("allowed", "patched",
/// "denied", "bad_request", "error").
struct AdmissionAnswer {
  int status = 200;
  std::string body;
  std::string outcome;
};

using AdmissionHandler = std::function<AdmissionAnswer(std::string_view body)>;

struct WebhookServerOptions {
  /// WEBHOOK_PORT, on all interfaces (the Service forwards to it).
  std::string address = ":9876";
  std::string cert_file;
  std::string key_file;
  /// --webhook-client-ca-file: when set, a caller must present a client certificate that
  /// chains to it (the apiserver's, configured in its AdmissionConfiguration).
  std::string client_ca_file;
  /// --webhook-client-cn: with client_ca_file, the certificate's CN must also be one of these.
  std::vector<std::string> client_common_names;
  /// An AdmissionReview carries the object and, on UPDATE, the old one: 2 x the apiserver's
  /// 3 MiB request limit plus envelope. Larger bodies get 413 without being read.
  std::size_t body_limit = 7u << 20;
  /// What all connections together may hold in request bodies: nine reviews of the largest
  /// size, thousands of ordinary pods. Past it, 503 with Retry-After and the body unread.
  std::size_t max_body_bytes_in_flight = 64u << 20;
  /// The apiservers' connection pools with room to spare; each idle TLS connection costs tens
  /// of KiB, so thousands of them from anyone who can reach the port would cost the manager.
  std::size_t max_connections = 256;
  /// Under the webhooks' timeoutSeconds (10 s), so that a review that overruns is answered
  /// 503 here, and the apiserver applies its failurePolicy, before the apiserver gives up.
  std::chrono::milliseconds request_deadline{8000};
  /// Threads that run the admission handlers, and how many reviews may wait for one; a review
  /// that finds the queue full gets 503 at once.
  std::size_t workers = 4;
  std::size_t queue_limit = 128;
};

class WebhookServer {
 public:
  WebhookServer(boost::asio::io_context& io, WebhookServerOptions options,
                metrics::Registry& registry);
  ~WebhookServer();
  WebhookServer(const WebhookServer&) = delete;
  WebhookServer& operator=(const WebhookServer&) = delete;

  /// Register before start().
  void handle(const std::string& path, AdmissionHandler handler);
  /// Throws std::runtime_error when the address cannot be bound or the certificate read.
  void start();
  void stop();
  std::uint16_t port() const;

 private:
  struct Metrics;
  std::unique_ptr<Metrics> metrics_;
  // Shared with the server's handlers, which a connection still in flight may call after this
  // object is gone; the destructor stops it first, so late calls find it refusing work.
  std::shared_ptr<AdmissionWorkers> workers_;
  std::chrono::milliseconds request_deadline_;
  std::unique_ptr<http::Server> server_;
};

}  // namespace koord::roles::manager
