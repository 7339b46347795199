// The ElasticQuota PreFilter test as pure functions: does a pod's request fit what its quota (and
// each ancestor) may still use, and if not, Koordinator's words for why.
#pragma once

#include <optional>
#include <span>
#include <string>

#include "plugins/elasticquota/resources.h"

namespace koord::roles::scheduler::elasticquota {

/// A quota's figures at the start of a scheduling cycle (Koordinator's PostFilterState): the
/// preemption dry runs add and remove pods from `used` without touching the manager.
struct QuotaCheckState {
  std::string quota_name;
  Resources used;
  Resources non_preemptible_used;
  /// The runtime quota, or max when runtime quota is turned off.
  Resources used_limit;
  Resources min;
};

/// nullopt when the pod fits: used plus the pod's request, in the resources the pod asks for,
/// stays within used_limit, and for a non-preemptible pod the quota's non-preemptible pods stay
/// within min. Otherwise "Insufficient quotas, quotaName: ..." (or "Insufficient
/// non-preemptible quotas, ...") naming the resources exceeded.
std::optional<std::string> checkQuotaFit(const QuotaCheckState& state, const Resources& pod_request,
                                         bool pod_non_preemptible);

/// The same test against an ancestor; `quota_name_topo` lists the quotas from that ancestor down
/// to the pod's quota, which the message prints as Koordinator's quotaNameTopo.
std::optional<std::string> checkAncestorFit(std::span<const std::string> quota_name_topo,
                                            const Resources& used, const Resources& used_limit,
                                            const Resources& pod_request);

}  // namespace koord::roles::scheduler::elasticquota
