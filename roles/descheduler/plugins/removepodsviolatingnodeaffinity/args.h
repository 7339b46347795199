// RemovePodsViolatingNodeAffinityArgs as the community descheduler spells them: which kinds of
// node affinity to enforce and which pods to look at, read strictly from pluginConfig.
#pragma once

#include <boost/json/fwd.hpp>

#include <vector>

#include "framework/plugin.h"
#include "koord/core/expected.h"
#include "plugins/podfilter/pod_filter.h"

namespace koord::roles::descheduler::nodeaffinity {

enum class NodeAffinityType { kRequired, kPreferred };

struct RemovePodsViolatingNodeAffinityArgs final : PluginArgs {
  podfilter::CommonArgs common;
  /// In the order given; upstream has no default and refuses an empty list.
  std::vector<NodeAffinityType> node_affinity_type;
};

/// Decodes pluginConfig args. Absent args or an empty nodeAffinityType are refused (upstream's
/// "nodeAffinityType needs to be set"), as are unknown members and unknown affinity types.
Expected<RemovePodsViolatingNodeAffinityArgs> decodeRemovePodsViolatingNodeAffinityArgs(
    const boost::json::value* args);

}  // namespace koord::roles::descheduler::nodeaffinity
