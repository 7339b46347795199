#include "scheduler_metrics.h"

#include <string>

#include "cache/scheduler_cache.h"
#include "koord/core/metrics.h"
#include "queue/scheduling_queue.h"

namespace koord::roles::scheduler {

namespace {

std::string_view resultLabel(AttemptResult r) {
  switch (r) {
    case AttemptResult::kScheduled:
      return "scheduled";
    case AttemptResult::kUnschedulable:
      return "unschedulable";
    case AttemptResult::kError:
      return "error";
  }
  return "error";
}

}  // namespace

// Buckets as kube-scheduler 1.20 declares them, so histogram_quantile over both agrees.
SchedulerMetrics::SchedulerMetrics(metrics::Registry& r)
    : attempts_(r.counter("scheduler_schedule_attempts_total",
                          "Number of attempts to schedule pods, by the result. 'unschedulable' "
                          "means a pod could not be scheduled, while 'error' means an internal "
                          "scheduler problem.",
                          {"result", "profile"})),
      e2e_(r.histogram("scheduler_e2e_scheduling_duration_seconds",
                       "E2e scheduling latency in seconds (scheduling algorithm + binding)",
                       {"result", "profile"}, metrics::exponentialBuckets(0.001, 2, 15))),
      attempt_duration_(r.histogram("scheduler_scheduling_attempt_duration_seconds",
                                    "Scheduling attempt latency in seconds (scheduling algorithm "
                                    "+ binding)",
                                    {"result", "profile"},
                                    metrics::exponentialBuckets(0.001, 2, 15))),
      algorithm_(r.histogram("scheduler_scheduling_algorithm_duration_seconds",
                             "Scheduling algorithm latency in seconds", {},
                             metrics::exponentialBuckets(0.001, 2, 15))),
      binding_(r.histogram("scheduler_binding_duration_seconds", "Binding latency in seconds", {},
                           metrics::exponentialBuckets(0.001, 2, 15))),
      permit_wait_(r.histogram("scheduler_permit_wait_duration_seconds",
                               "Duration of waiting on permit.", {"result"},
                               metrics::exponentialBuckets(0.001, 2, 15))),
      pod_attempts_(r.histogram("scheduler_pod_scheduling_attempts",
                                "Number of attempts to successfully schedule a pod.", {},
                                metrics::exponentialBuckets(1, 2, 5))),
      pod_duration_(r.histogram("scheduler_pod_scheduling_duration_seconds",
                                "E2e latency for a pod being scheduled which may include "
                                "multiple scheduling attempts.",
                                {}, metrics::exponentialBuckets(0.001, 2, 15))),
      preemption_attempts_(r.counter("scheduler_preemption_attempts_total",
                                     "Total preemption attempts in the cluster till now")),
      incoming_(r.counter("scheduler_queue_incoming_pods_total",
                          "Number of pods added to scheduling queues by event and queue type.",
                          {"queue", "event"})),
      pending_(r.gauge("scheduler_pending_pods",
                       "Number of pending pods, by the queue type. 'active' means number of pods "
                       "in activeQ; 'backoff' means number of pods in backoffQ; 'unschedulable' "
                       "means number of pods in unschedulableQ.",
                       {"queue"})),
      unschedulable_(r.gauge("scheduler_unschedulable_pods",
                             "The number of unschedulable pods broken down by plugin name. A pod "
                             "will increment the gauge for all plugins that caused it to not "
                             "schedule and so this metric have meaning only when broken down by "
                             "plugin.",
                             {"plugin", "profile"})),
      cache_size_(r.gauge("scheduler_scheduler_cache_size",
                          "Number of nodes, pods, and assumed (bound) pods in the scheduler cache.",
                          {"type"})),
      reservation_attempts_(r.counter("koord_scheduler_reservation_schedule_attempts_total",
                                      "Number of attempts to schedule Reservations, by the "
                                      "result ('scheduled' or 'unschedulable').",
                                      {"result"})),
      reservation_duration_(r.histogram(
          "koord_scheduler_reservation_scheduling_duration_seconds",
          "Latency from a Reservation first queued to bound, over every attempt it took.", {},
          metrics::exponentialBuckets(0.001, 2, 15))),
      reservation_phase_(r.gauge("scheduler_reservation_status_phase",
                                 "The current number of reservations in each status phase "
                                 "(e.g. Pending, Available, Succeeded, Failed)",
                                 {"name", "phase"})),
      reservations_(r.gauge("koord_scheduler_reservations",
                            "Number of Reservations the scheduler knows, by status phase.",
                            {"phase"})) {}

void SchedulerMetrics::attempt(AttemptResult result, std::string_view profile, double e2e_seconds) {
  attempts_.with({resultLabel(result), profile}).inc();
  e2e_.with({resultLabel(result), profile}).observe(e2e_seconds);
  // kube-scheduler 1.23 renamed the e2e series; both are kept for dashboards of either age.
  attempt_duration_.with({resultLabel(result), profile}).observe(e2e_seconds);
}

void SchedulerMetrics::algorithmDuration(double seconds) {
  algorithm_.with(metrics::LabelValues{}).observe(seconds);
}

void SchedulerMetrics::bindingDuration(double seconds) {
  binding_.with(metrics::LabelValues{}).observe(seconds);
}

void SchedulerMetrics::permitWaitDuration(const Status& decided, double seconds) {
  std::string_view result = "allowed";
  if (!decided.ok())
    result = decided.message().starts_with(kPermitTimeoutMessage) ? "timeout" : "rejected";
  permit_wait_.with({std::string(result)}).observe(seconds);
}

void SchedulerMetrics::podScheduled(int attempts, double since_first_queued_seconds) {
  pod_attempts_.with(metrics::LabelValues{}).observe(attempts);
  pod_duration_.with(metrics::LabelValues{}).observe(since_first_queued_seconds);
}

void SchedulerMetrics::preemptionAttempt() {
  preemption_attempts_.with(metrics::LabelValues{}).inc();
}

void SchedulerMetrics::incomingPod(std::string_view queue, QueueEvent event) {
  incoming_.with({queue, toString(event)}).inc();
}

void SchedulerMetrics::unschedulablePods(const std::vector<std::string>& plugins,
                                         std::string_view profile, int delta) {
  for (const std::string& plugin : plugins)
    unschedulable_.with({plugin, profile}).add(delta);
}

void SchedulerMetrics::queueSizes(const QueueSizes& s) {
  pending_.with({kActiveQueue}).set(static_cast<double>(s.active));
  pending_.with({kBackoffQueue}).set(static_cast<double>(s.backoff));
  pending_.with({kUnschedulableQueue}).set(static_cast<double>(s.unschedulable));
  pending_.with({kGatedQueue}).set(static_cast<double>(s.gated));
}

void SchedulerMetrics::cacheSizes(const CacheCounts& c) {
  cache_size_.with({"nodes"}).set(static_cast<double>(c.nodes));
  cache_size_.with({"pods"}).set(static_cast<double>(c.pods));
  cache_size_.with({"assumed_pods"}).set(static_cast<double>(c.assumed));
}

void SchedulerMetrics::reservationScheduled(double since_first_queued_seconds) {
  reservation_attempts_.with({"scheduled"}).inc();
  reservation_duration_.with(metrics::LabelValues{}).observe(since_first_queued_seconds);
}

void SchedulerMetrics::reservationUnschedulable() {
  reservation_attempts_.with({"unschedulable"}).inc();
}

void SchedulerMetrics::reservationPhase(std::string_view name, std::string_view old_phase,
                                        std::string_view phase) {
  if (!old_phase.empty() && old_phase != phase)
    reservation_phase_.remove({std::string(name), std::string(old_phase)});
  if (!phase.empty())
    reservation_phase_.with({name, phase}).set(1);
}

void SchedulerMetrics::reservationCounts(
    const std::vector<std::pair<std::string_view, std::size_t>>& counts) {
  for (const auto& [phase, n] : counts)
    reservations_.with({phase}).set(static_cast<double>(n));
}

}  // namespace koord::roles::scheduler
