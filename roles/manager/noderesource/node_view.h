// The compact Node and Pod projections the noderesource controller keeps in its informers: only
// what the batch calculation and the node status patch read, decoded once from the API's JSON.
#pragma once

#include <boost/json/fwd.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "koord/apis/extension.h"
#include "koord/kube/error.h"
#include "koord/kube/labels.h"
#include "koord/kube/quantity.h"

namespace koord::roles::manager::noderesource {

/// A cpu and memory pair. The batch formula only ever reads these two resources, and a missing
/// one counts as zero (quotav1's arithmetic over Koordinator's zero lists), so a pair of
/// quantities says everything a ResourceList would, without a map per term.
struct CpuMemory {
  kube::Quantity cpu;
  kube::Quantity memory;
};

/// The batch-cpu / batch-memory a node carries, or should carry; nullopt is absent (remove it).
struct BatchValues {
  std::optional<kube::Quantity> cpu;
  std::optional<kube::Quantity> memory;
  friend bool operator==(const BatchValues&, const BatchValues&) = default;
};

struct NodeView {
  std::string name;
  kube::Labels labels;
  kube::Labels annotations;
  kube::ResourceList capacity;
  kube::ResourceList allocatable;
  /// node.koordinator.sh/reservation's resources, with reservedCPUs counted into cpu; nullopt
  /// when the annotation is absent, "null", or malformed (Koordinator ignores it then too).
  std::optional<kube::ResourceList> reservation;
  /// Why the reservation annotation was ignored (for the controller's log); empty otherwise.
  std::string reservation_error;
  /// kubernetes.io/batch-cpu and batch-memory in status.allocatable now, which is what
  /// Koordinator compares against to decide whether to write.
  BatchValues current_batch;
  /// kubernetes.io/mid-cpu and mid-memory in status.allocatable now (the MidResource plugin's).
  BatchValues current_mid;
};

enum class PodPhase : std::uint8_t { kUnknown, kPending, kRunning, kSucceeded, kFailed };

struct PodView {
  std::string namespace_;
  std::string name;
  std::string uid;
  std::string node_name;
  /// The quota.scheduling.koordinator.sh/name label ("" when unset): the quota webhook asks
  /// whether any pod is still charged to a quota it is about to delete or make a parent.
  std::string quota_name;
  PodPhase phase = PodPhase::kUnknown;
  /// koordinator.sh/priority-class label, else spec.priority's band, else derived from the QoS.
  apis::PriorityClass priority = apis::PriorityClass::kNone;
  /// koordinator.sh/qosClass label, else derived from the Kubernetes QoS class.
  apis::QoSClass qos = apis::QoSClass::kNone;
  /// Kubernetes' effective pod request (component-helpers PodRequests): containers summed,
  /// each init container (plus the sidecars started before it) as a floor, sidecars added,
  /// pod-level spec.resources.requests replacing the aggregate where set, overhead added.
  CpuMemory requests;

  bool isLSE() const { return qos == apis::QoSClass::kLSE; }
  /// Running or Pending: the pods whose resources the node is holding.
  bool isActive() const { return phase == PodPhase::kRunning || phase == PodPhase::kPending; }
};

/// Projects a Node; errors name the field ("status.allocatable[cpu]: ..."). A malformed
/// reservation annotation is not an error: it is dropped and the reason kept.
kube::Expected<NodeView> decodeNodeView(const boost::json::value& v);

/// Projects a Pod; errors name the field ("spec.containers[1].resources.requests[cpu]: ...").
kube::Expected<PodView> decodePodView(const boost::json::value& v);

/// The node.koordinator.sh/reservation annotation ({"resources": {...}, "reservedCPUs": "0-3",
/// "applyPolicy": ...}) as a resource list: nullopt for "null", an error for malformed JSON, a
/// bad quantity or a bad cpuset. reservedCPUs, when set, replaces resources' cpu with its count.
kube::Expected<std::optional<kube::ResourceList>> parseNodeReservation(std::string_view annotation);

/// The number of distinct CPUs in a Linux cpuset list ("0-3,8,10-11" -> 7); "" is 0. Counted
/// over merged ranges so a hostile "0-4000000000" costs nothing.
kube::Expected<std::int64_t> countCPUSet(std::string_view cpuset);

}  // namespace koord::roles::manager::noderesource
