// kube-scheduler 1.20's metrics under their upstream names (scheduler_*), so existing dashboards
// read koord-scheduler unchanged: attempts by result, e2e and algorithm latency, queue sizes.
#pragma once

#include <string_view>
#include <utility>
#include <vector>

#include "framework/status.h"
#include "framework/waiting_pods.h"
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
  /// A pod held at Permit was decided: scheduler_permit_wait_duration_seconds{result} with
  /// result allowed, rejected or timeout.
  void permitWaitDuration(const Status& decided, double seconds);
  /// A pod was bound: its attempts and the time since it was first queued.
  void podScheduled(int attempts, double since_first_queued_seconds);
  void preemptionAttempt();
  void incomingPod(std::string_view queue, QueueEvent event);
  /// A pod entered (+1) or left (-1) unschedulableQ: scheduler_unschedulable_pods{plugin,
  /// profile} for each plugin that refused it.
  void unschedulablePods(const std::vector<std::string>& plugins, std::string_view profile,
                         int delta);
  void queueSizes(const QueueSizes& sizes);
  void cacheSizes(const CacheCounts& counts);

  // Reservations.
  /// A Reservation was bound: counted, and the time since its reserve pod was first queued.
  void reservationScheduled(double since_first_queued_seconds);
  void reservationUnschedulable();
  /// Koordinator's scheduler_reservation_status_phase{name, phase}: 1 for each reservation's
  /// current phase; `phase` empty drops the reservation's series.
  void reservationPhase(std::string_view name, std::string_view old_phase, std::string_view phase);
  /// koord_scheduler_reservations{phase}: how many reservations are in each phase.
  void reservationCounts(const std::vector<std::pair<std::string_view, std::size_t>>& counts);

 private:
  metrics::Family<metrics::Counter>& attempts_;
  metrics::Family<metrics::Histogram>& e2e_;
  metrics::Family<metrics::Histogram>& attempt_duration_;
  metrics::Family<metrics::Histogram>& algorithm_;
  metrics::Family<metrics::Histogram>& binding_;
  metrics::Family<metrics::Histogram>& permit_wait_;
  metrics::Family<metrics::Histogram>& pod_attempts_;
  metrics::Family<metrics::Histogram>& pod_duration_;
  metrics::Family<metrics::Counter>& preemption_attempts_;
  metrics::Family<metrics::Counter>& incoming_;
  metrics::Family<metrics::Gauge>& pending_;
  metrics::Family<metrics::Gauge>& unschedulable_;
  metrics::Family<metrics::Gauge>& cache_size_;
  metrics::Family<metrics::Counter>& reservation_attempts_;
  metrics::Family<metrics::Histogram>& reservation_duration_;
  metrics::Family<metrics::Gauge>& reservation_phase_;
  metrics::Family<metrics::Gauge>& reservations_;
};

}  // namespace koord::roles::scheduler
