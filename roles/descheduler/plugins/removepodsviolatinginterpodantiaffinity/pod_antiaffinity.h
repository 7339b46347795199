// RemovePodsViolatingInterPodAntiAffinity (the community descheduler's Deschedule plugin): evicts
// a pod that shares a topology domain with a pod its required anti-affinity forbids, or with a
// pod whose required anti-affinity forbids it; a pod evicted in the pass no longer counts.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "framework/plugin.h"
#include "koord/core/expected.h"
#include "plugins/pluginkit/plugin_base.h"
#include "plugins/podfilter/pod_filter.h"
#include "plugins/removepodsviolatinginterpodantiaffinity/args.h"

namespace koord::roles::descheduler::interpodantiaffinity {

inline constexpr std::string_view kRemovePodsViolatingInterPodAntiAffinityName =
    "RemovePodsViolatingInterPodAntiAffinity";

/// `term` (of a pod in `term_ns`) selects `other`: its namespaces (the owner's own when none)
/// hold `other`, and its label selector matches it.
bool termSelects(const PodAffinityTerm& term, std::string_view term_ns, const Pod& other);

/// `a` and `b` are in the same domain of `topology_key`: the same node, or both labelled with
/// the key and equal values.
bool sameTopology(const Node& a, const Node& b, std::string_view topology_key);

class RemovePodsViolatingInterPodAntiAffinity final
    : public pluginkit::FilteredPlugin<RemovePodsViolatingInterPodAntiAffinityArgs,
                                       DeschedulePlugin,
                                       kRemovePodsViolatingInterPodAntiAffinityName> {
 public:
  using FilteredPlugin::FilteredPlugin;

  Expected<void> deschedule(const std::vector<const Node*>& nodes) override;
};

/// The plugin on `handle`; errors when the args' selector does not compile.
Expected<std::shared_ptr<Plugin>> makeRemovePodsViolatingInterPodAntiAffinity(
    std::shared_ptr<const RemovePodsViolatingInterPodAntiAffinityArgs> args,
    FrameworkHandle& handle);

}  // namespace koord::roles::descheduler::interpodantiaffinity
