// The quota.koordinator.sh/v1alpha1 ElasticQuotaProfile (a quota tree's root sized by the nodes a
// selector picks) projected once from JSON, with the ratio and resource keys Koordinator reads.
#pragma once

#include <boost/json/fwd.hpp>

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "koord/kube/error.h"
#include "koord/kube/labels.h"

namespace koord::apis {

inline constexpr std::string_view kQuotaGroup = "quota.koordinator.sh";
inline constexpr std::string_view kQuotaVersion = "v1alpha1";
inline constexpr std::string_view kElasticQuotaProfileResource = "elasticquotaprofiles";
inline constexpr std::string_view kElasticQuotaProfileKind = "ElasticQuotaProfile";
inline constexpr std::string_view kElasticQuotaProfileShortName = "eqp";

/// Bound on spec.quotaLabels, and on the resource-keys annotation's items.
inline constexpr std::size_t kMaxElasticQuotaProfileListItems = 256;

struct ElasticQuotaProfile {
  std::string namespace_;
  std::string name;
  std::string uid;
  std::string resource_version;
  /// Its quota.scheduling.koordinator.sh/tree-id, once the controller has set it, among them.
  kube::Labels labels;
  kube::Labels annotations;
  std::chrono::system_clock::time_point creation_timestamp{};
  bool terminating = false;  // metadata.deletionTimestamp set

  // spec
  /// The ElasticQuota (in the profile's namespace) the profile keeps.
  std::string quota_name;
  /// Put on that quota's labels.
  kube::Labels quota_labels;
  /// spec.resourceRatio as written; nullopt when unset.
  std::optional<std::string> resource_ratio;
  /// spec.nodeSelector as written (required by the CRD; nullopt only in hand-made input), and
  /// compiled: a missing selector selects nothing, as a nil LabelSelector does.
  std::optional<kube::LabelSelector> node_selector;
  kube::Selector node_selector_compiled = kube::Selector::nothing();

  /// The quota.scheduling.koordinator.sh/resource-keys annotation as Koordinator's profile
  /// controller reads it: the names its quota's min and max cover. cpu and memory when unset,
  /// not JSON, not an array or over the bounds; an array's non-string items read as ""; null
  /// reads as no names.
  std::vector<std::string> resource_keys;

  /// What the nodes' total is multiplied by (DecorateResourceByResourceRatio): resourceRatio when
  /// it reads as a float in (0, 1], else 1.
  double resourceRatio() const;
  /// The tree-id label ("" until the controller has set one).
  std::string treeId() const;
};

/// Projects an ElasticQuotaProfile. Unknown fields are ignored and JSON null reads as absent; a
/// field of the wrong type, a node selector that does not compile, or more than
/// kMaxElasticQuotaProfileListItems quota labels is an error naming the field
/// ("spec.nodeSelector.matchExpressions[0].operator: ..."). The resource-keys annotation never
/// is (see resource_keys).
kube::Expected<ElasticQuotaProfile> decodeElasticQuotaProfile(const boost::json::value& v);

}  // namespace koord::apis
