#include "webhook_server.h"

#include <fmt/format.h>

#include "koord/core/log.h"
#include "koord/core/metrics.h"
#include "koord/http/server.h"

namespace koord::roles::manager {

struct WebhookServer::Metrics {
  metrics::HistogramFamily& latency;
  metrics::CounterFamily& requests;
  metrics::HistogramFamily& duration;

  explicit Metrics(metrics::Registry& r)
      : latency(r.histogram("controller_runtime_webhook_latency_seconds",
                            "Histogram of the latency of processing admission requests",
                            {"webhook"}, metrics::exponentialBuckets(0.00005, 2, 18))),
        requests(r.counter("controller_runtime_webhook_requests_total",
                           "Total number of admission requests by HTTP status code",
                           {"webhook", "code"})),
        duration(r.histogram("koord_manager_webhook_duration_seconds",
                             "Admission latency by webhook path and outcome", {"path", "result"},
                             metrics::exponentialBuckets(0.00005, 2, 18))) {}
};

WebhookServer::WebhookServer(boost::asio::io_context& io, WebhookServerOptions options,
                             metrics::Registry& registry)
    : metrics_(std::make_unique<Metrics>(registry)) {
  http::ServerOptions so;
  so.address = options.address;
  so.body_limit = options.body_limit;
  so.request_deadline = options.request_deadline;
  so.name = "webhook";
  so.tls = http::TlsServerConfig{options.cert_file, options.key_file, "", {}};
  server_ = std::make_unique<http::Server>(io, std::move(so));
}

WebhookServer::~WebhookServer() = default;

void WebhookServer::handle(const std::string& path, AdmissionHandler handler) {
  auto& latency = metrics_->latency.with({path});
  auto& durations = metrics_->duration;
  auto& requests = metrics_->requests;
  server_->handle(path, [path, handler = std::move(handler), &latency, &durations,
                         &requests](const http::Request& req) {
    auto start = std::chrono::steady_clock::now();
    AdmissionAnswer answer;
    if (req.method != "POST") {
      answer = {405, fmt::format("{} accepts POST only", path), "bad_request"};
    } else if (auto ct = req.header("Content-Type");
               !ct.empty() && ct.substr(0, ct.find(';')) != "application/json") {
      answer = {415, fmt::format("Content-Type {} is not application/json", ct), "bad_request"};
    } else {
      answer = handler(req.body);
    }
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    latency.observe(seconds);
    durations.with({path, answer.outcome}).observe(seconds);
    requests.with({path, std::to_string(answer.status)}).inc();
    if (answer.status >= 400)
      KOORD_LOG_WARNING("webhook {}: {} from {}: {}", path, answer.status, req.remote,
                        answer.body.substr(0, 300));
    if (answer.status == 200)
      return http::json(200, std::move(answer.body));
    return http::text(answer.status, std::move(answer.body));
  });
}

void WebhookServer::start() {
  server_->start();
  KOORD_LOG_INFO("webhook server: serving admission on port {}", server_->port());
}

void WebhookServer::stop() {
  server_->stop();
}

std::uint16_t WebhookServer::port() const {
  return server_->port();
}

}  // namespace koord::roles::manager
