#include "koord/kube/scheduling_match.h"

#include <algorithm>

#include <fmt/format.h>

namespace koord::kube {
namespace {

// NodeSelectorRequirementsAsFieldSelector: only In and NotIn with exactly one value.
bool fieldsMatch(const std::vector<NodeSelectorRequirement>& fields, std::string_view node_name) {
  for (const auto& f : fields) {
    if (f.values.size() != 1)
      return false;
    if (f.op != NodeSelectorOperator::kIn && f.op != NodeSelectorOperator::kNotIn)
      return false;
    // Like fields.Set, a field other than metadata.name reads as "".
    std::string_view actual = f.key == kNodeNameField ? node_name : std::string_view{};
    bool equal = actual == f.values.front();
    if (equal != (f.op == NodeSelectorOperator::kIn))
      return false;
  }
  return true;
}

}  // namespace

Expected<Selector> nodeSelectorRequirementsAsSelector(
    const std::vector<NodeSelectorRequirement>& requirements) {
  if (requirements.empty())
    return Selector::nothing();
  Selector s;
  for (std::size_t i = 0; i < requirements.size(); ++i) {
    const auto& r = requirements[i];
    SelectorOperator op = SelectorOperator::kIn;
    switch (r.op) {
      case NodeSelectorOperator::kIn:
        op = SelectorOperator::kIn;
        break;
      case NodeSelectorOperator::kNotIn:
        op = SelectorOperator::kNotIn;
        break;
      case NodeSelectorOperator::kExists:
        op = SelectorOperator::kExists;
        break;
      case NodeSelectorOperator::kDoesNotExist:
        op = SelectorOperator::kDoesNotExist;
        break;
      case NodeSelectorOperator::kGt:
        op = SelectorOperator::kGreaterThan;
        break;
      case NodeSelectorOperator::kLt:
        op = SelectorOperator::kLessThan;
        break;
    }
    auto req = Requirement::make(r.key, op, r.values);
    if (!req)
      return makeKubeError(fmt::format("matchExpressions[{}]: {}", i, req.error().message));
    s.add(std::move(*req));
  }
  return s;
}

bool NodeSelectorTerm::matches(const Labels& node_labels, std::string_view node_name) const {
  if (match_expressions.empty() && match_fields.empty())
    return false;
  if (!match_expressions.empty()) {
    auto selector = nodeSelectorRequirementsAsSelector(match_expressions);
    if (!selector || !selector->matches(node_labels))
      return false;
  }
  if (!match_fields.empty() && !fieldsMatch(match_fields, node_name))
    return false;
  return true;
}

bool NodeSelector::matches(const Labels& node_labels, std::string_view node_name) const {
  return std::any_of(node_selector_terms.begin(), node_selector_terms.end(),
                     [&](const NodeSelectorTerm& t) { return t.matches(node_labels, node_name); });
}

bool podMatchesNodeSelectorAndAffinityTerms(const Labels& pod_node_selector,
                                            const NodeAffinity* affinity, const Labels& node_labels,
                                            std::string_view node_name) {
  for (const auto& [k, v] : pod_node_selector) {
    auto it = node_labels.find(k);
    if (it == node_labels.end() || it->second != v)
      return false;
  }
  if (affinity != nullptr && affinity->required) {
    return affinity->required->matches(node_labels, node_name);
  }
  return true;
}

Expected<std::int64_t> preferredSchedulingScore(const std::vector<PreferredSchedulingTerm>& terms,
                                                const Labels& node_labels) {
  std::int64_t score = 0;
  for (std::size_t i = 0; i < terms.size(); ++i) {
    const auto& term = terms[i];
    // A zero weight is ignored, not validated (1.20 skips it before building the selector).
    if (term.weight == 0)
      continue;
    auto selector = nodeSelectorRequirementsAsSelector(term.preference.match_expressions);
    if (!selector) {
      return makeKubeError(fmt::format("preferredDuringSchedulingIgnoredDuringExecution[{}]: {}", i,
                                       selector.error().message));
    }
    if (selector->matches(node_labels))
      score += term.weight;
  }
  return score;
}

bool tolerates(const Toleration& toleration, const Taint& taint) {
  if (toleration.effect != TaintEffect::kAll && toleration.effect != taint.effect)
    return false;
  if (!toleration.key.empty() && toleration.key != taint.key)
    return false;
  switch (toleration.op) {
    case TolerationOperator::kEqual:
      return toleration.value == taint.value;
    case TolerationOperator::kExists:
      return true;
  }
  return false;
}

bool tolerationsTolerateTaint(const std::vector<Toleration>& tolerations, const Taint& taint) {
  return std::any_of(tolerations.begin(), tolerations.end(),
                     [&](const Toleration& t) { return tolerates(t, taint); });
}

const Taint* findMatchingUntoleratedTaint(const std::vector<Taint>& taints,
                                          const std::vector<Toleration>& tolerations,
                                          const std::function<bool(const Taint&)>& filter) {
  for (const auto& taint : taints) {
    if (filter && !filter(taint))
      continue;
    if (!tolerationsTolerateTaint(tolerations, taint))
      return &taint;
  }
  return nullptr;
}

const Taint* findUntoleratedTaint(const std::vector<Taint>& taints,
                                  const std::vector<Toleration>& tolerations) {
  return findMatchingUntoleratedTaint(taints, tolerations, [](const Taint& t) {
    return t.effect == TaintEffect::kNoSchedule || t.effect == TaintEffect::kNoExecute;
  });
}

int countIntolerableTaintsPreferNoSchedule(const std::vector<Taint>& taints,
                                           const std::vector<Toleration>& tolerations) {
  std::vector<Toleration> prefer;
  for (const auto& t : tolerations) {
    if (t.effect == TaintEffect::kAll || t.effect == TaintEffect::kPreferNoSchedule) {
      prefer.push_back(t);
    }
  }
  int count = 0;
  for (const auto& taint : taints) {
    if (taint.effect != TaintEffect::kPreferNoSchedule)
      continue;
    if (!tolerationsTolerateTaint(prefer, taint))
      ++count;
  }
  return count;
}

std::string_view toString(NodeSelectorOperator op) {
  switch (op) {
    case NodeSelectorOperator::kIn:
      return "In";
    case NodeSelectorOperator::kNotIn:
      return "NotIn";
    case NodeSelectorOperator::kExists:
      return "Exists";
    case NodeSelectorOperator::kDoesNotExist:
      return "DoesNotExist";
    case NodeSelectorOperator::kGt:
      return "Gt";
    case NodeSelectorOperator::kLt:
      return "Lt";
  }
  return "?";
}

std::string_view toString(TaintEffect effect) {
  switch (effect) {
    case TaintEffect::kAll:
      return "";
    case TaintEffect::kNoSchedule:
      return "NoSchedule";
    case TaintEffect::kPreferNoSchedule:
      return "PreferNoSchedule";
    case TaintEffect::kNoExecute:
      return "NoExecute";
  }
  return "?";
}

std::string_view toString(TolerationOperator op) {
  return op == TolerationOperator::kExists ? "Exists" : "Equal";
}

}  // namespace koord::kube
