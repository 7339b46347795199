// The scheduling framework's extension points (kube-scheduler's framework/interface.go): one
// small interface per point, a plugin implements those it needs. Filter and Score run on many
// nodes at once and must be const and thread-safe; the others run on the scheduling thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "cycle_state.h"
#include "node_info.h"
#include "pod_info.h"
#include "status.h"

namespace koord::roles::scheduler {

class FrameworkHandle;
class Snapshot;

/// Scores are within [0, kMaxNodeScore] after NormalizeScore.
inline constexpr std::int64_t kMaxNodeScore = 100;
inline constexpr std::int64_t kMinNodeScore = 0;

struct NodeScore {
  std::string_view name;  // points into the snapshot's NodeInfo
  std::int64_t score = 0;
};

/// Filter statuses of the nodes that failed, by node name (for PostFilter and events).
using NodeStatusMap = std::unordered_map<std::string, Status>;

class Plugin {
 public:
  virtual ~Plugin() = default;
  virtual std::string_view name() const = 0;
};

/// A pod in the queue: the pod plus when it was first and last queued, and its attempts.
struct QueuedPodInfo {
  std::shared_ptr<const PodInfo> pod;
  std::chrono::steady_clock::time_point timestamp{};  // when added (or re-added) to the queue
  std::chrono::steady_clock::time_point initial_attempt_timestamp{};
  int attempts = 0;
  /// What the QueueSort plugin keeps at hand for this pod's comparisons (its sortHandle, taken
  /// when the pod enters the active queue); null when it keeps nothing.
  std::shared_ptr<const void> sort_handle = nullptr;
  /// The plugins that refused the pod in its last failed cycle (kube-scheduler's
  /// UnschedulablePlugins): scheduler_unschedulable_pods counts it under each while it waits in
  /// the unschedulable queue.
  std::vector<std::string> unschedulable_plugins = {};
};

class QueueSortPlugin : public virtual Plugin {
 public:
  virtual bool less(const QueuedPodInfo& a, const QueuedPodInfo& b) const = 0;
  /// Called once as a pod enters the active queue, under the queue's lock: state the plugin's
  /// less() would otherwise look up on every comparison (a heap pop compares a pod many times).
  /// The plugin must tolerate a handle that went stale while the pod waited.
  virtual std::shared_ptr<const void> sortHandle(const PodInfo& /*pod*/) const { return nullptr; }
};

/// PreEnqueue (kube-scheduler 1.26+): whether a pending pod may enter the active queue at all.
/// A pod refused waits outside it until an update of the pod lets every plugin pass. Runs on
/// informer threads, possibly several at once: const and thread-safe.
class PreEnqueuePlugin : public virtual Plugin {
 public:
  virtual Status preEnqueue(const PodInfo& pod) const = 0;
};

/// AddPod/RemovePod: keep PreFilter's state true while preemption adds or removes pods.
class PreFilterExtensions {
 public:
  virtual ~PreFilterExtensions() = default;
  virtual Status addPod(CycleState& state, const PodInfo& pod_to_schedule,
                        const PodInfo& pod_to_add, const NodeInfo& node) const = 0;
  virtual Status removePod(CycleState& state, const PodInfo& pod_to_schedule,
                           const PodInfo& pod_to_remove, const NodeInfo& node) const = 0;
};

class PreFilterPlugin : public virtual Plugin {
 public:
  virtual Status preFilter(CycleState& state, const PodInfo& pod) = 0;
  virtual const PreFilterExtensions* preFilterExtensions() const { return nullptr; }
};

/// Koordinator's frameworkext BeforePreFilter transformer, run when the plugin is one of the
/// profile's PreFilter plugins: before any PreFilter it may hand the cycle other NodeInfos for
/// some nodes (the Reservation plugin gives an owner pod its reservations' room back). The
/// replacements hold for this cycle only; every later point sees them as the snapshot's nodes.
class PreFilterTransformer : public virtual Plugin {
 public:
  virtual Status beforePreFilter(CycleState& state, const PodInfo& pod, const Snapshot& snapshot,
                                 std::vector<std::shared_ptr<const NodeInfo>>& replacements) = 0;
};

class FilterPlugin : public virtual Plugin {
 public:
  virtual Status filter(const CycleState& state, const PodInfo& pod,
                        const NodeInfo& node) const = 0;
  /// Whether Filter would pass the pod on every node, told from the pod alone. The framework asks
  /// once per cycle and skips the plugin as if its PreFilter had answered Skip, so a profile that
  /// lists the plugin at Filter without its PreFilter (1.20's) pays nothing per node either.
  virtual bool passesEveryNode(const PodInfo& /*pod*/) const { return false; }
};

struct PostFilterResult {
  /// The node the pod was nominated to (preemption's choice); empty when none.
  std::string nominated_node_name;
};

class PostFilterPlugin : public virtual Plugin {
 public:
  virtual Status postFilter(CycleState& state, const PodInfo& pod,
                            const NodeStatusMap& filtered_node_status,
                            PostFilterResult& result) = 0;
};

class PreScorePlugin : public virtual Plugin {
 public:
  virtual Status preScore(CycleState& state, const PodInfo& pod,
                          const std::vector<const NodeInfo*>& nodes) = 0;
};

class ScorePlugin : public virtual Plugin {
 public:
  virtual Status score(const CycleState& state, const PodInfo& pod, const NodeInfo& node,
                       std::int64_t& score) const = 0;
  /// Whether Score would give every node the same score for the pod, told once per cycle (the
  /// snapshot is set). The framework then leaves the plugin out as if its PreScore had answered
  /// Skip: the same constant on every node ranks no node above another.
  virtual bool scoresEveryNodeAlike(const PodInfo& /*pod*/) const { return false; }
  /// Plugins whose raw scores are not already in [0, 100] normalise them here.
  virtual bool hasNormalizeScore() const { return false; }
  virtual Status normalizeScore(const CycleState& /*state*/, const PodInfo& /*pod*/,
                                std::vector<NodeScore>& /*scores*/) const {
    return Status::success();
  }
};

class ReservePlugin : public virtual Plugin {
 public:
  virtual Status reserve(CycleState& state, const PodInfo& pod, const std::string& node) = 0;
  /// Undoes reserve(); must be idempotent and must not fail.
  virtual void unreserve(CycleState& state, const PodInfo& pod, const std::string& node) = 0;
};

struct PermitResult {
  Status status;  // kWait: hold the pod until allowed/rejected or the timeout
  std::chrono::milliseconds timeout{0};
};

class PermitPlugin : public virtual Plugin {
 public:
  virtual PermitResult permit(CycleState& state, const PodInfo& pod, const std::string& node) = 0;
};

/// PreBind and Bind talk to the API server: they answer through `done`, on the reactor thread.
using StatusCallback = std::function<void(Status)>;

class PreBindPlugin : public virtual Plugin {
 public:
  virtual void preBind(std::shared_ptr<CycleState> state, std::shared_ptr<const PodInfo> pod,
                       const std::string& node, StatusCallback done) = 0;
};

class BindPlugin : public virtual Plugin {
 public:
  /// Status kSkip: not this plugin's pod, the next bind plugin decides.
  virtual void bind(std::shared_ptr<CycleState> state, std::shared_ptr<const PodInfo> pod,
                    const std::string& node, StatusCallback done) = 0;
};

class PostBindPlugin : public virtual Plugin {
 public:
  virtual void postBind(CycleState& state, const PodInfo& pod, const std::string& node) = 0;
};

/// A plugin's decoded pluginConfig args (each plugin defines its own type).
class PluginArgs {
 public:
  virtual ~PluginArgs() = default;
};

}  // namespace koord::roles::scheduler
