// PodLifeTimeArgs as the community descheduler spells them, read strictly from a profile's
// pluginConfig and validated as upstream validates them (maxPodLifeTimeSeconds is required).
#pragma once

#include <boost/json/fwd.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "framework/plugin.h"
#include "koord/core/expected.h"
#include "plugins/podfilter/pod_filter.h"

namespace koord::roles::descheduler::podlifetime {

struct PodLifeTimeArgs final : PluginArgs {
  /// namespaces and labelSelector.
  podfilter::CommonArgs common;
  /// Pods older than this many seconds are evicted.
  std::uint64_t max_pod_lifetime_seconds = 0;
  /// Only pods in one of these: a phase (Running, Pending) or a container's waiting reason
  /// (PodInitializing, ContainerCreating); empty: every pod.
  std::vector<std::string> states;
};

/// Decodes pluginConfig args. Null args, or a document without maxPodLifeTimeSeconds, fail
/// validation as upstream's do. Errors name the field.
Expected<PodLifeTimeArgs> decodePodLifeTimeArgs(const boost::json::value* args);

}  // namespace koord::roles::descheduler::podlifetime
