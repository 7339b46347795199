#include "plugins/upstream/selectorspread/selector_spread.h"

#include <algorithm>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>

#include "framework/framework_handle.h"
#include "framework/node_info.h"
#include "framework/snapshot.h"

namespace koord::roles::scheduler::upstream {

namespace {

const StateKey kState{kSelectorSpreadStateKey};

constexpr std::string_view kLabelZoneBeta = "failure-domain.beta.kubernetes.io/zone";
constexpr std::string_view kLabelZoneStable = "topology.kubernetes.io/zone";
constexpr std::string_view kLabelRegionBeta = "failure-domain.beta.kubernetes.io/region";
constexpr std::string_view kLabelRegionStable = "topology.kubernetes.io/region";

class PreScoreState final : public StateData {
 public:
  explicit PreScoreState(kube::Selector s) : selector(std::move(s)) {}
  std::unique_ptr<StateData> clone() const override {
    return std::make_unique<PreScoreState>(*this);
  }
  kube::Selector selector;
};

// The first of the two labels present (an empty value counts as present), else "".
std::string_view firstLabel(const kube::Labels& labels, std::string_view preferred,
                            std::string_view other) {
  if (auto it = labels.find(preferred); it != labels.end())
    return it->second;
  if (auto it = labels.find(other); it != labels.end())
    return it->second;
  return {};
}

// Upstream's spreading applies to a pod without spread constraints of its own.
bool skipSelectorSpread(const PodInfo& pod) {
  return !pod.topology_spread_constraints.empty();
}

struct ZoneKeyHash {
  std::size_t operator()(const ZoneKey& z) const noexcept {
    const std::size_t a = std::hash<std::string_view>{}(z.region);
    const std::size_t b = std::hash<std::string_view>{}(z.zone);
    return a ^ (b + 0x9e3779b97f4a7c15ULL + (a << 6) + (a >> 2));
  }
};

Status nodeNotFound(std::string_view name) {
  return Status::error(fmt::format(
      "getting node \"{}\" from Snapshot: nodeinfo not found for node name \"{}\"", name, name));
}

}  // namespace

ZoneKey zoneKey(const kube::Labels& node_labels) {
  return {firstLabel(node_labels, kLabelRegionBeta, kLabelRegionStable),
          firstLabel(node_labels, kLabelZoneBeta, kLabelZoneStable)};
}

SelectorSpread::SelectorSpread(const FrameworkHandle& handle)
    : handle_(handle), selectors_(helper::SpreadSelectorIndex::sourcesOf(handle.cluster())) {}

Status SelectorSpread::preScore(CycleState& state, const PodInfo& pod,
                                const std::vector<const NodeInfo*>&) {
  if (skipSelectorSpread(pod))
    return Status::skip();
  kube::Selector selector = selectors_.defaultSelector(pod);
  // Nothing selects the pod: every node would count 0 and normalise to 100.
  if (selector.empty())
    return Status::skip();
  state.write(kState, std::make_unique<PreScoreState>(std::move(selector)));
  return Status::success();
}

Status SelectorSpread::score(const CycleState& state, const PodInfo& pod, const NodeInfo& node,
                             std::int64_t& score) const {
  score = 0;
  if (skipSelectorSpread(pod))
    return Status::success();
  const auto* s = state.read<PreScoreState>(kState);
  if (s == nullptr) {
    return Status::error(
        fmt::format("Error reading \"{}\" from cycleState: not found", kSelectorSpreadStateKey));
  }
  if (s->selector.empty())
    return Status::success();
  std::int64_t count = 0;
  for (const auto& p : node.pods) {
    // Pods being deleted do not count (upstream's rule for spreading).
    if (p->terminating || p->namespace_ != pod.namespace_)
      continue;
    if (s->selector.matches(p->labels))
      ++count;
  }
  score = count;
  return Status::success();
}

Status SelectorSpread::normalizeScore(const CycleState&, const PodInfo& pod,
                                      std::vector<NodeScore>& scores) const {
  if (skipSelectorSpread(pod))
    return Status::success();
  const Snapshot& snapshot = handle_.snapshot();
  std::int64_t max_by_node = 0;
  // Per score, its zone's index in zone_counts; -1 for a node without a zone.
  std::vector<std::int32_t> zone_of(scores.size(), -1);
  std::vector<std::int64_t> zone_counts;
  std::unordered_map<ZoneKey, std::int32_t, ZoneKeyHash> zone_ids;
  for (std::size_t i = 0; i < scores.size(); ++i) {
    max_by_node = std::max(max_by_node, scores[i].score);
    const NodeInfo* info = snapshot.get(scores[i].name);
    if (info == nullptr || !info->node)
      return nodeNotFound(scores[i].name);
    const ZoneKey zone = zoneKey(info->node->labels);
    if (zone.empty())
      continue;
    auto [it, added] = zone_ids.try_emplace(zone, static_cast<std::int32_t>(zone_counts.size()));
    if (added)
      zone_counts.push_back(0);
    zone_counts[static_cast<std::size_t>(it->second)] += scores[i].score;
    zone_of[i] = it->second;
  }
  std::int64_t max_by_zone = 0;
  for (std::int64_t c : zone_counts)
    max_by_zone = std::max(max_by_zone, c);

  const double max_score = static_cast<double>(kMaxNodeScore);
  for (std::size_t i = 0; i < scores.size(); ++i) {
    double f = max_score;
    if (max_by_node > 0) {
      f = max_score *
          (static_cast<double>(max_by_node - scores[i].score) / static_cast<double>(max_by_node));
    }
    if (zone_of[i] >= 0) {
      double zone_score = max_score;
      if (max_by_zone > 0) {
        const std::int64_t in_zone = zone_counts[static_cast<std::size_t>(zone_of[i])];
        zone_score = max_score * (static_cast<double>(max_by_zone - in_zone) /
                                  static_cast<double>(max_by_zone));
      }
      f = f * (1.0 - kZoneWeighting) + kZoneWeighting * zone_score;
    }
    scores[i].score = static_cast<std::int64_t>(f);
  }
  return Status::success();
}

}  // namespace koord::roles::scheduler::upstream
