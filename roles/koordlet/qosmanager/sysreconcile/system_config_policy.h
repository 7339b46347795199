// SystemConfig's policy without I/O: the NodeSLO's systemStrategy decoded with the koordlet's
// defaults, and the kernel values it asks for (min_free_kbytes, watermark_scale_factor,
// memcg_reaper's reap_background), each checked against the range Koordinator writes.
#pragma once

#include <boost/json/fwd.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "koord/kube/error.h"

namespace koord::roles::koordlet::qosmanager {

/// The fields SystemConfig reads, defaulted as the koordlet's DefaultSystemStrategy merge does
/// (totalNetworkBandwidth belongs to network QoS and is not read here).
struct SystemStrategy {
  /// min_free_kbytes = node memory (KiB) x factor / 10000.
  std::int64_t min_free_kbytes_factor = 100;
  std::int64_t watermark_scale_factor = 150;
  std::int64_t memcg_reap_background = 0;
};

/// Decodes systemStrategy. Errors name the field: a JSON type other than Go's, or a value the
/// API's validate tags refuse (minFreeKbytesFactor > 0, watermarkScaleFactor in (0, 400],
/// memcgReapBackGround 0 or 1).
kube::Expected<SystemStrategy> decodeSystemStrategy(const boost::json::object& system_strategy);

/// The file ranges Koordinator's validators hold a written value to.
inline constexpr std::int64_t kMinFreeKbytesMin = 10 * 1024;
inline constexpr std::int64_t kMinFreeKbytesMax = 10 * 1024 * 1024;
inline constexpr std::int64_t kWatermarkScaleFactorMin = 10;
inline constexpr std::int64_t kWatermarkScaleFactorMax = 400;

/// What one round writes; a value outside its file's range is left out and said in `skipped`
/// (Koordinator skips it too, and writes the others).
struct SystemConfigPlan {
  std::optional<std::int64_t> min_free_kbytes;
  std::optional<std::int64_t> watermark_scale_factor;
  std::optional<std::int64_t> memcg_reap_background;
  std::vector<std::string> skipped;
};

/// The plan for a node whose status.capacity memory is `node_memory_bytes` (> 0; else nothing
/// is planned for min_free_kbytes and that is said in `skipped`).
SystemConfigPlan planSystemConfig(const SystemStrategy& strategy, std::int64_t node_memory_bytes);

}  // namespace koord::roles::koordlet::qosmanager
