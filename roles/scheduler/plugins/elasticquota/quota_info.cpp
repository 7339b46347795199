#include "plugins/elasticquota/quota_info.h"

namespace koord::roles::scheduler::elasticquota {

QuotaSpec quotaSpecFromElasticQuota(const apis::ElasticQuota& quota) {
  QuotaSpec spec;
  spec.name = quota.name;
  spec.namespace_ = quota.namespace_;
  spec.parent_name = quota.parent_name;
  spec.is_parent = quota.is_parent;
  spec.allow_lent_resource = quota.allow_lent_resource;
  spec.tree_id = quota.tree_id;
  spec.min = resourcesFromList(quota.min);
  spec.max = resourcesFromList(quota.max);
  spec.shared_weight = resourcesFromList(quota.shared_weight);
  spec.namespaces = quota.namespaces;
  return spec;
}

QuotaPod quotaPodFromPodInfo(const PodInfo& pod) {
  QuotaPod out;
  out.namespace_ = pod.namespace_;
  out.name = pod.name;
  out.uid = pod.uid;
  out.request = resourcesFromRequest(pod.requests);
  out.priority = pod.priority;
  out.start_time = pod.start_time;
  out.non_preemptible = apis::isPodNonPreemptible(pod.labels);
  out.assigned =
      !pod.node_name.empty() && pod.phase != PodPhase::kSucceeded && pod.phase != PodPhase::kFailed;
  out.terminating = pod.terminating;
  return out;
}

}  // namespace koord::roles::scheduler::elasticquota
