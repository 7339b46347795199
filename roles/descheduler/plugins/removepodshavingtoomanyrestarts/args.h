// RemovePodsHavingTooManyRestartsArgs as the community descheduler spells them, read strictly from
// a profile's pluginConfig and validated as upstream validates them.
#pragma once

#include <boost/json/fwd.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "framework/plugin.h"
#include "koord/core/expected.h"
#include "plugins/podfilter/pod_filter.h"

namespace koord::roles::descheduler::toomanyrestarts {

struct RemovePodsHavingTooManyRestartsArgs final : PluginArgs {
  /// namespaces and labelSelector.
  podfilter::CommonArgs common;
  /// Must be set, at least 1: a pod whose restarts reach it is evicted.
  std::int32_t pod_restart_threshold = 0;
  bool including_init_containers = false;
  /// Only pods in one of these (phase Running, or a container waiting in CrashLoopBackOff); empty:
  /// every pod. Added by later upstream releases (Koordinator's next one carries it).
  std::vector<std::string> states;
};

/// Decodes pluginConfig args (null: the defaults, which fail validation as upstream's do since
/// podRestartThreshold has no default). Errors name the field.
Expected<RemovePodsHavingTooManyRestartsArgs> decodeTooManyRestartsArgs(
    const boost::json::value* args);

}  // namespace koord::roles::descheduler::toomanyrestarts
