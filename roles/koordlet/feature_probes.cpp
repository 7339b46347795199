#include "feature_probes.h"

#include <algorithm>
#include <filesystem>
#include <string>
#include <string_view>

#include "koord/cgroup/resource_executor.h"
#include "koordlet_options.h"
#include "metricsadvisor/collectors/cpi/cpi_collector.h"
#include "metricsadvisor/collectors/psi/psi_collector_spec.h"
#include "qosmanager/blkio/blkio_apply.h"
#include "qosmanager/cgreconcile/memory_qos_files.h"
#include "qosmanager/resctrl/resctrl_fs.h"
#include "qosmanager/sysreconcile/system_config_reconcile.h"
#include "runtimehooks/groupidentity/bvt_apply.h"

namespace koord::roles::koordlet {

namespace {

struct ProbeContext {
  const KoordletOptions& options;
  const cgroup::ResourceExecutor& cgroups;
};

struct FeatureProbe {
  std::string_view gate;
  /// The missing kernel file (or why the interface is unusable); "" when present.
  std::string (*missing)(const ProbeContext& context);
};

// One line per gate, as the table's readers expect; clang-format would pack them.
// clang-format off
constexpr FeatureProbe kProbes[] = {
    {"RdtResctrl", [](const ProbeContext& c) { return qosmanager::resctrlMissingInterface(std::filesystem::path(c.options.sys_fs_root_dir) / "resctrl"); }},
    {"GroupIdentity", [](const ProbeContext& c) { return groupIdentityMissingInterface(c.cgroups); }},
    {"SystemConfig", [](const ProbeContext& c) { return qosmanager::systemConfigMissingInterface({.proc_root = c.options.proc_root_dir, .sys_root = c.options.sys_root_dir}); }},
    {"PSICollector", [](const ProbeContext& c) { return metricsadvisor::psiMissingInterface(c.options.proc_root_dir); }},
    {"CgroupReconcile", [](const ProbeContext& c) { return qosmanager::memoryQOSMissingInterface(c.cgroups); }},
    {"BlkIOReconcile", [](const ProbeContext& c) { return qosmanager::blkioMissingInterface(c.cgroups); }},
    {"CPICollector", [](const ProbeContext& c) { return metricsadvisor::cpiMissingInterface(c.options.sys_root_dir, c.cgroups.root()); }},
};
// clang-format on

}  // namespace

void markUnavailableFeatures(const FeatureGate& gates, const KoordletOptions& options,
                             const cgroup::CgroupRoot& root) {
  const cgroup::ResourceExecutor cgroups(root);
  const ProbeContext context{options, cgroups};
  // effects(), not enabled(): asking here must not count as the gate's code reading it.
  const auto effects = gates.effects();
  for (const FeatureProbe& probe : kProbes) {
    const bool on = std::any_of(effects.begin(), effects.end(),
                                [&](const auto& e) { return e.name == probe.gate && e.enabled; });
    if (!on)
      continue;
    if (std::string missing = probe.missing(context); !missing.empty())
      gates.markUnavailable(probe.gate, missing + " is missing");
  }
}

}  // namespace koord::roles::koordlet
