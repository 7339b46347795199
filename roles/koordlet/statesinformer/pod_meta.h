// The koordlet's view of a pod on its node: identity, QoS and priority, and per container the
// resources and the runtime's container ID that locate its cgroup. Decoded once per sync.
#pragma once

#include <boost/json/fwd.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "koord/apis/extension.h"
#include "koord/kube/error.h"
#include "koord/kube/labels.h"
#include "koord/kube/quantity.h"

namespace koord::roles::koordlet {

struct ContainerMeta {
  std::string name;
  kube::ResourceList requests;
  kube::ResourceList limits;
  /// From status.containerStatuses[].containerID, checked by the cgroup layer's grammar; both
  /// empty while the container has not been created yet (or its ID is malformed: then
  /// `id_error` says why and nothing is done with its cgroup).
  std::string runtime;
  std::string id;
  std::string id_error;
};

enum class PodPhase : std::uint8_t { kUnknown, kPending, kRunning, kSucceeded, kFailed };

/// The pod annotations the koordlet reads: resource-status (the node topology report takes LSE
/// and LSR pods' cpusets from it), the per-pod CPU burst and memory QoS overrides, and the
/// eviction order and policy. A module that reads another key adds it here.
// One key per line, as the list's readers expect; clang-format would pack them.
// clang-format off
inline constexpr std::string_view kKeptPodAnnotations[] = {
    apis::kAnnotationResourceStatus,
    "koordinator.sh/cpuBurst",
    "koordinator.sh/memoryQOS",
    "koordinator.sh/blkioQOS",
    "koordinator.sh/eviction-priority",
    "koordinator.sh/eviction-policy",
};
// clang-format on
/// A kept annotation longer than this is dropped (as if absent).
inline constexpr std::size_t kMaxKeptAnnotationBytes = 256 * 1024;

struct PodMeta {
  std::string namespace_;
  std::string name;
  std::string uid;
  PodPhase phase = PodPhase::kUnknown;
  apis::KubeQoS kube_qos = apis::KubeQoS::kBestEffort;
  /// koordinator.sh/qosClass, else from the Kubernetes QoS.
  apis::QoSClass qos = apis::QoSClass::kNone;
  /// koordinator.sh/priority-class or spec.priority's band, else from the QoS.
  apis::PriorityClass priority = apis::PriorityClass::kNone;
  std::optional<std::int32_t> priority_value;
  kube::Labels labels;
  /// Only the keys of kKeptPodAnnotations: pods often carry kilobytes of annotations the
  /// koordlet never reads.
  kube::Annotations annotations;
  std::vector<ContainerMeta> containers;
  /// The pod is being deleted (metadata.deletionTimestamp set).
  bool terminating = false;
  /// metadata.creationTimestamp; nullopt when absent or malformed (the peak predictor's cold
  /// start counts from it).
  std::optional<std::chrono::system_clock::time_point> creation_time;
  /// Koordinator's GetPodRequest for cpu and memory: the containers' requests summed, each init
  /// container's as a floor, spec.overhead added; a resource no container requests is absent.
  kube::ResourceList pod_requests;

  std::string key() const { return namespace_ + "/" + name; }
  bool isRunning() const { return phase == PodPhase::kRunning; }
  /// Koordinator's "BE pod" for suppression and eviction: koord QoS BE, or no koord QoS and
  /// Kubernetes BestEffort.
  bool isBE() const;
};

/// Projects a Pod as the kubelet's /pods or the API server returns it; errors name the field.
kube::Expected<PodMeta> decodePodMeta(const boost::json::value& v);

/// Every item of a PodList; a malformed item is skipped and its error returned beside the rest,
/// so one bad pod never hides the others.
struct PodListResult {
  std::vector<PodMeta> pods;
  std::vector<std::string> errors;
};
kube::Expected<PodListResult> decodePodList(const boost::json::value& v);
/// The same from the list's text, decoded item by item as it is read: the whole document never
/// exists as JSON values at once (a node's pod list is the koordlet's largest input).
kube::Expected<PodListResult> decodePodListText(std::string_view body);
/// Adds one item to `out`: the pod, or its error naming the item's index.
void addPodListItem(PodListResult& out, std::size_t index, const boost::json::value& item);

}  // namespace koord::roles::koordlet
