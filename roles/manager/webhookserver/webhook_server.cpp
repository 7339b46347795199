#include "webhook_server.h"

#include <fmt/format.h>

#include <atomic>

#include "admission_workers.h"
#include "koord/core/log.h"
#include "koord/core/metrics.h"
#include "koord/http/server.h"

namespace koord::roles::manager {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

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

namespace {

// One path's handler and metrics, shared by the server's handler and the tasks it queues, since
// a queued task may outlive the connection (and the server) that queued it.
struct Route {
  Route(std::string p, AdmissionHandler h, metrics::Histogram& l, metrics::HistogramFamily& d,
        metrics::CounterFamily& r, std::chrono::milliseconds dl)
      : path(std::move(p)),
        handler(std::move(h)),
        latency(l),
        durations(d),
        requests(r),
        deadline(dl) {}

  const std::string path;
  const AdmissionHandler handler;
  metrics::Histogram& latency;
  metrics::HistogramFamily& durations;
  metrics::CounterFamily& requests;
  const std::chrono::milliseconds deadline;
  // Overload warnings come in floods; one every few seconds says enough.
  mutable std::atomic<Clock::rep> last_overload_warning{0};

  bool shouldWarnOverload() const {
    auto now = Clock::now().time_since_epoch().count();
    auto last = last_overload_warning.load();
    if (last != 0 && now - last < std::chrono::duration_cast<Clock::duration>(10s).count())
      return false;
    return last_overload_warning.compare_exchange_strong(last, now);
  }

  void answer(AdmissionAnswer a, Clock::time_point start, const std::string& remote,
              const std::function<void(http::Response)>& done) const {
    double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    latency.observe(seconds);
    durations.with({path, a.outcome}).observe(seconds);
    requests.with({path, std::to_string(a.status)}).inc();
    if (a.status >= 400)
      KOORD_LOG_WARNING("webhook {}: {} from {}: {}", path, a.status, remote,
                        a.body.substr(0, 300));
    done(a.status == 200 ? http::json(200, std::move(a.body))
                         : http::text(a.status, std::move(a.body)));
  }

  // On a worker thread. A review that waited out its deadline in the queue has had the
  // server's 503 already; running it would only delay the reviews behind it.
  void run(const http::Request& req, Clock::time_point start,
           const std::function<void(http::Response)>& done) const {
    if (Clock::now() - start >= deadline) {
      if (shouldWarnOverload()) {
        KOORD_LOG_WARNING("webhook {}: review from {} waited {}ms for a worker; not run", path,
                          req.remote, deadline.count());
      }
      requests.with({path, "503"}).inc();
      done(http::text(503, "no admission worker in time\n"));
      return;
    }
    answer(handler(req.body), start, req.remote, done);
  }
};

}  // namespace

WebhookServer::WebhookServer(boost::asio::io_context& io, WebhookServerOptions options,
                             metrics::Registry& registry)
    : metrics_(std::make_unique<Metrics>(registry)),
      workers_(std::make_shared<AdmissionWorkers>(options.workers, options.queue_limit)),
      request_deadline_(options.request_deadline) {
  http::ServerOptions so;
  so.address = options.address;
  so.body_limit = options.body_limit;
  so.max_body_bytes_in_flight = options.max_body_bytes_in_flight;
  so.max_connections = options.max_connections;
  so.request_deadline = options.request_deadline;
  so.name = "webhook";
  so.tls = http::TlsServerConfig{
      options.cert_file, options.key_file, options.client_ca_file, {}, options.client_common_names};
  server_ = std::make_unique<http::Server>(io, std::move(so));
}

WebhookServer::~WebhookServer() {
  // Reviews already queued still run (and answer, if their connection waits); later ones are
  // refused by the stopped queue.
  server_->stop();
  workers_->stop();
}

void WebhookServer::handle(const std::string& path, AdmissionHandler handler) {
  auto route =
      std::make_shared<const Route>(path, std::move(handler), metrics_->latency.with({path}),
                                    metrics_->duration, metrics_->requests, request_deadline_);
  server_->handleAsync(path, [route, workers = workers_](http::Request req,
                                                         std::function<void(http::Response)> done) {
    auto start = Clock::now();
    if (req.method != "POST") {
      return route->answer({405, fmt::format("{} accepts POST only", route->path), "bad_request"},
                           start, req.remote, done);
    }
    if (auto ct = req.header("Content-Type");
        !ct.empty() && ct.substr(0, ct.find(';')) != "application/json") {
      return route->answer(
          {415, fmt::format("Content-Type {} is not application/json", ct), "bad_request"}, start,
          req.remote, done);
    }
    std::string remote = req.remote;
    std::function<void()> task = [route, req = std::move(req), start, done]() {
      route->run(req, start, done);
    };
    if (!workers->post(task)) {
      if (route->shouldWarnOverload()) {
        KOORD_LOG_WARNING("webhook {}: every admission worker busy and the queue full; 503 to {}",
                          route->path, remote);
      }
      route->requests.with({route->path, "503"}).inc();
      http::Response busy = http::text(503, "admission workers busy, retry later\n");
      busy.headers.emplace_back("Retry-After", "1");
      done(std::move(busy));
    }
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
