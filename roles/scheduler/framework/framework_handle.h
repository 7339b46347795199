// What a plugin can reach beyond its own arguments: the cycle's snapshot, the profile's filters
// (for preemption's what-if runs) and the cluster's other objects (PDBs, plugin-declared kinds).
#pragma once

#include <boost/json/fwd.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "koord/kube/error.h"

#include "cycle_state.h"
#include "node_info.h"
#include "numa_topology_hint.h"
#include "object_source.h"
#include "pod_info.h"
#include "status.h"
#include "waiting_pods.h"

namespace koord::kube {
struct ResourceRef;  // koord/kube/rest_client.h
}
namespace koord::metrics {
class Registry;  // koord/core/metrics.h
}

namespace koord::roles::scheduler {

class Snapshot;
class Extenders;  // extender/extender.h

/// A PodDisruptionBudget as preemption reads it.
struct DisruptionBudget {
  std::string namespace_;
  std::string name;
  kube::Selector selector;
  std::int32_t disruptions_allowed = 0;
  /// status.disruptedPods' names: evictions already counted against the budget.
  std::vector<std::string> disrupted_pods;
};

using ApiCallback = std::function<void(kube::Expected<void>)>;

/// What plugins reach beyond the snapshot: objects other than pods and nodes from the
/// scheduler's informers, the queue's nominations, and the API calls binding and preemption
/// make. The role implements it over its informers and REST client; tests over fixtures. The
/// defaults are what a scheduler without those parts sees (no objects, no nominations, no API).
class ClusterView {
 public:
  virtual ~ClusterView() = default;

  /// The source of a kind some plugin declared under `key` (PluginFactory::objects); null when
  /// no plugin declared it or it holds another type. Plugins look it up once, when built.
  template <typename T>
  const ObjectSource<T>* source(std::string_view key) const {
    const AnyObjectSource* any = objectSource(key);
    if (any == nullptr || any->type() != typeid(T))
      return nullptr;
    return static_cast<const ObjectSource<T>*>(any);
  }
  virtual const AnyObjectSource* objectSource(std::string_view /*key*/) const { return nullptr; }

  virtual std::vector<DisruptionBudget> disruptionBudgets(std::string_view /*namespace_*/) const {
    return {};
  }

  /// Pods preemption nominated to `node` that are not bound yet (the queue's nominator).
  virtual std::vector<std::shared_ptr<const PodInfo>> nominatedPodsForNode(
      std::string_view /*node*/) const {
    return {};
  }
  /// False when no pod is nominated anywhere: the filter pass then skips the per-node lookup.
  virtual bool anyNominatedPods() const { return false; }
  /// POST pods/{name}/binding, the pod's scheduler-owned annotations (reservation-allocated,
  /// resource-status, device-allocated) on the Binding, which the apiserver copies onto the pod;
  /// `done` runs on the reactor thread, with the API's error (a 409 means the pod is bound
  /// already or gone).
  virtual void bindPod(std::shared_ptr<const PodInfo> pod, const std::string& node,
                       ApiCallback done) const;
  /// Deletes a preemption victim (with its UID as precondition). Blocks the calling thread: only
  /// for the scheduling thread, never the reactor's.
  virtual kube::Expected<void> deletePod(const PodInfo& pod) const;
  /// Evicts a pod through the Eviction API (with its UID as precondition), so the API server
  /// holds its PodDisruptionBudgets: ElasticQuota's revoke, as Koordinator's. Blocks, like
  /// deletePod; an error when the API server has not said which Eviction version it takes.
  virtual kube::Expected<void> evictPod(const PodInfo& pod) const;
  /// Clears status.nominatedNodeName of a pod whose nomination preemption gave away. Blocks.
  virtual kube::Expected<void> clearNominatedNodeName(const PodInfo& pod) const;
  /// Sends a JSON merge patch for the pod (DefaultPreBind: the plugins' changes in one write);
  /// `done` runs on the reactor thread. A pod found terminating afterwards is an error.
  virtual void patchPod(std::shared_ptr<const PodInfo> pod, boost::json::value patch,
                        ApiCallback done) const;
  /// Sends a JSON merge patch to the object `ref` names (a PodGroup's status, which its CRD
  /// keeps in the main resource); `done` runs on the reactor thread.
  virtual void mergePatch(const kube::ResourceRef& ref, boost::json::value patch,
                          ApiCallback done) const;
  /// Runs `fn` on the reactor thread once `delay` has passed (VolumeBinding's bind timeout);
  /// false where this view has no reactor (table tests, the in-process benchmark): `fn` then
  /// never runs.
  virtual bool runAfter(std::chrono::milliseconds /*delay*/, std::function<void()> /*fn*/) const {
    return false;
  }
};

class FrameworkHandle {
 public:
  virtual ~FrameworkHandle() = default;
  /// The snapshot of the cycle in progress.
  virtual const Snapshot& snapshot() const = 0;
  virtual const ClusterView& cluster() const = 0;
  /// Every Filter plugin of the profile on one node (preemption's check after removing victims).
  virtual Status runFilterPlugins(const CycleState& state, const PodInfo& pod,
                                  const NodeInfo& node) const = 0;
  /// runFilterPlugins as the scheduler runs it: first with the nominated pods of equal or
  /// higher priority counted on the node (their PreFilter state added), then, when that passed
  /// and such pods exist, without them, since they may never land there.
  virtual Status runFilterPluginsWithNominatedPods(const CycleState& state, const PodInfo& pod,
                                                   const NodeInfo& node) const = 0;
  virtual Status runPreFilterAddPod(CycleState& state, const PodInfo& pod_to_schedule,
                                    const PodInfo& pod_to_add, const NodeInfo& node) const = 0;
  virtual Status runPreFilterRemovePod(CycleState& state, const PodInfo& pod_to_schedule,
                                       const PodInfo& pod_to_remove,
                                       const NodeInfo& node) const = 0;
  /// The pods held at Permit, which a waiting plugin allows or rejects (kube-scheduler's
  /// IterateOverWaitingPods / GetWaitingPod); null where nothing waits (table tests).
  virtual WaitingPods* waitingPods() { return nullptr; }
  /// Moves these pending pods ("namespace/name") from the unschedulable and backoff queues to
  /// the active queue (kube-scheduler's PodsToActivate): a gang's member that reached Permit
  /// brings its siblings forward. Any thread; must not be called holding a lock that the
  /// QueueSort plugin takes.
  virtual void activatePods(const std::vector<std::string>& /*keys*/) {}
  /// Moves every unschedulable pod back to the active or backoff queue (kube-scheduler's answer
  /// to a cluster event a plugin registered: a quota grew). Same rules as activatePods.
  virtual void requeueUnschedulable() {}
  /// Where plugins register their metric families; null where none are kept (table tests).
  virtual metrics::Registry* metricsRegistry() { return nullptr; }
  /// The profile's plugins that give NUMA hints (NodeNUMAResource, DeviceShare), in the order
  /// they were built: the topology manager asks each. Empty where none are (table tests).
  virtual std::span<NUMATopologyHintProvider* const> numaHintProviders() const { return {}; }
  /// The configured scheduler extenders, which preemption consults between finding candidates
  /// and picking one (kube-scheduler's Handle.Extenders()); null where none are (table tests, a
  /// configuration without extenders). Calls on it block: the scheduling thread's only.
  virtual Extenders* extenders() const { return nullptr; }
};

}  // namespace koord::roles::scheduler
