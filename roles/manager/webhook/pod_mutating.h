// /mutate-pod: ClusterColocationProfiles applied to new pods, cpu/memory turned into batch-* or
// mid-* resources, and the extended-resource-spec annotation, as Koordinator's pod webhook does.
#pragma once

#include <boost/json/object.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "koord/apis/colocation_profile.h"
#include "koord/kube/error.h"
#include "koord/kube/labels.h"
#include "webhook/admission_review.h"

namespace koord::manager::webhook {

/// A scheduling.k8s.io/v1 PriorityClass, as far as a pod takes it over.
struct PriorityClassInfo {
  std::int32_t value = 0;
  std::string preemption_policy;  // "" when the class sets none
};

/// What the mutation looks up; the manager passes informer stores. Each function must be safe to
/// call from the webhook server's threads.
struct PodMutatingContext {
  /// Every ClusterColocationProfile, in any order.
  std::function<std::vector<std::shared_ptr<const apis::ClusterColocationProfile>>()> profiles;
  /// A namespace's labels; nullopt when there is no such namespace.
  std::function<std::optional<kube::Labels>(std::string_view name)> namespace_labels;
  /// A PriorityClass by name; nullopt when there is none.
  std::function<std::optional<PriorityClassInfo>(std::string_view name)> priority_class;
  /// Uniform in [0, 100), as Go's rand.Intn(100); empty means a per-thread Mersenne twister.
  std::function<int()> random_percent;
  /// The ColocationProfileSkipMutatingResources feature gate: keep cpu/memory as they are.
  bool skip_mutating_resources = false;
};

/// The pod as the CREATE admission leaves it; equal to `pod` when nothing applies.
/// `request_namespace` stands in for an empty metadata.namespace. Errors whose code is
/// Errc::kInvalidArgument mean the pod itself is malformed; any other is a failed lookup (a
/// namespace or PriorityClass that does not exist, a bad profile patch).
///
/// spec.patch is merged with the subset of strategic merge patch that Pod templates use: objects
/// merge key by key and null deletes; the keyed lists of a Pod (containers, initContainers,
/// ephemeralContainers, volumes, imagePullSecrets, hostAliases, topologySpreadConstraints,
/// schedulingGates, resourceClaims, metadata.ownerReferences; a container's env, ports,
/// volumeMounts, volumeDevices) merge element by element on their key; metadata.finalizers is a
/// union; every other list is replaced. "$patch": "replace" and "$patch": "delete" work on objects
/// and keyed list elements; $retainKeys, $setElementOrder and $deleteFromPrimitiveList are refused.
/// Unlike Kubernetes, the result is not re-decoded as a Pod: fields a Pod does not have are kept
/// (the API server then drops or refuses them).
kube::Expected<boost::json::object> mutatePodOnCreate(const boost::json::object& pod,
                                                      std::string_view request_namespace,
                                                      const PodMutatingContext& context);

/// The /mutate-pod handler: CREATE mutates, every other operation is allowed unchanged. A
/// malformed pod is answered 400, a failed lookup 500, both as Koordinator does.
Handler podMutatingHandler(PodMutatingContext context);

}  // namespace koord::manager::webhook
