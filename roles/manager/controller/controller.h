// A controller as controller-runtime runs one: keys from informer events go into a rate-limited
// WorkQueue and worker threads reconcile them, with controller-runtime's metric names.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "koord/kube/work_queue.h"

namespace koord::metrics {
class Registry;
}

namespace koord::roles::manager {

/// What one reconcile asks for next.
struct ReconcileResult {
  /// A failure: the key is retried with the queue's per-item backoff.
  bool failed = false;
  /// Look again after this long even though nothing changed (0: only on the next event).
  std::chrono::nanoseconds requeue_after{0};
  /// For the log line of a failure.
  std::string error;

  static ReconcileResult done() { return {}; }
  static ReconcileResult after(std::chrono::nanoseconds d) { return {false, d, {}}; }
  static ReconcileResult fail(std::string why) { return {true, {}, std::move(why)}; }
};

/// Keys queued before start() wait for it; stop() drains nothing (a key being reconciled
/// finishes, queued ones are dropped: the next leader starts from a full resync).
class Controller {
 public:
  using Reconcile = std::function<ReconcileResult(const std::string& key)>;

  Controller(std::string name, Reconcile reconcile, int workers, metrics::Registry& registry);
  /// stop().
  ~Controller();
  Controller(const Controller&) = delete;
  Controller& operator=(const Controller&) = delete;

  const std::string& name() const { return name_; }
  /// Thread-safe; cheap enough for informer handlers.
  void enqueue(const std::string& key);
  void enqueueAfter(const std::string& key, std::chrono::nanoseconds delay);

  void start();
  /// Idempotent; joins the workers.
  void stop();

 private:
  void work();

  std::string name_;
  Reconcile reconcile_;
  int workers_;
  kube::WorkQueue queue_;
  std::vector<std::thread> threads_;
  struct Metrics;
  std::unique_ptr<Metrics> metrics_;
};

}  // namespace koord::roles::manager
