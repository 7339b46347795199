#include "webhook_runtime.h"

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

#include <atomic>
#include <condition_variable>
#include <future>

#include "koord/core/log.h"
#include "koord/core/metrics.h"
#include "koord/http/cert.h"
#include "koord/http/file_util.h"
#include "koord/kube/watch.h"

namespace koord::roles::manager {

struct WebhookRuntime::Wakeup {
  std::mutex mu;
  std::condition_variable cv;
  bool stopping = false;
  bool changed = false;

  void set(bool WebhookRuntime::Wakeup::*flag) {
    {
      std::lock_guard lock(mu);
      this->*flag = true;
    }
    cv.notify_all();
  }
};

struct WebhookRuntime::Watch {
  kube::ResourceRef ref;
  std::string name;
  std::unique_ptr<kube::Watcher> watcher;
  // Set by the watch's error callback on an io thread when it has ended for good.
  std::shared_ptr<std::atomic<int>> ended_with;
  bool warned = false;
};

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
      metrics_(std::make_unique<Metrics>(registry)),
      wakeup_(std::make_shared<Wakeup>()) {
  options_.server.cert_file = provisioner_.certFile();
  options_.server.key_file = provisioner_.keyFile();
  options_.configurations.served_paths.clear();
  for (const auto& [path, h] : handlers_)
    options_.configurations.served_paths.insert(path);
  server_ = std::make_unique<WebhookServer>(io_, options_.server, registry);
  for (const auto& [path, h] : handlers_)
    server_->handle(path, h);
  auto watch = [this](kube::ResourceRef ref, const std::string& name) {
    Watch w;
    w.ref = std::move(ref);
    w.name = name;
    watches_.push_back(std::move(w));
  };
  const auto& certs = options_.certs;
  const auto& configs = options_.configurations;
  watch({"", "v1", "secrets", certs.namespace_, "", ""}, certs.secret_name);
  watch({"", "v1", "secrets", certs.namespace_, "", ""}, caSecretName(certs));
  watch({"admissionregistration.k8s.io", "v1", "mutatingwebhookconfigurations", "", "", ""},
        configs.mutating_name);
  watch({"admissionregistration.k8s.io", "v1", "validatingwebhookconfigurations", "", "", ""},
        configs.validating_name);
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
  wakeup_->set(&Wakeup::stopping);
  {
    std::lock_guard lock(watch_mu_);
    for (auto& w : watches_) {
      if (w.watcher)
        w.watcher->stop();
    }
  }
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

void WebhookRuntime::ensureWatches() {
  std::lock_guard lock(watch_mu_);
  for (auto& w : watches_) {
    if (w.watcher && w.ended_with->load() == 0)
      continue;
    if (w.watcher) {
      const int code = w.ended_with->load();
      // RBAC that predates the watch (list/watch by name) leaves the periodic pass alone; that
      // is worth saying once, not every pass.
      if (code == 403 && !w.warned) {
        KOORD_LOG_WARNING(
            "webhook certs: watching {} {} is forbidden; changes to it are noticed within {} s",
            w.ref.resource, w.name, options_.resync.count() / 1000);
        w.warned = true;
      }
    }
    {
      std::lock_guard stop_lock(mu_);
      if (stopping_)
        return;
    }
    kube::WatchOptions wo;
    wo.field_selector = "metadata.name=" + w.name;
    w.ended_with = std::make_shared<std::atomic<int>>(0);
    auto wakeup = wakeup_;
    auto ended = w.ended_with;
    w.watcher = std::make_unique<kube::Watcher>(
        client_, io_, w.ref, std::move(wo),
        [wakeup](const kube::WatchEvent&) { wakeup->set(&Wakeup::changed); },
        [wakeup, ended](const kube::ApiError& e) {
          ended->store(e.code == 0 ? -1 : e.code);
          // An expired resourceVersion: the next pass starts the watch again, which lists.
          if (e.code == 410)
            wakeup->set(&Wakeup::changed);
        });
    w.watcher->start();
  }
}

void WebhookRuntime::loop(std::function<void()> on_serving) {
  bool announced = false;
  for (;;) {
    ensureWatches();
    bool ok = passOnce(announced, on_serving);
    metrics_->passes.with({ok ? "success" : "error"}).inc();
    const auto done = std::chrono::steady_clock::now();
    std::unique_lock lock(wakeup_->mu);
    auto& w = *wakeup_;
    if (w.cv.wait_until(lock, done + options_.min_interval, [&w] { return w.stopping; }))
      return;
    w.cv.wait_until(lock, done + (ok ? options_.resync : options_.retry),
                    [&w] { return w.stopping || w.changed; });
    if (w.stopping)
      return;
    if (w.changed)
      KOORD_VLOG(2, "webhook certs: a watched Secret or configuration changed; checking now");
    w.changed = false;
  }
}

}  // namespace koord::roles::manager
