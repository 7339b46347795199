// The elastic-quota tree of one scheduler (Koordinator's GroupQuotaManager): quotas from their
// ElasticQuota objects, pods' requests and usage charged to them, and each quota's runtime quota.
#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "framework/status.h"
#include "koord/apis/elastic_quota.h"
#include "koord/kube/error.h"
#include "koord/kube/labels.h"
#include "plugins/elasticquota/args.h"
#include "plugins/elasticquota/overuse_revoke.h"
#include "plugins/elasticquota/quota_check.h"
#include "plugins/elasticquota/quota_info.h"
#include "plugins/elasticquota/resources.h"

namespace koord::roles::scheduler::elasticquota {

/// Bounds on what the ElasticQuota objects can make the manager hold: quotas below this depth
/// (the root's children are at depth 1) are left out of the tree, and quotas past this count
/// are refused.
inline constexpr std::size_t kMaxQuotaTreeDepth = 32;
inline constexpr std::size_t kMaxQuotas = 65536;

/// Thread-safe: every method takes one mutex, as the quota and pod informers call it while the
/// scheduling thread runs PreFilter and Reserve. A pod's event moves the figures of its quota and
/// its ancestors only; the runtime quotas are worked out again on the first read after a request,
/// a quota or the cluster's total changed, never on a write, and not for usage alone.
///
/// The root (koordinator-root-quota), system (koordinator-system-quota) and default
/// (koordinator-default-quota) quotas exist from the start. The root's runtime is the cluster's
/// total less what the system and default quotas' pods use; those two are not shared into, and
/// their runtime is their max.
class GroupQuotaManager {
 public:
  /// The system and default quotas' maxima, and the PreFilter and revoke settings, come from
  /// `args`. `scale_min_quota`: cut children's mins in proportion when they overflow the parent
  /// (Koordinator always does).
  explicit GroupQuotaManager(const ElasticQuotaArgs& args, bool scale_min_quota = true);

  /// Adds or replaces a quota (its pods stay charged to it). The root is Koordinator's own and
  /// keeps its place; a terminating quota is ignored, as Koordinator ignores it. Refused past
  /// kMaxQuotas.
  kube::Expected<void> updateQuota(const apis::ElasticQuota& quota);
  /// Removes a quota; its pods move to the default quota. Refused for the three built-in ones.
  kube::Expected<void> deleteQuota(std::string_view name);
  bool hasQuota(std::string_view name);
  std::vector<std::string> quotaNames();

  /// The cluster's allocatable (summed over the nodes by the caller).
  void setClusterTotalResource(Resources total);
  Resources clusterTotalResource();

  /// The quota a pod is charged to: its quota-name label; else the ElasticQuota in the pod's
  /// namespace named after it; else the first quota (by name) whose namespaces annotation lists
  /// it; else the default quota. A name that is no known quota becomes the default quota too.
  std::string podQuotaName(std::string_view pod_namespace, const kube::Labels& pod_labels);

  /// Adds the pod to `quota`, or updates it there, moving it when it was charged to another
  /// quota. Its request counts at once, and its usage too once it is assigned; a pod once
  /// assigned stays so until unreserved or deleted. An unknown quota is ignored.
  void onPodAdd(std::string_view quota, const QuotaPod& pod);
  void onPodUpdate(std::string_view quota, const QuotaPod& pod) { onPodAdd(quota, pod); }
  void onPodDelete(std::string_view pod_namespace, std::string_view pod_name);
  /// Reserve: the pod's request counts as used from now (added to `quota` if not seen yet).
  void reservePod(std::string_view quota, const QuotaPod& pod);
  /// Unreserve: the pod no longer counts as used (its request still does).
  void unreservePod(std::string_view pod_namespace, std::string_view pod_name);

  /// The quota's figures, runtime up to date; nullopt for an unknown quota.
  std::optional<QuotaSummary> summary(std::string_view name);
  /// The quota's runtime limited to the resources of its max (Koordinator's RefreshRuntime).
  std::optional<Resources> refreshRuntime(std::string_view name);

  /// The quota's PreFilter state: the limit is the runtime, or max when args turn runtime quota
  /// off. nullopt for an unknown quota.
  std::optional<QuotaCheckState> checkState(std::string_view quota);
  /// PreFilter for a pod of `quota`: Unschedulable with Koordinator's message when it does not
  /// fit (its quota, then with enableCheckParentQuota each ancestor below the root), Error for
  /// an unknown quota, else Success. `checked`, when given, receives the state the check read
  /// (what checkState would answer), for the cycle's preemption to start from.
  Status preFilter(std::string_view quota, const QuotaPod& pod, QuotaCheckState* checked = nullptr);

  /// The pods of `quota` to evict now for it to fit its runtime (no grace period).
  std::vector<QuotaPod> podsToRevoke(std::string_view quota,
                                     std::chrono::system_clock::time_point now);
  /// One round of Koordinator's revoke controller: every quota but the root and the system one
  /// is looked at; those over their runtime for longer than delayEvictTime give up pods. Call
  /// every revokePodInterval when monitorAllQuotas and enableRuntimeQuota are set.
  std::vector<QuotaPod> revokeOverUsedQuotas(std::chrono::system_clock::time_point now);

  /// Why some quotas are not in the tree ("quota a: parent b not found", parents looping, too
  /// deep), sorted; empty when every quota hangs below the root.
  std::vector<std::string> treeProblems();

 private:
  struct Quota {
    QuotaSpec spec;
    /// By "namespace/name".
    std::map<std::string, QuotaPod, std::less<>> pods;
    // Derived by refresh().
    QuotaSummary figures;
    std::vector<std::string> children;
    bool attached = false;
  };

  Quota* findNoLock(std::string_view name);
  void refreshNoLock();
  void rebuildTopologyNoLock();
  void computeFiguresNoLock();
  void computeRuntimeNoLock();
  std::optional<QuotaCheckState> checkStateNoLock(std::string_view quota);
  void addPodNoLock(Quota& quota, QuotaPod pod);
  /// Where a quota's figures add into: its parent, the root for the system and default quotas,
  /// none for the root and for quotas outside the tree.
  Quota* parentInTreeNoLock(const Quota& quota);
  /// Counts a pod in (sign +1) or out (-1) of the figures already worked out, up the tree, so
  /// that a pod event costs the tree's depth rather than a recount: only its usage, or its
  /// request and usage (the runtime quotas are then worked out again on the next read).
  void chargeUsedNoLock(Quota& quota, const QuotaPod& pod, int sign);
  void chargeNoLock(Quota& quota, const QuotaPod& pod, int sign);
  std::vector<QuotaPod> podsToRevokeNoLock(Quota& quota, std::chrono::system_clock::time_point now);

  std::mutex mu_;
  const bool scale_min_quota_;
  const bool enable_runtime_quota_;
  const bool enable_check_parent_quota_;
  const std::chrono::nanoseconds delay_evict_time_;
  std::map<std::string, Quota, std::less<>> quotas_;
  /// "namespace/name" -> the quota the pod is charged to.
  std::map<std::string, std::string, std::less<>> pod_quota_;
  Resources cluster_total_;
  bool topology_dirty_ = true;
  bool figures_dirty_ = true;
  /// The figures are right but the runtime quotas are not (a request or the total moved).
  bool runtime_dirty_ = true;
  /// Attached quotas, every parent before its children, the root first.
  std::vector<std::string> order_;
  /// The resources any quota's max names (the system and default quotas' aside).
  std::vector<std::string> resource_keys_;
  std::vector<std::string> problems_;
  OverUseTracker over_use_;
};

}  // namespace koord::roles::scheduler::elasticquota
