// DeviceShareArgs: the DeviceShare plugin's pluginConfig args with Koordinator's field names and
// defaults (device scoring, NUMA alignment with the other resources).
#pragma once

#include <boost/json/fwd.hpp>

#include <string>
#include <string_view>

#include "config/koord_scoring_strategy.h"
#include "framework/plugin.h"
#include "koord/kube/error.h"

namespace koord::roles::scheduler::deviceshare {

inline constexpr std::string_view kPluginName = "DeviceShare";
inline constexpr std::string_view kArgsKind = "DeviceShareArgs";

/// LeastAllocated over gpu-memory-ratio, rdma and fpga, weight 1 each (Koordinator's default:
/// spreading keeps one card's failure from taking many pods).
config::KoordScoringStrategy defaultDeviceScoring();

/// Default-constructed, it holds Koordinator's defaults (what decoding `null` gives).
struct DeviceShareArgs : PluginArgs {
  /// Deprecated in Koordinator and without effect there as here; kept to name at startup.
  std::string allocator;
  config::KoordScoringStrategy scoring_strategy = defaultDeviceScoring();
  bool disable_device_numa_topology_alignment = false;
};

/// Strict: unknown fields are errors naming the field.
kube::Expected<DeviceShareArgs> decodeDeviceShareArgs(const boost::json::value* args,
                                                      std::string_view api_version);

}  // namespace koord::roles::scheduler::deviceshare
