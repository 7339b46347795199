// RemovePodsViolatingNodeTaintsArgs as the community descheduler spells them: which taints count
// and which pods to look at, read strictly from pluginConfig.
#pragma once

#include <boost/json/fwd.hpp>

#include <optional>
#include <string>
#include <vector>

#include "framework/plugin.h"
#include "koord/core/expected.h"
#include "plugins/podfilter/pod_filter.h"

namespace koord::roles::descheduler::nodetaints {

struct RemovePodsViolatingNodeTaintsArgs final : PluginArgs {
  podfilter::CommonArgs common;
  bool include_prefer_no_schedule = false;
  /// Taints ignored, each as "key" or "key=value".
  std::vector<std::string> excluded_taints;
  /// When set, only these taints count ("key" or "key=value"); set but empty, none do (upstream
  /// tells an absent list from an empty one).
  std::optional<std::vector<std::string>> included_taints;
};

/// Decodes pluginConfig args (null or absent: the defaults). Unknown members, wrong JSON types,
/// both namespace lists, both taint lists, a selector that does not compile are errors naming
/// the field.
Expected<RemovePodsViolatingNodeTaintsArgs> decodeRemovePodsViolatingNodeTaintsArgs(
    const boost::json::value* args);

}  // namespace koord::roles::descheduler::nodetaints
