// kube-scheduler's default plugins per configuration apiVersion (its getDefaultPlugins), before
// this build drops the ones it does not have.
#pragma once

#include <string_view>

#include "plugin_set.h"

namespace koord::roles::scheduler::config {

/// v1beta1: Kubernetes 1.20's per-point defaults (algorithmprovider's default config with
/// DefaultPodTopologySpread on, so no SelectorSpread). v1beta2: its per-point defaults in their
/// last release (no NodePreferAvoidPods). v1beta3: the MultiPoint list with SchedulingGates
/// (PodSchedulingReadiness on). v1: the latest MultiPoint list (SchedulingGates first,
/// DynamicResources before DefaultPreemption). Score weights as upstream sets them.
Plugins defaultPlugins(ApiVersion version);

/// Whether kube-scheduler has had an in-tree plugin of that name (a `disabled` entry may name
/// one this build lacks without being a typo).
bool isUpstreamPluginName(std::string_view name);

}  // namespace koord::roles::scheduler::config
