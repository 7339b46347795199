// The scheduling.sigs.k8s.io/v1alpha1 ElasticQuota (a min/max budget, a node of Koordinator's
// quota tree, placed by its labels and annotations) projected once from JSON, and its status patch.
#pragma once

#include <boost/json/fwd.hpp>

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "koord/apis/pod_group.h"
#include "koord/kube/error.h"
#include "koord/kube/labels.h"
#include "koord/kube/quantity.h"

namespace koord::apis {

// Group and version are the PodGroup's (kSchedulingSigsGroup, kSchedulingSigsVersion).
inline constexpr std::string_view kElasticQuotaResource = "elasticquotas";
inline constexpr std::string_view kElasticQuotaKind = "ElasticQuota";

/// The quotas Koordinator keeps itself: the tree's root (every quota without a parent label
/// hangs below it), the system quota and the default quota (pods no quota claims).
inline constexpr std::string_view kRootQuotaName = "koordinator-root-quota";
inline constexpr std::string_view kSystemQuotaName = "koordinator-system-quota";
inline constexpr std::string_view kDefaultQuotaName = "koordinator-default-quota";

// Labels on a quota; "true"/"false" flags compare the exact text.
inline constexpr std::string_view kLabelQuotaParent = "quota.scheduling.koordinator.sh/parent";
/// "true": the quota has child quotas (and no pods of its own).
inline constexpr std::string_view kLabelQuotaIsParent = "quota.scheduling.koordinator.sh/is-parent";
/// Anything but "false": what the quota's pods leave unused of its min may be lent to others.
inline constexpr std::string_view kLabelAllowLentResource =
    "quota.scheduling.koordinator.sh/allow-lent-resource";
/// "true": the root of a quota tree of its own (a profile's quota).
inline constexpr std::string_view kLabelQuotaIsRoot = "quota.scheduling.koordinator.sh/is-root";
inline constexpr std::string_view kLabelQuotaTreeID = "quota.scheduling.koordinator.sh/tree-id";
/// The ElasticQuotaProfile that made the quota.
inline constexpr std::string_view kLabelQuotaProfile = "quota.scheduling.koordinator.sh/profile";
/// "true" on a tree's root: its total-resource is not taken out of the default tree's total.
inline constexpr std::string_view kLabelQuotaIgnoreDefaultTree =
    "quota.scheduling.koordinator.sh/ignore-default-tree";
/// "true": the quota webhook skips its checks of min against the parent's and the siblings'.
inline constexpr std::string_view kLabelAllowForceUpdate =
    "quota.scheduling.koordinator.sh/allow-force-update";

// Labels on pods.
/// The quota the pod is charged to (the quota of its namespace's name, else the default, when
/// unset).
inline constexpr std::string_view kLabelQuotaName = "quota.scheduling.koordinator.sh/name";
/// "false": the pod may not be preempted by its quota's other pods.
inline constexpr std::string_view kLabelPreemptible = "quota.scheduling.koordinator.sh/preemptible";

// Annotations on a quota, each a JSON resource list unless said otherwise.
/// How the quota's share of what is lent is weighed; spec.max when unset, unreadable or zero.
inline constexpr std::string_view kAnnotationSharedWeight =
    "quota.scheduling.koordinator.sh/shared-weight";
/// Written by the scheduler: what the quota may use now, what its pods (and its children's) ask
/// for, what it is guaranteed and what is allocated to it, and the non-preemptible parts.
inline constexpr std::string_view kAnnotationRuntime = "quota.scheduling.koordinator.sh/runtime";
inline constexpr std::string_view kAnnotationRequest = "quota.scheduling.koordinator.sh/request";
inline constexpr std::string_view kAnnotationChildRequest =
    "quota.scheduling.koordinator.sh/child-request";
inline constexpr std::string_view kAnnotationGuaranteed =
    "quota.scheduling.koordinator.sh/guaranteed";
inline constexpr std::string_view kAnnotationAllocated =
    "quota.scheduling.koordinator.sh/allocated";
inline constexpr std::string_view kAnnotationNonPreemptibleRequest =
    "quota.scheduling.koordinator.sh/non-preemptible-request";
inline constexpr std::string_view kAnnotationNonPreemptibleUsed =
    "quota.scheduling.koordinator.sh/non-preemptible-used";
/// Written by the quota profile controller: the profile's nodes' allocatable, and the part on
/// unschedulable or not-ready nodes.
inline constexpr std::string_view kAnnotationTotalResource =
    "quota.scheduling.koordinator.sh/total-resource";
inline constexpr std::string_view kAnnotationUnschedulableResource =
    "quota.scheduling.koordinator.sh/unschedulable-resource";
/// On a profile: a JSON array of the resource names its quota's min and max cover.
inline constexpr std::string_view kAnnotationResourceKeys =
    "quota.scheduling.koordinator.sh/resource-keys";
/// A JSON array of namespaces whose pods the quota takes.
inline constexpr std::string_view kAnnotationQuotaNamespaces =
    "quota.scheduling.koordinator.sh/namespaces";

/// Bound on the resource names of one list (spec, status or an annotation): a quota covers a
/// handful of resources.
inline constexpr std::size_t kMaxElasticQuotaResourceNames = 256;
/// Bound on the namespaces annotation's items.
inline constexpr std::size_t kMaxElasticQuotaNamespaces = 4096;

struct ElasticQuota {
  std::string namespace_;
  std::string name;
  std::string uid;
  std::string resource_version;
  kube::Labels labels;
  kube::Labels annotations;
  std::chrono::system_clock::time_point creation_timestamp{};
  bool terminating = false;  // metadata.deletionTimestamp set

