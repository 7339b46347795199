// The quotaprofile controller's arithmetic: the ElasticQuota an ElasticQuotaProfile keeps, sized
// by the allocatable of the nodes its selector picks, as Koordinator's profile controller writes
// it.
#pragma once

#include <boost/json/object.hpp>

#include <string>
#include <string_view>
#include <vector>

#include "koord/apis/elastic_quota_profile.h"
#include "koord/kube/labels.h"
#include "koord/kube/quantity.h"

namespace koord::roles::manager {

/// What a profile reads of a node.
struct ProfileNode {
  kube::Labels labels;
  kube::ResourceList allocatable;
  bool unschedulable = false;  // spec.unschedulable
  bool ready = false;          // the Ready condition is True
};

/// The totals of the nodes the profile's selector picks, each scaled by spec.resourceRatio when
/// one is set (cpu in milli-cores, memory as a binary quantity, the rest as decimal integers,
/// each truncated); `unschedulable` holds the part on unschedulable or not-ready nodes.
struct ProfileTotals {
  kube::ResourceList total;
  kube::ResourceList unschedulable;
};
ProfileTotals profileTotals(const apis::ElasticQuotaProfile& profile,
                            const std::vector<ProfileNode>& nodes);

/// Koordinator's max for every resource key of a profile's quota: effectively unbounded, yet
/// small enough that sums of many quotas stay within an int64 of milli-units.
inline constexpr std::int64_t kProfileQuotaMax = INT64_MAX / 2000;

/// The tree id a profile is given when it has none: FNV-1a (64 bit) of "namespace/name", in
/// decimal.
std::string profileTreeId(std::string_view namespace_, std::string_view name);

/// `quota` (the stored ElasticQuota, or an empty object to create one) as the profile wants it:
/// spec.min is the total of each resource key (0 when absent) and spec.max kProfileQuotaMax for
/// each; the labels gain the profile label, spec.quotaLabels, the tree id and is-root=true; the
/// annotations total-resource and unschedulable-resource. Other fields are kept.
boost::json::object desiredProfileQuota(const boost::json::object& quota,
                                        const apis::ElasticQuotaProfile& profile,
                                        const ProfileTotals& totals, const std::string& tree_id);

}  // namespace koord::roles::manager
