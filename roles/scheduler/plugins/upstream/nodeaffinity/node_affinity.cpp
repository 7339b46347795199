#include "plugins/upstream/nodeaffinity/node_affinity.h"

#include <boost/json.hpp>

#include <fmt/format.h>

#include "koord/kube/decode.h"
#include "koord/kube/json_fields.h"
#include "plugins/upstream/args_decode.h"
#include "plugins/upstream/normalize_score.h"

namespace koord::roles::scheduler::upstream {

namespace {

namespace json = boost::json;
using kube::jsonfields::childPath;
using kube::jsonfields::indexPath;
using kube::jsonfields::typeError;

// kube's NodeAffinity decoder ignores unknown fields (right for pods, which the API server has
// already checked); args come from a file nobody checked, so their shape is walked first.
kube::Expected<void> checkRequirementsShape(const json::object& term, std::string_view name,
                                            std::string_view path) {
  const json::value* list = kube::jsonfields::field(term, name);
  if (list == nullptr)
    return {};
  if (!list->is_array())
    return typeError(childPath(path, name), "array", *list);
  for (std::size_t i = 0; i < list->get_array().size(); ++i) {
    const json::value& r = list->get_array()[i];
    const std::string rp = indexPath(childPath(path, name), i);
    if (!r.is_object())
      return typeError(rp, "object", r);
    auto known = checkKnownFields(r.get_object(), {"key", "operator", "values"}, rp);
    if (!known)
      return known.error();
  }
  return {};
}

kube::Expected<void> checkTermShape(const json::value& term, std::string_view path) {
  if (!term.is_object())
    return typeError(path, "object", term);
  const json::object& o = term.get_object();
  if (auto known = checkKnownFields(o, {"matchExpressions", "matchFields"}, path); !known)
    return known.error();
  if (auto r = checkRequirementsShape(o, "matchExpressions", path); !r)
    return r.error();
  return checkRequirementsShape(o, "matchFields", path);
}

kube::Expected<void> checkAffinityShape(const json::value& v, std::string_view path) {
  if (!v.is_object())
    return typeError(path, "object", v);
  const json::object& o = v.get_object();
  constexpr std::string_view kRequired = "requiredDuringSchedulingIgnoredDuringExecution";
  constexpr std::string_view kPreferred = "preferredDuringSchedulingIgnoredDuringExecution";
  if (auto known = checkKnownFields(o, {kRequired, kPreferred}, path); !known)
    return known.error();
  if (const json::value* req = kube::jsonfields::field(o, kRequired)) {
    const std::string rp = childPath(path, kRequired);
    if (!req->is_object())
      return typeError(rp, "object", *req);
    if (auto known = checkKnownFields(req->get_object(), {"nodeSelectorTerms"}, rp); !known)
      return known.error();
    if (const json::value* terms =
            kube::jsonfields::field(req->get_object(), "nodeSelectorTerms")) {
      const std::string tp = childPath(rp, "nodeSelectorTerms");
      if (!terms->is_array())
        return typeError(tp, "array", *terms);
      for (std::size_t i = 0; i < terms->get_array().size(); ++i) {
        if (auto t = checkTermShape(terms->get_array()[i], indexPath(tp, i)); !t)
          return t.error();
      }
    }
  }
  if (const json::value* pref = kube::jsonfields::field(o, kPreferred)) {
    const std::string pp = childPath(path, kPreferred);
    if (!pref->is_array())
      return typeError(pp, "array", *pref);
    for (std::size_t i = 0; i < pref->get_array().size(); ++i) {
      const json::value& p = pref->get_array()[i];
      const std::string ip = indexPath(pp, i);
      if (!p.is_object())
        return typeError(ip, "object", p);
      if (auto known = checkKnownFields(p.get_object(), {"weight", "preference"}, ip); !known)
        return known.error();
      if (const json::value* term = kube::jsonfields::field(p.get_object(), "preference")) {
        if (auto t = checkTermShape(*term, childPath(ip, "preference")); !t)
          return t.error();
      }
    }
  }
  return {};
}

// What nodeaffinity.NewNodeSelector checks: every requirement is a valid selector clause, and
// matchFields names metadata.name with In/NotIn and exactly one value.
kube::Expected<void> validateTerm(const kube::NodeSelectorTerm& term, std::string_view path) {
  if (!term.match_expressions.empty()) {
    auto selector = kube::nodeSelectorRequirementsAsSelector(term.match_expressions);
    if (!selector)
      return kube::makeKubeError(
          fmt::format("{}: {}", childPath(path, "matchExpressions"), selector.error().message));
  }
  for (std::size_t i = 0; i < term.match_fields.size(); ++i) {
    const auto& r = term.match_fields[i];
    const std::string rp = indexPath(childPath(path, "matchFields"), i);
    if (r.key != kube::kNodeNameField)
      return kube::makeKubeError(
          fmt::format("{}.key: Invalid value: \"{}\": not a valid field "
                      "selector key",
                      rp, r.key));
    if (r.op != kube::NodeSelectorOperator::kIn && r.op != kube::NodeSelectorOperator::kNotIn)
      return kube::makeKubeError(
          fmt::format("{}.operator: Invalid value: \"{}\": not a valid selector operator", rp,
                      kube::toString(r.op)));
    if (r.values.size() != 1)
      return kube::makeKubeError(
          fmt::format("{}.values: Required value: must be only one value when `operator` is "
                      "'In' or 'NotIn' for node field selector",
                      rp));
  }
  return {};
}

kube::Expected<void> validateAffinity(const kube::NodeAffinity& a, std::string_view path) {
  if (a.required) {
    const std::string tp = childPath(
        childPath(path, "requiredDuringSchedulingIgnoredDuringExecution"), "nodeSelectorTerms");
    for (std::size_t i = 0; i < a.required->node_selector_terms.size(); ++i) {
      if (auto v = validateTerm(a.required->node_selector_terms[i], indexPath(tp, i)); !v)
        return v.error();
    }
  }
  const std::string pp = childPath(path, "preferredDuringSchedulingIgnoredDuringExecution");
  for (std::size_t i = 0; i < a.preferred.size(); ++i) {
    const std::string ip = indexPath(pp, i);
    if (a.preferred[i].weight < 1 || a.preferred[i].weight > 100)
      return kube::makeKubeError(fmt::format(
          "{}.weight: Invalid value: {}: must be in the range 1-100", ip, a.preferred[i].weight));
    if (auto v = validateTerm(a.preferred[i].preference, childPath(ip, "preference")); !v)
      return v.error();
  }
  return {};
}

}  // namespace

kube::Expected<std::shared_ptr<const NodeAffinityArgs>> decodeNodeAffinityArgs(
    const json::value* args, std::string_view) {
  auto out = std::make_shared<NodeAffinityArgs>();
  auto o = argsObject(args);
  if (!o)
    return o.error();
  if (*o == nullptr)
    return std::shared_ptr<const NodeAffinityArgs>(std::move(out));
  if (auto known = checkKnownFields(**o, {"addedAffinity"}, ""); !known)
    return known.error();
  if (const json::value* added = kube::jsonfields::field(**o, "addedAffinity")) {
    if (auto shape = checkAffinityShape(*added, "addedAffinity"); !shape)
      return shape.error();
    auto decoded = kube::decodeNodeAffinity(*added, "addedAffinity");
    if (!decoded)
      return decoded.error();
    if (auto valid = validateAffinity(*decoded, "addedAffinity"); !valid)
      return valid.error();
    out->added_affinity = std::move(*decoded);
  }
  return std::shared_ptr<const NodeAffinityArgs>(std::move(out));
}

NodeAffinity::NodeAffinity(std::shared_ptr<const NodeAffinityArgs> args)
    : args_(args ? std::move(args) : std::make_shared<const NodeAffinityArgs>()) {}

Status NodeAffinity::filter(const CycleState&, const PodInfo& pod, const NodeInfo& node) const {
  if (!node.node)
    return Status::error("node not found");
  const Node& n = *node.node;
  if (args_->added_affinity && args_->added_affinity->required &&
      !args_->added_affinity->required->matches(n.labels, n.name)) {
    return Status::unresolvable(std::string(kErrReasonEnforced));
  }
  const kube::NodeAffinity* affinity = pod.node_affinity ? &*pod.node_affinity : nullptr;
  // Most pods select no nodes at all: nothing to match against the node's labels.
  if (pod.node_selector.empty() && (affinity == nullptr || !affinity->required))
    return Status::success();
  if (!kube::podMatchesNodeSelectorAndAffinityTerms(pod.node_selector, affinity, n.labels, n.name))
    return Status::unresolvable(std::string(kErrReasonNodeSelector));
  return Status::success();
}

bool NodeAffinity::passesEveryNode(const PodInfo& pod) const {
  const bool added = args_->added_affinity && args_->added_affinity->required;
  const bool own = !pod.node_selector.empty() || (pod.node_affinity && pod.node_affinity->required);
  return !added && !own;
}

bool NodeAffinity::scoresEveryNodeAlike(const PodInfo& pod) const {
  const bool added = args_->added_affinity && !args_->added_affinity->preferred.empty();
  const bool own = pod.node_affinity && !pod.node_affinity->preferred.empty();
  return !added && !own;
}

Status NodeAffinity::preFilter(CycleState&, const PodInfo& pod) {
  return passesEveryNode(pod) ? Status::skip() : Status::success();
}

Status NodeAffinity::preScore(CycleState&, const PodInfo& pod,
                              const std::vector<const NodeInfo*>&) {
  return scoresEveryNodeAlike(pod) ? Status::skip() : Status::success();
}

Status NodeAffinity::score(const CycleState&, const PodInfo& pod, const NodeInfo& node,
                           std::int64_t& score) const {
  if (!node.node)
    return Status::error("node not found");
  const Node& n = *node.node;
  std::int64_t count = 0;
  if (args_->added_affinity) {
    // The added terms were validated at decode, so matching both expressions and fields (as
    // the version that introduced them does) cannot hide a bad requirement.
    for (const auto& term : args_->added_affinity->preferred) {
      if (term.weight != 0 && term.preference.matches(n.labels, n.name))
        count += term.weight;
    }
  }
  if (pod.node_affinity && !pod.node_affinity->preferred.empty()) {
    auto pod_score = kube::preferredSchedulingScore(pod.node_affinity->preferred, n.labels);
    if (!pod_score)
      return Status::error(pod_score.error().message);
    count += *pod_score;
  }
  score = count;
  return Status::success();
}

Status NodeAffinity::normalizeScore(const CycleState&, const PodInfo&,
                                    std::vector<NodeScore>& scores) const {
  defaultNormalizeScore(kMaxNodeScore, /*reverse=*/false, scores);
  return Status::success();
}

}  // namespace koord::roles::scheduler::upstream
