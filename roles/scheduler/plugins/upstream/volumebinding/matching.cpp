#include "plugins/upstream/volumebinding/matching.h"

#include <charconv>
#include <utility>

namespace koord::roles::scheduler::upstream::volumebinding {
namespace {

// NodeSelectorRequirementsAsFieldSelector matched against an empty field set: In and NotIn with
// exactly one value, every field reading "".
bool fieldsMatchNothingSet(const std::vector<kube::NodeSelectorRequirement>& fields) {
  for (const auto& f : fields) {
    if (f.values.size() != 1)
      return false;
    const bool equal = f.values.front().empty();
    if (f.op == kube::NodeSelectorOperator::kIn) {
      if (!equal)
        return false;
    } else if (f.op == kube::NodeSelectorOperator::kNotIn) {
      if (equal)
        return false;
    } else {
      return false;
    }
  }
  return true;
}

}  // namespace

NodeLabelMatcher::Term NodeLabelMatcher::compile(const kube::NodeSelectorTerm& term) {
  Term out;
  if (term.match_expressions.empty() && term.match_fields.empty())
    return out;
  if (!term.match_expressions.empty()) {
    auto selector = kube::nodeSelectorRequirementsAsSelector(term.match_expressions);
    if (!selector)
      return out;  // an invalid term selects nothing
    out.labels = std::move(*selector);
  }
  out.fields = term.match_fields;
  out.usable = true;
  return out;
}

NodeLabelMatcher NodeLabelMatcher::volumeAffinity(const kube::NodeSelector& selector) {
  NodeLabelMatcher m;
  m.terms_.reserve(selector.node_selector_terms.size());
  for (const auto& t : selector.node_selector_terms)
    m.terms_.push_back(compile(t));
  return m;
}

NodeLabelMatcher NodeLabelMatcher::allowedTopologies(
    const std::vector<kube::NodeSelectorTerm>& terms) {
  NodeLabelMatcher m;
  m.match_all_without_terms_ = true;
  m.terms_.reserve(terms.size());
  for (const auto& t : terms) {
    // A topology term without expressions selects nothing (fields do not exist there).
    m.terms_.push_back(t.match_expressions.empty() ? Term{} : compile(t));
  }
  return m;
}

bool NodeLabelMatcher::matches(const kube::Labels& node_labels) const {
  if (terms_.empty())
    return match_all_without_terms_;
  for (const Term& t : terms_) {
    if (!t.usable)
      continue;
    if (t.labels && !t.labels->matches(node_labels))
      continue;
    if (!t.fields.empty() && !fieldsMatchNothingSet(t.fields))
      continue;
    return true;
  }
  return false;
}

VolumeRef makeVolumeRef(std::shared_ptr<const storage::PersistentVolume> pv) {
  VolumeRef ref;
  if (pv->node_affinity)
    ref.affinity = std::make_shared<const NodeLabelMatcher>(
        NodeLabelMatcher::volumeAffinity(*pv->node_affinity));
  ref.pv = std::move(pv);
  return ref;
}

bool volumeBoundToClaim(const storage::PersistentVolume& pv,
                        const storage::PersistentVolumeClaim& claim) {
  if (!pv.claim_ref)
    return false;
  const storage::ClaimRef& ref = *pv.claim_ref;
  if (ref.name != claim.name || ref.namespace_ != claim.namespace_)
    return false;
  return ref.uid.empty() || ref.uid == claim.uid;
}

bool claimFullyBound(const storage::PersistentVolumeClaim& claim) {
  return !claim.volume_name.empty() && claim.annotations.contains(storage::kAnnBindCompleted);
}

VolumeFit volumeFitsClaim(const storage::PersistentVolume& pv,
                          const storage::PersistentVolumeClaim& claim) {
  if (pv.claim_ref && !volumeBoundToClaim(pv, claim))
    return VolumeFit::kNo;
  if (pv.capacity < claim.request || pv.volume_mode != claim.volume_mode || pv.terminating)
    return VolumeFit::kNo;
  if (volumeBoundToClaim(pv, claim))
    return VolumeFit::kBoundToClaim;
  if (pv.phase != "Available")
    return VolumeFit::kNo;
  if (claim.selector && !claim.selector->matches(pv.labels))
    return VolumeFit::kNo;
  if (pv.storage_class != claim.storage_class)
    return VolumeFit::kNo;
  if (!storage::accessModesContain(pv.access_modes, claim.access_modes))
    return VolumeFit::kNo;
  return VolumeFit::kAvailable;
}

std::string claimKey(const storage::PersistentVolumeClaim& claim) {
  return claim.namespace_ + "/" + claim.name;
}

std::optional<std::int64_t> parseResourceVersion(std::string_view rv) {
  std::int64_t out = 0;
  auto [end, ec] = std::from_chars(rv.data(), rv.data() + rv.size(), out);
  if (ec != std::errc() || end != rv.data() + rv.size() || rv.empty())
    return std::nullopt;
  return out;
}

}  // namespace koord::roles::scheduler::upstream::volumebinding
