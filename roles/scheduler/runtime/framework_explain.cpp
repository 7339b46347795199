// The framework's scores plugin by plugin, for explaining a placement rather than making one:
// the same calls and normalisation as Framework::score, serial and without timing.
#include <fmt/format.h>

#include "runtime/framework.h"

namespace koord::roles::scheduler {

kube::Expected<std::vector<Framework::PluginScores>> Framework::scoreByPlugin(
    const CycleState& state, const PodInfo& pod, const std::vector<const NodeInfo*>& nodes) const {
  std::vector<PluginScores> out;
  for (const auto& w : scores_) {
    if ((state.skip_score_plugins & w.bit) != 0)
      continue;
    PluginScores part{std::string(w.plugin->name()), w.weight, {}};
    std::vector<NodeScore> raw(nodes.size());
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      raw[i].name = nodes[i]->name();
      if (auto st = w.plugin->score(state, pod, *nodes[i], raw[i].score); !st.ok()) {
        return kube::makeKubeError(fmt::format("running Score plugin {} on node {}: {}",
                                               w.plugin->name(), nodes[i]->name(), st.message()));
      }
    }
    if (w.normalizes) {
      if (auto st = w.plugin->normalizeScore(state, pod, raw); !st.ok()) {
        return kube::makeKubeError(
            fmt::format("running NormalizeScore of {}: {}", w.plugin->name(), st.message()));
      }
    }
    part.scores.reserve(raw.size());
    for (std::size_t i = 0; i < raw.size(); ++i) {
      if (raw[i].score < kMinNodeScore || raw[i].score > kMaxNodeScore) {
        return kube::makeKubeError(fmt::format(
            "plugin {} returned an invalid score {} for node {}: must be in [{}, {}]",
            w.plugin->name(), raw[i].score, nodes[i]->name(), kMinNodeScore, kMaxNodeScore));
      }
      part.scores.push_back(raw[i].score);
    }
    out.push_back(std::move(part));
  }
  return out;
}

}  // namespace koord::roles::scheduler
