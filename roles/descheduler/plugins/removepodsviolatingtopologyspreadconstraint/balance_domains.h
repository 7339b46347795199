// The community descheduler's domain balancing for one topology spread constraint: which pods to
// move so that no two domains differ by more than maxSkew, taking from the largest domains and
// never pushing a domain past the average.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "framework/types.h"

namespace koord::roles::descheduler::topologyspread {

/// One value of the constraint's topology key and the matching pods in it.
struct Domain {
  std::string value;
  std::vector<const Pod*> pods;
};

/// Whether every two domains are within `max_skew` of each other.
bool domainsBalanced(const std::vector<Domain>& domains, std::int32_t max_skew);

/// The pods to evict from `domains` (taken by value: the algorithm moves pods between them as it
/// goes), in the order chosen. `evictable` puts pods the evictor keeps at the bottom of each
/// domain, where they are chosen last; `fits` (a pod, the nodes of the domains below the
/// average) says whether a chosen pod would land elsewhere, and a pod that would not is counted
/// as moved but not returned.
std::vector<const Pod*> balanceDomains(
    std::vector<Domain> domains, std::int32_t max_skew,
    const std::function<bool(const Pod&)>& evictable,
    const std::function<bool(const Pod&, const std::vector<std::string>& domain_values)>& fits);

}  // namespace koord::roles::descheduler::topologyspread
