#include "qosmanager/sysreconcile/system_config_reconcile.h"

#include <boost/json/object.hpp>

#include <optional>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "koord/core/log.h"
#include "koordlet_options.h"
#include "qosmanager/sysreconcile/kernel_file.h"
#include "statesinformer/states_snapshot.h"

namespace koord::roles::koordlet::qosmanager {

std::filesystem::path SystemConfigRoots::minFreeKbytes() const {
  return proc_root / "sys/vm/min_free_kbytes";
}
std::filesystem::path SystemConfigRoots::watermarkScaleFactor() const {
  return proc_root / "sys/vm/watermark_scale_factor";
}
std::filesystem::path SystemConfigRoots::memcgReapBackground() const {
  return sys_root / "kernel/mm/memcg_reaper/reap_background";
}

std::string systemConfigMissingInterface(const SystemConfigRoots& roots) {
  for (const auto& path : {roots.minFreeKbytes(), roots.watermarkScaleFactor()}) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec))
      return path.string();
  }
  return "";
}

SystemConfigStats applySystemConfig(const SystemConfigRoots& roots, const SystemConfigPlan& plan) {
  SystemConfigStats stats;
  auto write = [&](const std::filesystem::path& path, std::int64_t value) {
    auto r = updateKernelFile(path, std::to_string(value));
    if (!r)
      stats.errors.push_back(r.error().message);
    else if (*r == KernelWrite::kWritten)
      ++stats.written;
    else
      ++stats.unchanged;
  };
  if (plan.min_free_kbytes)
    write(roots.minFreeKbytes(), *plan.min_free_kbytes);
  if (plan.watermark_scale_factor)
    write(roots.watermarkScaleFactor(), *plan.watermark_scale_factor);
  if (plan.memcg_reap_background) {
    std::error_code ec;
    if (std::filesystem::exists(roots.memcgReapBackground(), ec))
      write(roots.memcgReapBackground(), *plan.memcg_reap_background);
  }
  return stats;
}

namespace {

// Acts only on a synced snapshot with a NodeSLO (as Koordinator, which skips without one); a
// NodeSLO without systemStrategy gets the koordlet's defaults. Each distinct problem is logged
// once until it changes, not every round.
class SystemConfigStrategy final : public QoSStrategy {
 public:
  explicit SystemConfigStrategy(const StrategyContext& c)
      : roots_{c.options.proc_root_dir, c.options.sys_root_dir} {}

  void runOnce(const StatesSnapshot& states, std::chrono::system_clock::time_point) override {
    if (!states.synced || states.node_slo == nullptr || states.node == nullptr)
      return;
    report(round(states));
  }

 private:
  std::string round(const StatesSnapshot& states) {
    if (auto missing = systemConfigMissingInterface(roots_); !missing.empty())
      return fmt::format("{} is missing; nothing written", missing);
    static const boost::json::object kEmpty;
    const auto* raw = states.node_slo->system_strategy.get();
    auto strategy = decodeSystemStrategy(raw != nullptr ? *raw : kEmpty);
    if (!strategy)
      return fmt::format("NodeSLO {}: {}; nothing written", states.node_slo->name,
                         strategy.error().message);
    std::int64_t memory = 0;
    if (auto it = states.node->capacity.find("memory"); it != states.node->capacity.end())
      memory = it->second.value();
    auto plan = planSystemConfig(*strategy, memory);
    auto stats = applySystemConfig(roots_, plan);
    KOORD_VLOG(5, "system config: {} written, {} unchanged", stats.written, stats.unchanged);
    std::string problem;
    for (const auto& s : plan.skipped)
      problem += (problem.empty() ? "" : "; ") + s + " (skipped)";
    for (const auto& e : stats.errors)
      problem += (problem.empty() ? "" : "; ") + e;
    return problem;
  }

  void report(std::string problem) {
    if (!problem.empty() && problem != last_problem_)
      KOORD_LOG_WARNING("system config: {}", problem);
    last_problem_ = std::move(problem);
  }

  SystemConfigRoots roots_;
  std::string last_problem_;
};

}  // namespace

StrategySpec systemConfigStrategy() {
  return {
      .name = "system config",
      .gate = "SystemConfig",
      .interval = [](const KoordletOptions& o) -> std::chrono::milliseconds {
        return std::chrono::seconds(o.reconcile_interval_seconds);
      },
      .make = makeStrategy<SystemConfigStrategy>,
  };
}

}  // namespace koord::roles::koordlet::qosmanager
