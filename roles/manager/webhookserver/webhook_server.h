// The HTTPS server the apiserver calls for admission: one path per webhook, POST only, bounded
// bodies and deadlines, latency and outcome metrics per path.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

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
  /// An AdmissionReview carries the object and, on UPDATE, the old one: 2 x the apiserver's
  /// 3 MiB request limit plus envelope. Larger bodies get 413 without being read.
  std::size_t body_limit = 7u << 20;
  /// Under the apiserver's 10 s default webhook timeout, so a stuck request ends here first.
  std::chrono::milliseconds request_deadline{8000};
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
  std::unique_ptr<http::Server> server_;
};

}  // namespace koord::roles::manager
