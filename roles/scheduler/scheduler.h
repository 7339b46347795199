// The scheduling loop (kube-scheduler's Scheduler and scheduleOne): one thread pops pending pods
// and runs a cycle on a fresh snapshot; the binding cycle finishes asynchronously on the API's.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "cache/scheduler_cache.h"
#include "config/scheduler_config.h"
#include "extender/extender.h"
#include "framework/assigned_pod_listener.h"
#include "framework/declared_object.h"
#include "framework/node_listener.h"
#include "framework/plugin_controller.h"
#include "framework/plugin_registry.h"
#include "framework/pod_listener.h"
#include "framework/reservation_listener.h"
#include "framework/snapshot.h"
#include "queue/scheduling_queue.h"
#include "runtime/framework.h"
#include "runtime/parallelizer.h"
#include "runtime/schedule_pod.h"
#include "scheduler_api.h"
#include "scheduler_metrics.h"

namespace koord::roles::scheduler {

/// What one scheduling cycle would make of a pod now, without reserving or binding it (koord
/// explain): PreFilter's answer, every node's Filter answer, the scores of the nodes that pass.
struct PodExplanation {
  std::string profile;
  /// Not success when a BeforePreFilter transformer or PreFilter refused the pod (plugin()
  /// names which); no node is filtered then.
  Status pre_filter;
  struct NodeResult {
    std::string node;
    /// Success, or the first Filter plugin's refusal (plugin() names it).
    Status filter;
    /// The nodes that pass: each Score plugin's normalised score, and the weighted total.
    std::vector<Framework::PluginScores> scores;
    std::int64_t total = 0;
  };
  /// Every node, in the snapshot's order.
  std::vector<NodeResult> nodes;
};

class Scheduler final : public NodeObjectSink {
 public:
  /// Builds every profile's framework (a bad profile is a startup error, thrown as
  /// std::invalid_argument naming it) and the queue in the first profile's QueueSort order
  /// (kube-scheduler requires all profiles to share it). `api` must outlive the scheduler and
  /// be told about the queue with setQueue-like wiring by its owner (see queue()).
  Scheduler(const config::SchedulerConfig& config, const PluginRegistry& registry,
            SchedulerApi& api, metrics::Registry& metrics);
  ~Scheduler() override;
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  /// Whether one of the profiles is named `scheduler_name` (only their pods are queued).
  bool responsibleFor(const std::string& scheduler_name) const;
  /// The share of cycles whose plugin calls are timed, every profile (upstream's 10 by default;
  /// the in-process benchmark times all). Before scheduling.
  void setPluginMetricsSamplePercent(int percent);

  // The informers' events (any thread; serially per informer).
  /// Every pod event, before the pending/assigned ones below: the plugins' PodListeners.
  void onPodAdd(const PodInfo& pod);
  void onPodUpdate(const PodInfo& old_pod, const PodInfo& pod);
  void onPodDelete(const PodInfo& pod);
  void onPendingPodAdd(std::shared_ptr<const PodInfo> pod);
  void onPendingPodUpdate(const PodInfo& old_pod, std::shared_ptr<const PodInfo> pod);
  void onPendingPodDelete(const PodInfo& pod);
  void onAssignedPodAdd(std::shared_ptr<const PodInfo> pod);
  void onAssignedPodUpdate(const PodInfo& old_pod, std::shared_ptr<const PodInfo> pod);
  void onAssignedPodDelete(const PodInfo& pod);
  void onNodeAdd(std::shared_ptr<const Node> node);
  void onNodeUpdate(const Node& old_node, std::shared_ptr<const Node> node);
  void onNodeDelete(const Node& node);
  // The Reservation informer's events: a pending one is queued as its reserve pod, an Available
  // one holds its room in the cache, any other is dropped from both.
  void onReservationAdd(std::shared_ptr<const ReservationState> r);
  void onReservationUpdate(const ReservationState& old_r,
                           std::shared_ptr<const ReservationState> r);
  void onReservationDelete(const ReservationState& r);
  // Plugin-declared kinds kept on NodeInfos (NodeMetric), from their informers.
  void onNodeObject(const std::string& kind, const std::string& node,
                    std::function<void(NodeInfo&)> attach, bool added) override;
  void onNodeObjectDelete(const std::string& kind, const std::string& node,
                          std::function<void(NodeInfo&)> detach) override;

  /// Starts the scheduling thread, the queue's and cache's periodic work and the plugins'
  /// controllers. Call once the informers have synced (and, with leader election, once
  /// leading).
  void start();
  /// Closes the queue, joins the scheduling thread; bindings in flight still call back.
  void stop();

  /// One cycle for the queue's next pod; false once the queue is closed. The scheduling
  /// thread's body, public for tests that drive the loop step by step.
  bool scheduleOne();
  /// The periodic work start() runs every second: backoff flush, unschedulable leftovers
  /// (every 30 s), expired assumed pods, queue and cache gauges.
  void housekeeping(std::chrono::steady_clock::time_point now);

