// DeviceShareArgs: the DeviceShare plugin's pluginConfig args with Koordinator's field names and
// defaults (device scoring, NUMA alignment with the other resources).
#pragma once

#include <boost/json/fwd.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/koord_scoring_strategy.h"
#include "framework/plugin.h"
#include "koord/kube/error.h"

namespace koord::roles::scheduler::deviceshare {

inline constexpr std::string_view kPluginName = "DeviceShare";
inline constexpr std::string_view kArgsKind = "DeviceShareArgs";

/// LeastAllocated over gpu-memory-ratio, rdma and fpga, weight 1 each (Koordinator's default:
/// spreading keeps one card's failure from taking many pods).
config::KoordScoringStrategy defaultDeviceScoring();

/// A GPU vendor and model (the node's gpu-vendor and gpu-model labels) that cannot be shared.
struct GpuShareUnsupportedModel {
  std::string vendor;
  std::string model;
};

/// Where Koordinator reads GPU shared-resource templates (vNPU slices) from.
struct GpuSharedResourceTemplatesConfig {
  std::string config_map_namespace;
  std::string config_map_name;
  std::vector<std::string> matched_resources;
};

/// Koordinator v1.8's default: koordinator-system/gpu-shared-resource-templates, applied to
/// requests naming huawei.com/npu-core.
GpuSharedResourceTemplatesConfig defaultGpuSharedResourceTemplatesConfig();

/// The most entries decoded from each list of the args.
inline constexpr std::size_t kMaxDeviceShareArgsItems = 256;

/// Default-constructed, it holds Koordinator's defaults (what decoding `null` gives).
struct DeviceShareArgs : PluginArgs {
  /// Deprecated in Koordinator and without effect there as here; kept to name at startup.
  std::string allocator;
  config::KoordScoringStrategy scoring_strategy = defaultDeviceScoring();
  bool disable_device_numa_topology_alignment = false;
  /// Koordinator v1.8: nodes whose GPU vendor and model are listed refuse pods sharing a GPU.
  std::vector<GpuShareUnsupportedModel> gpu_share_unsupported_models;
  /// Koordinator v1.8's shared-resource templates (vNPU slices): where they are and which
  /// requests they govern; nullopt: defaultGpuSharedResourceTemplatesConfig().
  std::optional<GpuSharedResourceTemplatesConfig> gpu_shared_resource_templates;
};

/// Strict: unknown fields are errors naming the field.
kube::Expected<DeviceShareArgs> decodeDeviceShareArgs(const boost::json::value* args,
                                                      std::string_view api_version);

}  // namespace koord::roles::scheduler::deviceshare
