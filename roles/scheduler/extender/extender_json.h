// The bodies of kube-scheduler's extender API (k8s.io/kube-scheduler/extender/v1), written and
// read; internal to the extender library and its tests, so that only it sees the JSON.
#pragma once

#include <boost/json/fwd.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "extender/extender.h"
#include "framework/node_info.h"
#include "framework/pod_info.h"
#include "koord/kube/error.h"

namespace koord::roles::scheduler::extender {

/// extenderv1.MaxExtenderPriority: an extender scores in [0, 10]; kube-scheduler scales by
/// kMaxNodeScore / 10.
inline constexpr std::int64_t kMaxExtenderPriority = 10;

// The v1 structs carry no json tags, so Go's encoding/json writes their field names as declared
// ("Pod", "NodeNames", "FailedNodes", "Host", ...) and reads them case-insensitively: extenders
// answering "nodenames" or "failedNodes" (the pre-1.16 tags) are read alike.

/// A Pod rebuilt from the projection, for a pod with no API object to send (a Reservation's
/// stand-in) or when no API server is at hand: metadata (name, namespace, uid, resourceVersion,
/// labels, the annotations the projection keeps), spec.schedulerName, nodeName, priority,
/// nodeSelector and one container named "requests" carrying the pod's effective requests and
/// limits (the projection keeps the sums, not each container's).
boost::json::value podFromProjection(const PodInfo& pod);

/// A Node rebuilt from the projection: metadata (name, uid, labels, the annotations the
/// projection keeps), spec.unschedulable and taints, status.capacity and allocatable.
boost::json::value nodeFromProjection(const Node& node);

/// ExtenderArgs: {"Pod": <pod_json>, "Nodes": {"metadata": {}, "items": [...]} | null,
/// "NodeNames": [...] | null}; names only when the extender caches nodes.
std::string extenderArgs(std::string_view pod_json, const std::vector<const NodeInfo*>& nodes,
                         bool node_cache_capable);

/// ExtenderBindingArgs: {"PodName", "PodNamespace", "PodUID", "Node"}.
std::string bindingArgs(const PodInfo& pod, const std::string& node);

/// An ExtenderFilterResult mapped back onto the nodes sent (indices into them). Nodes the answer
/// names that were not sent make it an error (kube-scheduler's "claims a filtered node"); failed
/// nodes that were not sent are dropped, so nothing in an answer outgrows the question.
struct FilterAnswer {
  /// In the answer's order, each once. With neither NodeNames (when caching nodes) nor Nodes
  /// in the answer, no node passed (as kube-scheduler reads it).
  std::vector<std::size_t> passed;
  std::vector<std::pair<std::size_t, std::string>> failed;
  std::vector<std::pair<std::size_t, std::string>> unresolvable;
  /// The answer's "Error"; empty when none.
  std::string error;
};
kube::Expected<FilterAnswer> parseFilterResult(std::string_view body,
                                               const std::vector<const NodeInfo*>& sent,
                                               bool node_cache_capable, std::string_view extender);

/// A HostPriorityList: (index into `sent`, score) per entry naming a node sent, in order (an
/// entry for another host is dropped). Scores outside [0, kMaxExtenderPriority] are clamped into
/// it, so that no weight can overflow the totals.
kube::Expected<std::vector<std::pair<std::size_t, std::int64_t>>> parseHostPriorities(
    std::string_view body, const std::vector<const NodeInfo*>& sent);

/// An ExtenderBindingResult's "Error" ("" when it bound the pod).
kube::Expected<std::string> parseBindingResult(std::string_view body);

/// ExtenderPreemptionArgs: {"Pod": <pod_json>, "NodeNameToVictims": ..., "NodeNameToMetaVictims":
/// ...}, one of the two null. An extender that caches nodes gets MetaVictims, {"Pods": [{"UID"}],
/// "NumPDBViolations"}; any other gets Victims, {"Pods": [<pod>...], "NumPDBViolations"}, with
/// each victim rebuilt from its projection (podFromProjection): fetching every victim of every
/// candidate from the API server would make one preemption hundreds of blocking GETs, while the
/// projection costs nothing and keeps what identifies the pod (uid, names, node, priority,
/// labels, requests).
std::string preemptionArgs(std::string_view pod_json,
                           const std::vector<PreemptionCandidate>& candidates,
                           bool node_cache_capable);

/// An ExtenderPreemptionResult's NodeNameToMetaVictims ({node: {"Pods": [{"UID"}],
/// "NumPDBViolations"}}) mapped onto `snapshot`: each node must be one of its nodes ("nodeinfo
/// not found for node name ...") and each UID one of that node's pods (kube-scheduler's
/// "extender: <url> claims to preempt pod (UID: ...) on node: ..., but the pod is not found on
/// that node"). The candidates come in the order of `sent` (nodes the answer adds after them, in
/// the answer's order); a node or UID named twice counts once. NumPDBViolations is kept, clamped
/// into [0, the node's victims], as kube-scheduler does since 1.23 (1.20 dropped it to 0, in
/// both directions). No NodeNameToMetaVictims (or a null answer) is no candidate.
kube::Expected<std::vector<PreemptionCandidate>> parsePreemptionResult(
    std::string_view body, const Snapshot& snapshot, const std::vector<PreemptionCandidate>& sent,
    std::string_view extender);

}  // namespace koord::roles::scheduler::extender
