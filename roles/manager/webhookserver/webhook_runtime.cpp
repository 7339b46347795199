#include "webhook_runtime.h"

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

#include <future>

#include "koord/core/log.h"
#include "koord/core/metrics.h"
#include "koord/http/cert.h"
#include "koord/http/file_util.h"

namespace koord::roles::manager {

struct WebhookRuntime::Metrics {
  metrics::Gauge& not_after;
  metrics::CounterFamily& passes;

  explicit Metrics(metrics::Registry& r)
      : not_after(r.gauge("koord_manager_webhook_cert_expiry_timestamp_seconds",
                          "notAfter of the webhook serving certificate, as a Unix time")
                      .with({})),
        passes(r.counter("koord_manager_webhook_cert_sync_total",
                         "Certificate and webhook configuration sync passes by result",
                         {"result"})) {}
};

WebhookRuntime::WebhookRuntime(kube::RestClient& client, boost::asio::io_context& io,
                               WebhookRuntimeOptions options,
                               std::map<std::string, AdmissionHandler> handlers,
                               metrics::Registry& registry)
    : client_(client),
      io_(io),
      options_(std::move(options)),
      handlers_(std::move(handlers)),
      provisioner_(client, options_.certs),
      metrics_(std::make_unique<Metrics>(registry)) {
  options_.server.cert_file = provisioner_.certFile();
  options_.server.key_file = provisioner_.keyFile();
  options_.configurations.served_paths.clear();
  for (const auto& [path, h] : handlers_)
    options_.configurations.served_paths.insert(path);
  server_ = std::make_unique<WebhookServer>(io_, options_.server, registry);
  for (const auto& [path, h] : handlers_)
    server_->handle(path, h);
}

WebhookRuntime::~WebhookRuntime() {
  stop();
}

void WebhookRuntime::start(std::function<void()> on_serving) {
  thread_ = std::thread([this, on_serving = std::move(on_serving)] { loop(on_serving); });
}

void WebhookRuntime::requestStop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  server_->stop();
}

void WebhookRuntime::stop() {
  requestStop();
  if (thread_.joinable())
    thread_.join();
}

std::uint16_t WebhookRuntime::port() const {
  std::lock_guard lock(mu_);
  return serving_ ? server_->port() : 0;
}

bool WebhookRuntime::startServerOnIo() {
  // The server binds and loads its certificate on an io thread, like every other socket of
  // the process; this thread only waits for the answer.
  auto started = std::make_shared<std::promise<std::string>>();
  auto answer = started->get_future();
  boost::asio::post(io_, [this, started] {
    try {
      server_->start();
      started->set_value("");
    } catch (const std::exception& e) {
      started->set_value(e.what());
    }
  });
  while (answer.wait_for(std::chrono::milliseconds(200)) != std::future_status::ready) {
    std::lock_guard lock(mu_);
    if (stopping_)
      return false;
  }
  std::string error = answer.get();
  if (!error.empty()) {
    KOORD_LOG_ERROR("webhook server: cannot start: {}", error);
    return false;
  }
  std::lock_guard lock(mu_);
  serving_ = true;
  return true;
}

bool WebhookRuntime::passOnce(bool& announced, const std::function<void()>& on_serving) {
  auto certs = provisioner_.ensure();
  if (!certs) {
    KOORD_LOG_ERROR("webhook certs: {}", certs.error().message);
    return false;
  }
  try {
    auto not_after = http::certNotAfter(http::readFile(provisioner_.certFile()).value());
    metrics_->not_after.set(static_cast<double>(
        std::chrono::duration_cast<std::chrono::seconds>(not_after.time_since_epoch()).count()));
  } catch (const std::exception& e) {
    KOORD_LOG_WARNING("webhook certs: reading {}: {}", provisioner_.certFile(), e.what());
  }
  bool serving;
  {
    std::lock_guard lock(mu_);
    serving = serving_;
  }
  if (!serving && !startServerOnIo())
    return false;
  // Only now: a configuration pointing at a server that does not answer yet would fail every
  // pod creation in the cluster (failurePolicy Fail).
  auto ensured = ensureWebhookConfigurations(client_, options_.configurations, certs->ca_pem);
  if (!ensured) {
    KOORD_LOG_ERROR("webhook configurations: {}", ensured.error().message);
    return false;
  }
  if (!announced) {
    announced = true;
    if (on_serving)
      on_serving();
  }
  return true;
}

void WebhookRuntime::loop(std::function<void()> on_serving) {
  bool announced = false;
  for (;;) {
    bool ok = passOnce(announced, on_serving);
    metrics_->passes.with({ok ? "success" : "error"}).inc();
    std::unique_lock lock(mu_);
    if (cv_.wait_for(lock, ok ? options_.resync : options_.retry, [this] { return stopping_; }))
      return;
  }
}

}  // namespace koord::roles::manager
