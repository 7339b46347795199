// kube-scheduler 1.20's metrics under their upstream names (scheduler_*), so existing dashboards
// read koord-scheduler unchanged: attempts by result, e2e and algorithm latency, queue sizes.
#pragma once

#include <string_view>

#include "queue/queue_event.h"

namespace koord::metrics {
class Registry;
class Histogram;
template <typename T>
class Family;
class Counter;
class Gauge;
}  // namespace koord::metrics

namespace koord::roles::scheduler {

struct QueueSizes;
struct CacheCounts;

/// The `result` label of scheduler_schedule_attempts_total and the e2e histogram.
enum class AttemptResult { kScheduled, kUnschedulable, kError };

class SchedulerMetrics {
 public:
  explicit SchedulerMetrics(metrics::Registry& registry);

  /// One scheduling attempt ended: counted, and its e2e latency (pop to bound, or to the
  /// failure) observed, by result and profile.
  void attempt(AttemptResult result, std::string_view profile, double e2e_seconds);
  void algorithmDuration(double seconds);
  void bindingDuration(double seconds);
  /// A pod was bound: its attempts and the time since it was first queued.
  void podScheduled(int attempts, double since_first_queued_seconds);
  void preemptionAttempt();
  void incomingPod(std::string_view queue, QueueEvent event);
  void queueSizes(const QueueSizes& sizes);
  void cacheSizes(const CacheCounts& counts);

 private:
  metrics::Family<metrics::Counter>& attempts_;
  metrics::Family<metrics::Histogram>& e2e_;
  metrics::Family<metrics::Histogram>& algorithm_;
  metrics::Family<metrics::Histogram>& binding_;
  metrics::Family<metrics::Histogram>& pod_attempts_;
  metrics::Family<metrics::Histogram>& pod_duration_;
  metrics::Family<metrics::Counter>& preemption_attempts_;
  metrics::Family<metrics::Counter>& incoming_;
  metrics::Family<metrics::Gauge>& pending_;
  metrics::Family<metrics::Gauge>& cache_size_;
};

}  // namespace koord::roles::scheduler
