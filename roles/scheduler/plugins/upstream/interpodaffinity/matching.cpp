#include "plugins/upstream/interpodaffinity/matching.h"

#include <algorithm>

namespace koord::roles::scheduler::upstream::interpodaffinity {

namespace {

// Nodes without the term's topology key are in no domain: the match counts nowhere.
void addOnDomain(TopologyCounts& counts, const PodAffinityTerm& term,
                 const kube::Labels& node_labels, std::int64_t delta) {
  auto label = node_labels.find(term.topology_key);
  if (label != node_labels.end())
    counts.add(term.topology_key, label->second, delta);
}

}  // namespace

bool podMatchesTerm(const PodInfo& pod, const PodAffinityTerm& term) {
  // The namespace test first: a string compare over one or two entries, cheaper than most
  // selectors.
  if (std::find(term.namespaces.begin(), term.namespaces.end(), pod.namespace_) ==
      term.namespaces.end())
    return false;
  return term.label_selector.matches(pod.labels);
}

bool podMatchesAllTerms(const PodInfo& pod, const std::vector<PodAffinityTerm>& terms) {
  if (terms.empty())
    return false;
  return std::all_of(terms.begin(), terms.end(),
                     [&](const PodAffinityTerm& t) { return podMatchesTerm(pod, t); });
}

void countExistingAntiAffinity(TopologyCounts& counts, const PodInfo& incoming,
                               const PodInfo& existing, const kube::Labels& existing_node_labels,
                               std::int64_t delta) {
  for (const auto& term : existing.pod_anti_affinity.required) {
    if (podMatchesTerm(incoming, term))
      addOnDomain(counts, term, existing_node_labels, delta);
  }
}

void countIncomingAffinity(TopologyCounts& counts, const PodInfo& incoming, const PodInfo& existing,
                           const kube::Labels& existing_node_labels, std::int64_t delta) {
  const auto& terms = incoming.pod_affinity.required;
  if (!podMatchesAllTerms(existing, terms))
    return;
  for (const auto& term : terms)
    addOnDomain(counts, term, existing_node_labels, delta);
}

void countIncomingAntiAffinity(TopologyCounts& counts, const PodInfo& incoming,
                               const PodInfo& existing, const kube::Labels& existing_node_labels,
                               std::int64_t delta) {
  for (const auto& term : incoming.pod_anti_affinity.required) {
    if (podMatchesTerm(existing, term))
      addOnDomain(counts, term, existing_node_labels, delta);
  }
}

}  // namespace koord::roles::scheduler::upstream::interpodaffinity
