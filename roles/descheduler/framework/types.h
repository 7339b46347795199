// What descheduler plugins read about the cluster: projections of Node, Pod, NodeMetric and
// PodDisruptionBudget objects (only the fields some plugin or the evictor uses), and resources.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "koord/apis/extension.h"
#include "koord/apis/node_metric.h"
#include "koord/kube/labels.h"
#include "koord/kube/scheduling_match.h"

namespace koord::roles::descheduler {

using TimePoint = std::chrono::system_clock::time_point;

/// Resource amounts by name in their base unit: "cpu" in millicores, "memory" and
/// "ephemeral-storage" in bytes, "pods" as a count, extended resources as integers.
using ResourceAmounts = std::map<std::string, std::int64_t, std::less<>>;

/// An ownerReferences entry.
struct OwnerRef {
  std::string api_version;
  std::string kind;
  std::string name;
  std::string uid;
  bool controller = false;
};

/// podAffinity / podAntiAffinity's requiredDuringSchedulingIgnoredDuringExecution entry.
struct PodAffinityTerm {
  kube::Selector selector;  // labelSelector compiled; nothing matches when absent
  bool has_selector = false;
  std::vector<std::string> namespaces;  // empty: the pod's own namespace
  std::string topology_key;
};

/// A weighted (preferred) podAffinity / podAntiAffinity term.
struct WeightedPodAffinityTerm {
  std::int32_t weight = 0;
  PodAffinityTerm term;
};

enum class UnsatisfiableConstraintAction { kDoNotSchedule, kScheduleAnyway };

struct TopologySpreadConstraint {
  std::int32_t max_skew = 1;
  std::string topology_key;
  UnsatisfiableConstraintAction when_unsatisfiable = UnsatisfiableConstraintAction::kDoNotSchedule;
  kube::Selector selector;
  bool has_selector = false;
};

/// One container's status (init containers included, flagged).
struct ContainerStatus {
  std::string name;
  bool init = false;
  std::int32_t restart_count = 0;
  /// state.waiting.reason ("CrashLoopBackOff"); empty otherwise.
  std::string waiting_reason;
  /// state.terminated.reason ("Error", "OOMKilled"); empty otherwise.
  std::string terminated_reason;
};

enum class PodPhase { kPending, kRunning, kSucceeded, kFailed, kUnknown };

struct Pod {
  std::string namespace_;
  std::string name;
  std::string uid;
  std::string resource_version;
  kube::Labels labels;
  kube::Labels annotations;
  std::vector<OwnerRef> owner_refs;
  std::optional<TimePoint> creation_timestamp;
  std::optional<TimePoint> deletion_timestamp;

  // spec
  std::string node_name;
  std::string scheduler_name;
  std::string priority_class_name;
  std::optional<std::int32_t> priority;
  kube::Labels node_selector;
  std::optional<kube::NodeAffinity> node_affinity;
  std::vector<PodAffinityTerm> required_affinity;
  std::vector<PodAffinityTerm> required_anti_affinity;
  std::vector<WeightedPodAffinityTerm> preferred_anti_affinity;
  std::vector<kube::Toleration> tolerations;
  std::vector<TopologySpreadConstraint> topology_spread;
  /// Sum of the containers' requests, raised to each init container's (the pod's effective
  /// request, as the scheduler counts it), plus overhead; sums stick at the int64 bounds.
  ResourceAmounts requests;
  /// Image names of the regular containers in order (RemoveDuplicates compares them).
  std::vector<std::string> container_images;
  /// An emptyDir or hostPath volume: DefaultEvictor keeps such pods unless allowed.
  bool has_local_storage = false;
  bool has_pvc = false;

  // status
  PodPhase phase = PodPhase::kPending;
  /// status.reason ("Evicted", "NodeAffinity").
  std::string reason;
  std::optional<TimePoint> start_time;
  std::vector<ContainerStatus> container_statuses;

  /// Kubernetes' QoS (status.qosClass, else computed from the containers as GetPodQOS does):
  /// the community descheduler's plugins rank pods by it (framework/pod_sort.h).
  apis::KubeQoS kube_qos = apis::KubeQoS::kBestEffort;

  // derived
  apis::QoSClass qos = apis::QoSClass::kNone;  // Koordinator's, from the label or kube_qos
  bool mirror = false;                         // kubernetes.io/config.mirror annotation
  bool static_pod = false;                     // kubernetes.io/config.source other than "api"

  const OwnerRef* controller() const {
    for (const auto& r : owner_refs) {
      if (r.controller)
        return &r;
    }
    return nullptr;
  }
  bool daemonSetPod() const {
    const OwnerRef* c = controller();
    return c != nullptr && c->kind == "DaemonSet";
  }
  std::int32_t priorityOrZero() const { return priority.value_or(0); }
  std::string key() const { return namespace_ + "/" + name; }
};

struct Node {
  std::string name;
  std::string uid;
  kube::Labels labels;
  kube::Labels annotations;
  std::vector<kube::Taint> taints;
  bool unschedulable = false;
  /// The Ready condition is True.
  bool ready = true;
  ResourceAmounts allocatable;
};

/// A PodDisruptionBudget as the evictor needs it (its status decides, as the API server's).
struct PodDisruptionBudget {
  std::string namespace_;
  std::string name;
  kube::Selector selector;
  bool has_selector = false;
  /// status.disruptionsAllowed.
  std::int32_t disruptions_allowed = 0;
};

/// A consistent view the profiles run one pass on: what the informers held when it was taken.
struct Snapshot {
  TimePoint now{};
  std::vector<std::shared_ptr<const Node>> nodes;
  /// Pods by node name (only bound pods that are not finished unless a plugin asks for them:
  /// every pod with spec.nodeName is here, whatever its phase).
  std::map<std::string, std::vector<std::shared_ptr<const Pod>>, std::less<>> pods_by_node;
  std::map<std::string, std::shared_ptr<const apis::NodeMetric>, std::less<>> node_metrics;
  std::vector<std::shared_ptr<const PodDisruptionBudget>> pdbs;

  const std::vector<std::shared_ptr<const Pod>>& podsOn(std::string_view node) const {
    static const std::vector<std::shared_ptr<const Pod>> kNone;
    auto it = pods_by_node.find(node);
    return it == pods_by_node.end() ? kNone : it->second;
  }
  const apis::NodeMetric* nodeMetric(std::string_view node) const {
    auto it = node_metrics.find(node);
    return it == node_metrics.end() ? nullptr : it->second.get();
  }
  const Node* node(std::string_view name) const {
    auto it = node_by_name.find(name);
    return it == node_by_name.end() ? nullptr : it->second.get();
  }
  /// Adds a node (and its index entry); what builds a snapshot, tests included, calls.
  void addNode(std::shared_ptr<const Node> n) {
    node_by_name[n->name] = n;
    nodes.push_back(std::move(n));
  }
  void addPod(std::shared_ptr<const Pod> p) { pods_by_node[p->node_name].push_back(std::move(p)); }

  std::map<std::string, std::shared_ptr<const Node>, std::less<>> node_by_name;
};

/// status.phase as the API spells it.
std::string_view phaseName(PodPhase phase);

/// The resource names in base units: cpu as millicores, everything else as the integer value.
ResourceAmounts amountsOf(const kube::ResourceList& list);

}  // namespace koord::roles::descheduler
