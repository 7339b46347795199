// Quota resource vectors as the elastic-quota arithmetic sees them: a name -> int64 map (cpu in
// millicores, everything else by Quantity::value()), where a missing name differs from a zero.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "framework/resource.h"
#include "koord/kube/quantity.h"

namespace koord::roles::scheduler::elasticquota {

/// Koordinator compares quota lists key by key and treats an absent key as "not limited" (in a
/// max or a runtime) or "not asked for" (in a request), so the keys present are part of the value.
using Resources = std::map<std::string, std::int64_t, std::less<>>;

/// cpu as millicores, the rest by value() (rounded up), as Koordinator's getQuantityValue.
Resources resourcesFromList(const kube::ResourceList& list);
/// A pod's effective request: the resources it asks a non-zero amount of.
Resources resourcesFromRequest(const Resource& request);
/// Back to quantities in Koordinator's formats: cpu DecimalSI from millicores, memory BinarySI,
/// the rest DecimalSI.
kube::ResourceList resourcesToList(const Resources& r);
/// "cpu:1500m,memory:1Gi" sorted by name, "<empty>" when empty (Koordinator's printResourceList).
std::string printResources(const Resources& r);

/// a + b over the union of names; saturating, since defaulted maxima are near int64's edge.
Resources addResources(const Resources& a, const Resources& b);
/// a - b over the union of names; saturating.
Resources subtractResources(const Resources& a, const Resources& b);
/// Adds (sign > 0) or takes away `r` in place, saturating: a pod counted in or out of a quota's
/// figures. A name taken down to zero goes, as a full count would not have it.
void chargeResources(Resources& into, const Resources& r, int sign);
/// Only the entries of `r` whose names are in `names`.
Resources maskResources(const Resources& r, const Resources& names);
/// max() per name over the union of names.
Resources maxResources(const Resources& a, const Resources& b);
/// Every entry of `request` whose name `max` has, capped at max.
Resources capResources(const Resources& request, const Resources& max);
/// chargeResources(into, capResources(request, max), +1) without the capped copy: the quota
/// tree's request sums run on every pod event.
void chargeCapped(Resources& into, const Resources& request, const Resources& max);
/// The value of `name`, 0 when absent.
std::int64_t valueOf(const Resources& r, std::string_view name);
/// The names of `limit` whose value `used` exceeds (names `used` lacks never do), sorted: the
/// check of Koordinator's quotav1.LessThanOrEqual(used, limit).
std::vector<std::string> exceededNames(const Resources& used, const Resources& limit);
inline bool fitsWithin(const Resources& used, const Resources& limit) {
  return exceededNames(used, limit).empty();
}

std::int64_t saturatingAdd(std::int64_t a, std::int64_t b);
std::int64_t saturatingSub(std::int64_t a, std::int64_t b);

}  // namespace koord::roles::scheduler::elasticquota
