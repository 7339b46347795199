// Revoking pods of a quota that uses more than its runtime: which pods go (Koordinator's
// QuotaOverUsedGroupMonitor order), and the grace period before a quota is revoked at all.
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "plugins/elasticquota/quota_info.h"
#include "plugins/elasticquota/resources.h"

namespace koord::roles::scheduler::elasticquota {

/// Kube-scheduler's MoreImportantPod reversed: lower priority first, then the pod started last
/// (one not started counts as started at `now`); names break the remaining ties.
bool lessImportantPod(const QuotaPod& a, const QuotaPod& b,
                      std::chrono::system_clock::time_point now);

/// The assigned pods to evict so that `used` comes back within `runtime`. Pods are taken least
/// important first (terminating ones before all others), non-preemptible ones never, until used
/// fits; then, most important first, each taken pod that would still fit and is not terminating
/// is given back. When even taking every preemptible pod
/// does not bring used within runtime, all of them are returned.
std::vector<QuotaPod> choosePodsToRevoke(const Resources& used, const Resources& runtime,
                                         std::vector<QuotaPod> assigned_pods,
                                         std::chrono::system_clock::time_point now);

/// When each quota was last seen within its runtime. A quota is due for revocation once it has
/// been over for longer than the delay; being revoked restarts its clock, so the next round of
/// evictions waits a full delay again. Not thread-safe: its owner locks.
class OverUseTracker {
 public:
  /// Records one look at `quota`; true when it is due. A quota seen for the first time starts
  /// its clock at `now`.
  bool observe(std::string_view quota, bool over, std::chrono::system_clock::time_point now,
               std::chrono::nanoseconds delay);
  /// Drops the quotas not in `names` (deleted ones).
  void retain(const std::vector<std::string>& names);

 private:
  std::map<std::string, std::chrono::system_clock::time_point, std::less<>> last_within_;
};

}  // namespace koord::roles::scheduler::elasticquota
