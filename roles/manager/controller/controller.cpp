#include "controller.h"

#include <algorithm>

#include "koord/core/log.h"
#include "koord/core/metrics.h"

namespace koord::roles::manager {

// controller-runtime's names, so the dashboards built for Koordinator's manager keep working.
struct Controller::Metrics {
  metrics::Counter& success;
  metrics::Counter& error;
  metrics::Counter& requeue_after;
  metrics::Histogram& duration;
  metrics::Gauge& active_workers;

  Metrics(metrics::Registry& r, const std::string& name)
      : success(r.counter("controller_runtime_reconcile_total",
                          "Total number of reconciliations per controller",
                          {"controller", "result"})
                    .with({name, "success"})),
        error(r.counter("controller_runtime_reconcile_total",
                        "Total number of reconciliations per controller", {"controller", "result"})
                  .with({name, "error"})),
        requeue_after(r.counter("controller_runtime_reconcile_total",
                                "Total number of reconciliations per controller",
                                {"controller", "result"})
                          .with({name, "requeue_after"})),
        duration(r.histogram("controller_runtime_reconcile_time_seconds",
                             "Length of time per reconciliation per controller", {"controller"},
                             metrics::exponentialBuckets(0.0001, 2, 18))
                     .with({name})),
        active_workers(r.gauge("controller_runtime_active_workers",
                               "Number of currently used workers per controller", {"controller"})
                           .with({name})) {}
};

Controller::Controller(std::string name, Reconcile reconcile, int workers,
                       metrics::Registry& registry)
    : name_(std::move(name)),
      reconcile_(std::move(reconcile)),
      workers_(std::max(1, workers)),
      // client-go's workqueue_* series, named after the controller as controller-runtime does.
      queue_(kube::defaultControllerRateLimiter(), kube::workQueueMetrics(registry, name_)),
      metrics_(std::make_unique<Metrics>(registry, name_)) {}

Controller::~Controller() {
  stop();
}

void Controller::enqueue(const std::string& key) {
  queue_.add(key);
}

void Controller::enqueueAfter(const std::string& key, std::chrono::nanoseconds delay) {
  queue_.addAfter(key, delay);
}

void Controller::start() {
  if (!threads_.empty())
    return;
  KOORD_LOG_INFO("controller {}: starting {} worker(s)", name_, workers_);
  for (int i = 0; i < workers_; ++i)
    threads_.emplace_back([this] { work(); });
}

void Controller::stop() {
  queue_.shutDown();
  for (auto& t : threads_) {
    if (t.joinable())
      t.join();
  }
  threads_.clear();
}

void Controller::work() {
  while (auto key = queue_.get()) {
    metrics_->active_workers.add(1);
    auto start = std::chrono::steady_clock::now();
    ReconcileResult result;
    try {
      result = reconcile_(*key);
    } catch (const std::exception& e) {
      // A reconcile must not take the worker down with it; the key is retried like any failure.
      result = ReconcileResult::fail(std::string("unexpected exception: ") + e.what());
    }
    metrics_->duration.observe(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    metrics_->active_workers.add(-1);
    if (result.failed) {
      metrics_->error.inc();
      KOORD_LOG_ERROR("controller {}: reconcile {} failed (retry {}): {}", name_, *key,
                      queue_.numRequeues(*key) + 1, result.error);
      queue_.addRateLimited(*key);
    } else {
      queue_.forget(*key);
      if (result.requeue_after.count() > 0) {
        metrics_->requeue_after.inc();
        queue_.addAfter(*key, result.requeue_after);
      } else {
        metrics_->success.inc();
      }
    }
    queue_.done(*key);
  }
}

}  // namespace koord::roles::manager
