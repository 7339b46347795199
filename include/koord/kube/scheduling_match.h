// Node affinity and taint/toleration matching with kube-scheduler 1.20's semantics, over the
// compact structs the informers project pods and nodes into.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "koord/kube/error.h"
#include "koord/kube/labels.h"

namespace koord::kube {

/// The only field a NodeSelectorTerm's matchFields may name.
inline constexpr std::string_view kNodeNameField = "metadata.name";

enum class NodeSelectorOperator { kIn, kNotIn, kExists, kDoesNotExist, kGt, kLt };

struct NodeSelectorRequirement {
  std::string key;
  NodeSelectorOperator op = NodeSelectorOperator::kIn;
  std::vector<std::string> values;

  friend bool operator==(const NodeSelectorRequirement&, const NodeSelectorRequirement&) = default;
};

/// matchExpressions AND matchFields. A term with neither matches nothing.
struct NodeSelectorTerm {
  std::vector<NodeSelectorRequirement> match_expressions;
  std::vector<NodeSelectorRequirement> match_fields;

  /// An invalid requirement (bad key or value, Gt/Lt without one integer, a matchFields
  /// operator other than In/NotIn with one value) makes the term match nothing, as in 1.20.
  bool matches(const Labels& node_labels, std::string_view node_name) const;

  friend bool operator==(const NodeSelectorTerm&, const NodeSelectorTerm&) = default;
};

/// Terms ORed; no terms match nothing.
struct NodeSelector {
  std::vector<NodeSelectorTerm> node_selector_terms;

  bool matches(const Labels& node_labels, std::string_view node_name) const;

  friend bool operator==(const NodeSelector&, const NodeSelector&) = default;
};

struct PreferredSchedulingTerm {
  std::int32_t weight = 0;
  NodeSelectorTerm preference;

  friend bool operator==(const PreferredSchedulingTerm&, const PreferredSchedulingTerm&) = default;
};

/// pod.spec.affinity.nodeAffinity.
struct NodeAffinity {
  /// requiredDuringSchedulingIgnoredDuringExecution; nullopt means no requirement.
  std::optional<NodeSelector> required;
  /// preferredDuringSchedulingIgnoredDuringExecution.
  std::vector<PreferredSchedulingTerm> preferred;

  friend bool operator==(const NodeAffinity&, const NodeAffinity&) = default;
};

/// matchExpressions as a label Selector (NodeSelectorRequirementsAsSelector): an empty list is
/// the match-nothing selector; errors name the requirement.
Expected<Selector> nodeSelectorRequirementsAsSelector(
    const std::vector<NodeSelectorRequirement>& requirements);

/// The NodeAffinity filter: every pod.spec.nodeSelector pair is on the node, and the required
/// node affinity (when present) matches. `affinity` may be null.
bool podMatchesNodeSelectorAndAffinityTerms(const Labels& pod_node_selector,
                                            const NodeAffinity* affinity, const Labels& node_labels,
                                            std::string_view node_name);

/// The NodeAffinity score before normalisation: the sum of the weights of the preferred terms
/// whose matchExpressions match (1.20 reads only matchExpressions here; an empty list matches
/// nothing). An invalid requirement is an error, as it fails the score in 1.20.
Expected<std::int64_t> preferredSchedulingScore(const std::vector<PreferredSchedulingTerm>& terms,
                                                const Labels& node_labels);

/// An empty effect (kAll) is only meaningful in a toleration, where it matches every effect.
enum class TaintEffect { kAll, kNoSchedule, kPreferNoSchedule, kNoExecute };

struct Taint {
  std::string key;
  std::string value;
  TaintEffect effect = TaintEffect::kNoSchedule;

  friend bool operator==(const Taint&, const Taint&) = default;
};

/// "" in the API means kEqual.
enum class TolerationOperator { kEqual, kExists };

struct Toleration {
  /// Empty with kExists tolerates every taint.
  std::string key;
  TolerationOperator op = TolerationOperator::kEqual;
  std::string value;
  TaintEffect effect = TaintEffect::kAll;
  /// Only for NoExecute: how long the pod stays bound once the taint appears.
  std::optional<std::int64_t> toleration_seconds;

  friend bool operator==(const Toleration&, const Toleration&) = default;
};

/// v1.Toleration.ToleratesTaint.
bool tolerates(const Toleration& toleration, const Taint& taint);
bool tolerationsTolerateTaint(const std::vector<Toleration>& tolerations, const Taint& taint);

/// The first taint that passes `filter` and no toleration tolerates; nullptr when none.
const Taint* findMatchingUntoleratedTaint(const std::vector<Taint>& taints,
                                          const std::vector<Toleration>& tolerations,
                                          const std::function<bool(const Taint&)>& filter);
/// The TaintToleration filter: the first untolerated NoSchedule or NoExecute taint.
const Taint* findUntoleratedTaint(const std::vector<Taint>& taints,
                                  const std::vector<Toleration>& tolerations);
/// The TaintToleration score before normalisation: PreferNoSchedule taints not tolerated by a
/// toleration whose effect is empty or PreferNoSchedule.
int countIntolerableTaintsPreferNoSchedule(const std::vector<Taint>& taints,
                                           const std::vector<Toleration>& tolerations);

std::string_view toString(NodeSelectorOperator op);
std::string_view toString(TaintEffect effect);
std::string_view toString(TolerationOperator op);

}  // namespace koord::kube
