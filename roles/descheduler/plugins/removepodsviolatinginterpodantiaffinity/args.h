// RemovePodsViolatingInterPodAntiAffinityArgs as the community descheduler spells them: which
// pods to look at, read strictly from pluginConfig.
#pragma once

#include <boost/json/fwd.hpp>

#include "framework/plugin.h"
#include "koord/core/expected.h"
#include "plugins/podfilter/pod_filter.h"

namespace koord::roles::descheduler::interpodantiaffinity {

struct RemovePodsViolatingInterPodAntiAffinityArgs final : PluginArgs {
  podfilter::CommonArgs common;
};

/// Decodes pluginConfig args (null or absent: the defaults). Unknown members, wrong JSON types,
/// both namespace lists, a selector that does not compile are errors naming the field.
Expected<RemovePodsViolatingInterPodAntiAffinityArgs>
decodeRemovePodsViolatingInterPodAntiAffinityArgs(const boost::json::value* args);

}  // namespace koord::roles::descheduler::interpodantiaffinity
