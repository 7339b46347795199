// SystemConfig (Koordinator's SystemConfigReconcile): the NodeSLO's systemStrategy written to
// /proc/sys/vm/{min_free_kbytes,watermark_scale_factor} and, on kernels that have it (Anolis),
// /sys/kernel/mm/memcg_reaper/reap_background, every -reconcile-interval-seconds.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "qosmanager/framework/strategy.h"
#include "qosmanager/sysreconcile/system_config_policy.h"

namespace koord::roles::koordlet::qosmanager {

/// Where the files are: -proc-root-dir and -sys-root-dir.
struct SystemConfigRoots {
  std::filesystem::path proc_root;
  std::filesystem::path sys_root;
  std::filesystem::path minFreeKbytes() const;
  std::filesystem::path watermarkScaleFactor() const;
  std::filesystem::path memcgReapBackground() const;
};

/// The path of the first of min_free_kbytes and watermark_scale_factor that is missing, or ""
/// when both are there (reap_background is optional: only Anolis kernels have it).
std::string systemConfigMissingInterface(const SystemConfigRoots& roots);

struct SystemConfigStats {
  std::size_t written = 0;
  std::size_t unchanged = 0;
  /// One message per failed write, naming the file, the value and the errno's text.
  std::vector<std::string> errors;
};

/// Writes the plan's values; reap_background only where the file exists.
SystemConfigStats applySystemConfig(const SystemConfigRoots& roots, const SystemConfigPlan& plan);

/// The strategy: gate SystemConfig (off by default, as in Koordinator).
StrategySpec systemConfigStrategy();

}  // namespace koord::roles::koordlet::qosmanager