  // spec
  kube::ResourceList min;
  kube::ResourceList max;
  // status
  kube::ResourceList used;

  // The labels and annotations as Koordinator's getters read them; none of these refuses the
  // object, as none of Koordinator's does.
  /// The parent label; kRootQuotaName when it is empty, but "" for the root itself.
  std::string parent_name;
  bool is_parent = false;
  bool allow_lent_resource = true;
  bool is_root = false;
  bool allow_force_update = false;
  std::string tree_id;
  /// The shared-weight annotation when it reads as a non-zero resource list, else max.
  kube::ResourceList shared_weight;
  /// The namespaces annotation; empty when unset or not a JSON array of strings.
  std::vector<std::string> namespaces;
};

/// Projects an ElasticQuota. Unknown fields are ignored and JSON null reads as absent; a field of
/// the wrong type, a bad quantity or a list over kMaxElasticQuotaResourceNames is an error
/// naming it ("spec.max[cpu]: ..."). The labels and annotations never are: a malformed one, or
/// one over its bound, is read as Koordinator reads an unreadable one (see the members above);
/// quotaResourceAnnotation and quotaNamespaces tell what is wrong with it.
kube::Expected<ElasticQuota> decodeElasticQuota(const boost::json::value& v);

/// One of the resource-list annotations (runtime, request, child-request, guaranteed,
/// allocated, non-preemptible-*, total-resource, unschedulable-resource, shared-weight) as
/// Koordinator's GetRuntime and its siblings read it: empty when absent, "" or null; an error
/// naming the key when it is not a JSON object of quantities or is over the bounds.
kube::Expected<kube::ResourceList> quotaResourceAnnotation(const kube::Labels& annotations,
                                                           std::string_view key);
/// The namespaces annotation read strictly, for a webhook to refuse: empty when absent, "" or
/// null; an error naming the key when it is not a JSON array of strings, holds more than
/// kMaxElasticQuotaNamespaces items or one longer than a namespace can be.
kube::Expected<std::vector<std::string>> quotaNamespaces(const kube::Labels& annotations);
/// A resource list as the resource-list annotations hold it: Go's json.Marshal form, names sorted
/// and quantities canonical ({"cpu":"1500m","memory":"1Gi"}).
std::string quotaResourceAnnotationValue(const kube::ResourceList& list);

/// The quota-name label of a pod ("" when unset).
std::string_view podQuotaName(const kube::Labels& pod_labels);
/// The pod's preemptible label is "false".
bool isPodNonPreemptible(const kube::Labels& pod_labels);

/// What Koordinator's ElasticQuota controller writes back from the quota tree; nullopt members
/// are left as they are (its patch carries only what changed).
struct ElasticQuotaStatusUpdate {
  std::optional<kube::ResourceList> used;
  std::optional<kube::ResourceList> runtime;
  std::optional<kube::ResourceList> request;
  std::optional<kube::ResourceList> child_request;
  std::optional<kube::ResourceList> guaranteed;
  std::optional<kube::ResourceList> allocated;
  std::optional<kube::ResourceList> non_preemptible_request;
  std::optional<kube::ResourceList> non_preemptible_used;
};
/// A JSON merge patch for the quota itself, not a status subresource: the CRD, as Koordinator's,
/// has none, and the figures go into annotations beside status.used in one write. Each list set
/// becomes its annotation's value (quotaResourceAnnotationValue); a set `used` replaces
/// status.used whole, the names of `current.used` it lacks sent as null. A non-empty
/// `resource_version` is sent too, making the patch fail with a conflict when the quota changed
/// meanwhile.
boost::json::value elasticQuotaStatusPatch(const ElasticQuota& current,
                                           const ElasticQuotaStatusUpdate& update,
                                           std::string_view resource_version = {});

}  // namespace koord::apis
