#include "queue/pod_updated.h"

#include <algorithm>

namespace koord::roles::scheduler {

namespace {

// PodInfo's nested scheduling types have no operator== (the framework headers are shared and
// left alone), so the comparison spells out their fields here.
bool sameTerm(const PodAffinityTerm& a, const PodAffinityTerm& b) {
  return a.label_selector == b.label_selector && a.namespaces == b.namespaces &&
         a.topology_key == b.topology_key;
}

bool sameWeightedTerm(const WeightedPodAffinityTerm& a, const WeightedPodAffinityTerm& b) {
  return a.weight == b.weight && sameTerm(a.term, b.term);
}

bool sameRules(const PodAffinityRules& a, const PodAffinityRules& b) {
  return std::equal(a.required.begin(), a.required.end(), b.required.begin(), b.required.end(),
                    sameTerm) &&
         std::equal(a.preferred.begin(), a.preferred.end(), b.preferred.begin(), b.preferred.end(),
                    sameWeightedTerm);
}

bool sameSpread(const TopologySpreadConstraint& a, const TopologySpreadConstraint& b) {
  return a.max_skew == b.max_skew && a.topology_key == b.topology_key &&
         a.when_unsatisfiable == b.when_unsatisfiable && a.label_selector == b.label_selector;
}

bool sameMetadata(const PodInfo& a, const PodInfo& b) {
  return a.namespace_ == b.namespace_ && a.name == b.name && a.uid == b.uid &&
         a.labels == b.labels && a.annotations == b.annotations &&
         a.creation_timestamp == b.creation_timestamp && a.terminating == b.terminating &&
         a.controller_kind == b.controller_kind && a.controller_name == b.controller_name;
}

bool sameSpec(const PodInfo& a, const PodInfo& b) {
  return a.scheduler_name == b.scheduler_name && a.node_name == b.node_name &&
         a.priority == b.priority && a.preempt_never == b.preempt_never &&
         a.requests == b.requests && a.non_zero_requests == b.non_zero_requests &&
         a.limits == b.limits && a.host_ports == b.host_ports &&
         a.node_selector == b.node_selector && a.node_affinity == b.node_affinity &&
         sameRules(a.pod_affinity, b.pod_affinity) &&
         sameRules(a.pod_anti_affinity, b.pod_anti_affinity) && a.tolerations == b.tolerations &&
         std::equal(a.topology_spread_constraints.begin(), a.topology_spread_constraints.end(),
                    b.topology_spread_constraints.begin(), b.topology_spread_constraints.end(),
                    sameSpread) &&
         a.qos == b.qos && a.priority_class == b.priority_class;
}

}  // namespace

bool isPodUpdated(const PodInfo& old_pod, const PodInfo& new_pod) {
  return !(sameMetadata(old_pod, new_pod) && sameSpec(old_pod, new_pod));
}

}  // namespace koord::roles::scheduler
