// How one pod counts against another's (anti-)affinity terms on a node: the term's namespaces
// and selector against the pod, the node's value of the term's topology key as the domain.
// Shared by PreFilter's walk and by AddPod/RemovePod, so both count alike.
#pragma once

#include <cstdint>
#include <vector>

#include "framework/pod_info.h"
#include "koord/kube/labels.h"
#include "plugins/upstream/interpodaffinity/topology_counts.h"

namespace koord::roles::scheduler::upstream::interpodaffinity {

/// The pod is in one of the term's namespaces and its labels match the term's selector.
bool podMatchesTerm(const PodInfo& pod, const PodAffinityTerm& term);
/// False for no terms: an empty list selects no pod.
bool podMatchesAllTerms(const PodInfo& pod, const std::vector<PodAffinityTerm>& terms);

/// The existing pod's required anti-affinity terms that match the incoming pod, one count each
/// on the domain of the existing pod's node.
void countExistingAntiAffinity(TopologyCounts& counts, const PodInfo& incoming,
                               const PodInfo& existing, const kube::Labels& existing_node_labels,
                               std::int64_t delta);

/// When the existing pod matches every required affinity term of the incoming pod, one count
/// per term on the domain of the existing pod's node.
void countIncomingAffinity(TopologyCounts& counts, const PodInfo& incoming, const PodInfo& existing,
                           const kube::Labels& existing_node_labels, std::int64_t delta);

/// The incoming pod's required anti-affinity terms the existing pod matches, one count each on
/// the domain of the existing pod's node.
void countIncomingAntiAffinity(TopologyCounts& counts, const PodInfo& incoming,
                               const PodInfo& existing, const kube::Labels& existing_node_labels,
                               std::int64_t delta);

}  // namespace koord::roles::scheduler::upstream::interpodaffinity