  SchedulingQueue& queue() { return *queue_; }
  SchedulerCache& cache() { return cache_; }
  /// Called (on the informer's thread) when a pod bound into a reservation appears: the
  /// reservation controller's cue. Before start().
  void setReservationOwnerHook(std::function<void()> hook) { owner_hook_ = std::move(hook); }
  SchedulerMetrics& metrics() { return metrics_; }

  /// Runs PreFilter, Filter on every node (not only as many as a cycle needs) and Score on the
  /// nodes that pass, for `pod` on the cache as it is, on the calling thread; nothing is
  /// reserved, assumed or written. An error when no profile is the pod's scheduler or a plugin
  /// fails. Not while the scheduling thread runs.
  kube::Expected<PodExplanation> explain(const PodInfo& pod);
  /// The first profile's plugin of that name; null when no profile has it.
  Plugin* findPlugin(std::string_view name) const;
  /// Bindings started and not yet answered.
  int bindingsInFlight() const { return bindings_in_flight_.load(); }

 private:
  struct Profile {
    std::string name;
    std::unique_ptr<Framework> framework;
    std::unique_ptr<PodScheduler> algorithm;
  };
  Profile* profileFor(const std::string& scheduler_name);
  void failed(Profile& profile, QueuedPodInfo info, std::int64_t cycle, std::string_view reason,
              const std::string& message, const std::string& nominated_node);
  void bindAsync(Profile& profile, std::shared_ptr<CycleState> state, QueuedPodInfo info,
                 std::shared_ptr<const PodInfo> assumed, std::int64_t cycle,
                 std::chrono::steady_clock::time_point start);
  /// A reserve pod's binding: the Reservation's status says Available on the node.
  void bindReservationAsync(Profile& profile, std::shared_ptr<CycleState> state, QueuedPodInfo info,
                            std::shared_ptr<const PodInfo> assumed, std::int64_t cycle,
                            std::chrono::steady_clock::time_point start);
  /// The status write that makes the reservation Available (its annotations already sent).
  void markReservationAvailable(Profile& profile, std::shared_ptr<CycleState> state,
                                QueuedPodInfo info, std::shared_ptr<const PodInfo> assumed,
                                std::shared_ptr<const ReservationState> current, std::int64_t cycle,
                                std::chrono::steady_clock::time_point start,
                                std::chrono::steady_clock::time_point bind_start);
  /// After Permit: the binding cycle (a reserve pod's or a pod's).
  void continueBinding(Profile& profile, std::shared_ptr<CycleState> state, QueuedPodInfo info,
                       std::shared_ptr<const PodInfo> assumed, std::int64_t cycle,
                       std::chrono::steady_clock::time_point start);
  /// A pod held at Permit was rejected or timed out: its room is free again and it is requeued
  /// as unschedulable.
  void permitRejected(Profile& profile, CycleState& state, QueuedPodInfo info,
                      const std::shared_ptr<const PodInfo>& assumed, std::int64_t cycle,
                      std::chrono::steady_clock::time_point start, const Status& status);
  /// After a failed binding: the room it held is free again.
  void bindingFailed(Profile& profile, CycleState& state, QueuedPodInfo info,
                     const std::shared_ptr<const PodInfo>& assumed, std::int64_t cycle,
                     std::chrono::steady_clock::time_point start, const std::string& message);
  void reservationFailed(Profile& profile, QueuedPodInfo info, std::int64_t cycle,
                         const std::string& message);
  /// Whether a reserve pod for this Reservation belongs in the queue.
  bool queuesReservation(const ReservationState& r) const;

  SchedulerApi& api_;
  SchedulerMetrics metrics_;
  Parallelizer parallelizer_;
  SchedulerCache cache_;
  std::vector<Profile> profiles_;
  std::vector<AssignedPodListener*> listeners_;
  std::vector<ReservationListener*> reservation_listeners_;
  std::vector<PodListener*> pod_listeners_;
  std::vector<NodeListener*> node_listeners_;
  std::vector<PluginController*> controllers_;
  bool controllers_started_ = false;
  std::function<void()> owner_hook_;
  std::unique_ptr<SchedulingQueue> queue_;
  Snapshot snapshot_;  // the scheduling thread's only
  /// The scheduling thread's scratch for the cycle's replaced NodeInfos.
  std::vector<std::shared_ptr<const NodeInfo>> replacements_;
  std::vector<std::shared_ptr<const NodeInfo>> replaced_;
  /// The Scheduled=False message last written per reservation UID (written again only when
  /// it changes, as a pod's PodScheduled condition).
  std::mutex reservation_failures_mu_;
  std::unordered_map<std::string, std::string> reservation_failures_;

  std::atomic<int> bindings_in_flight_{0};
  std::atomic<bool> stopping_{false};
  std::thread thread_;
  std::thread housekeeper_;
  std::chrono::steady_clock::time_point last_leftover_flush_{};
  /// The configuration's extenders, shared by every profile; null when none. Last, so that it
  /// goes first: its destructor waits for calls in flight, whose callbacks reach the members
  /// above.
  std::unique_ptr<Extenders> extenders_;
};

}  // namespace koord::roles::scheduler
