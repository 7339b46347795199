// One quota of the tree as the elastic-quota core keeps it (its spec and labels read once, and
// the figures derived from its pods and children), and the part of a pod the quota accounting
// reads.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "framework/pod_info.h"
#include "koord/apis/elastic_quota.h"
#include "plugins/elasticquota/resources.h"

namespace koord::roles::scheduler::elasticquota {

/// What an ElasticQuota says about itself.
struct QuotaSpec {
  std::string name;
  std::string namespace_;
  /// kRootQuotaName when the parent label is unset; "" only for the root.
  std::string parent_name;
  /// The is-parent label; the manager's summary reports whether the quota has children instead,
  /// as Koordinator does once the tree is built.
  bool is_parent = false;
  bool allow_lent_resource = true;
  std::string tree_id;
  Resources min;
  Resources max;
  /// The shared-weight annotation, else max.
  Resources shared_weight;
  /// The quota-namespaces annotation.
  std::vector<std::string> namespaces;
};

QuotaSpec quotaSpecFromElasticQuota(const apis::ElasticQuota& quota);

/// A pod as the quota accounting sees it.
struct QuotaPod {
  std::string namespace_;
  std::string name;
  std::string uid;
  Resources request;
  std::int32_t priority = 0;
  /// status.startTime; a pod not started yet counts as started now, as kube-scheduler counts it.
  std::optional<std::chrono::system_clock::time_point> start_time;
  /// quota.scheduling.koordinator.sh/preemptible=false.
  bool non_preemptible = false;
  /// Has a node and has not terminated: its request counts as used from the moment it is seen.
  bool assigned = false;
  /// metadata.deletionTimestamp set: still counted as used until it is gone, so a revoke picks
  /// it as already given back instead of taking another pod, and sends it no second eviction.
  bool terminating = false;
};

QuotaPod quotaPodFromPodInfo(const PodInfo& pod);

/// A quota's figures, as the quota status controller writes them back (Koordinator's
/// QuotaInfoSummary, pods left out).
struct QuotaSummary {
  std::string name;
  std::string parent_name;
  bool is_parent = false;
  bool allow_lent_resource = true;
  /// Not under the root: its parent is missing, its parents loop or the tree is too deep (see
  /// GroupQuotaManager::treeProblems). Such a quota has no runtime.
  bool detached = false;
  Resources max;
  Resources min;
  /// min as the runtime calculation used it, scaled down when the siblings' mins overflow.
  Resources auto_scale_min;
  Resources shared_weight;
  /// What the quota asks of its parent: child_request, raised to min when it does not lend.
  Resources request;
  /// Its own pods' requests plus its children's requests capped at their max.
  Resources child_request;
  Resources used;
  Resources non_preemptible_request;
  Resources non_preemptible_used;
  Resources self_request;
  Resources self_used;
  /// What the quota may use now: every resource of the tree, not only those of its max.
  Resources runtime;
};

}  // namespace koord::roles::scheduler::elasticquota
