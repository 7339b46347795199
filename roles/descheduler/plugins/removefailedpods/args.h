// RemoveFailedPodsArgs as the community descheduler spells them, read strictly from a profile's
// pluginConfig with upstream's defaults (minPodLifetimeSeconds 3600).
#pragma once

#include <boost/json/fwd.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "framework/plugin.h"
#include "koord/core/expected.h"
#include "plugins/podfilter/pod_filter.h"

namespace koord::roles::descheduler::failedpods {

inline constexpr std::uint64_t kDefaultMinPodLifetimeSeconds = 3600;

struct RemoveFailedPodsArgs final : PluginArgs {
  /// namespaces and labelSelector.
  podfilter::CommonArgs common;
  /// A pod with an owner of one of these kinds stays.
  std::vector<std::string> exclude_owner_kinds;
  /// Younger pods stay. Never unset: upstream's defaulter runs after decoding, so an explicit null
  /// comes back as the default too.
  std::uint64_t min_pod_lifetime_seconds = kDefaultMinPodLifetimeSeconds;
  /// Empty: any failure; otherwise the pod's or a container's reason must be one of these.
  std::vector<std::string> reasons;
  bool including_init_containers = false;
};

/// Decodes pluginConfig args (null: the defaults). Errors name the field.
Expected<RemoveFailedPodsArgs> decodeRemoveFailedPodsArgs(const boost::json::value* args);

}  // namespace koord::roles::descheduler::failedpods
