#include "qosmanager/blkio/blkio_reconcile.h"

#include <boost/json/object.hpp>

#include <algorithm>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "koord/cgroup/resource_executor.h"
#include "koord/core/log.h"
#include "koordlet_options.h"
#include "qosmanager/blkio/blkio_apply.h"
#include "qosmanager/blkio/blkio_policy.h"
#include "statesinformer/states_snapshot.h"

namespace koord::roles::koordlet::qosmanager {

namespace {

// Acts only on a synced snapshot whose NodeSLO has a resourceQOSStrategy (Koordinator skips
// without one); a NodeSLO this koordlet cannot read writes nothing. The files the kernel lacks
// are said once, at info, until the set changes; each skipped block is said once while it stays
// skipped; other problems are logged once until they change.
class BlkIOReconcileStrategy final : public QoSStrategy {
 public:
  BlkIOReconcileStrategy(const StrategyContext& c, BlockResolver resolve)
      : cgroups_(c.cgroups), resolve_(std::move(resolve)) {}
  explicit BlkIOReconcileStrategy(const StrategyContext& c)
      : BlkIOReconcileStrategy(c, blockResolver(blkioRoots(c.options))) {}

  void runOnce(const StatesSnapshot& states, std::chrono::system_clock::time_point) override {
    if (!states.synced || states.node_slo == nullptr ||
        states.node_slo->resource_qos_strategy == nullptr)
      return;
    report(round(states));
  }

 private:
  std::string round(const StatesSnapshot& states) {
    auto strategy = decodeBlkIOQOSStrategy(*states.node_slo->resource_qos_strategy);
    if (!strategy) {
      return fmt::format("NodeSLO {}: {}; nothing written", states.node_slo->name,
                         strategy.error().message);
    }
    auto missing = missingBlkIOFiles(cgroups_);
    reportMissing(missing);
    std::vector<cgroup::Resource> skip;
    for (const auto& m : missing)
      skip.push_back(m.resource);
    static const std::vector<PodMeta> kNoPods;
    const auto& pods = states.pods != nullptr ? *states.pods : kNoPods;
    auto plan = planBlkIO(*strategy, pods, cgroups_.root().driver, resolve_);
    reportSkipped(plan.skipped);
    auto stats = applyBlkIOPlan(plan, skip, cgroups_);
    KOORD_VLOG(5, "blkio: {} written ({} resets), {} unchanged, {} cgroups absent", stats.written,
               stats.reset, stats.unchanged, stats.absent);
    std::string problem;
    for (const auto& e : plan.errors)
      problem += (problem.empty() ? "" : "; ") + e;
    for (const auto& e : stats.errors)
      problem += (problem.empty() ? "" : "; ") + e;
    return problem;
  }

  void reportMissing(const std::vector<MissingBlkIOFile>& missing) {
    // v2's four throttles are one file: named once.
    std::vector<std::string> paths;
    for (const auto& m : missing) {
      if (std::find(paths.begin(), paths.end(), m.path) == paths.end())
        paths.push_back(m.path);
    }
    std::string text;
    for (const auto& p : paths)
      text += (text.empty() ? "" : ", ") + p;
    if (!text.empty() && text != last_missing_) {
      // Kernels without blk-iocost's files (any v1 but Anolis') are common and not a fault.
      KOORD_LOG_INFO("blkio: the kernel lacks {}; skipped", text);
    }
    last_missing_ = std::move(text);
  }

  void reportSkipped(const std::vector<std::string>& skipped) {
    std::set<std::string> now(skipped.begin(), skipped.end());
    for (const auto& s : now) {
      if (!said_.contains(s))
        KOORD_LOG_WARNING("blkio: {}", s);
    }
    said_ = std::move(now);
  }

  void report(std::string problem) {
    if (!problem.empty() && problem != last_problem_)
      KOORD_LOG_WARNING("blkio: {}", problem);
    last_problem_ = std::move(problem);
  }

  cgroup::ResourceExecutor& cgroups_;
  BlockResolver resolve_;
  std::string last_missing_;
  std::set<std::string> said_;
  std::string last_problem_;
};

}  // namespace

BlkIORoots blkioRoots(const KoordletOptions& options) {
  BlkIORoots roots;
  if (!options.sys_root_dir.empty())
    roots.sys_root = options.sys_root_dir;
  if (!options.var_lib_kubelet_dir.empty())
    roots.kubelet_root = options.var_lib_kubelet_dir;
  return roots;
}

std::unique_ptr<QoSStrategy> makeBlkIOReconcile(const StrategyContext& context,
                                                BlockResolver resolve) {
  return std::make_unique<BlkIOReconcileStrategy>(context, std::move(resolve));
}

StrategySpec blkioReconcileStrategy() {
  return {
      .name = "blkio reconcile",
      .gate = "BlkIOReconcile",
      .interval = [](const KoordletOptions& o) -> std::chrono::milliseconds {
        return std::chrono::seconds(o.reconcile_interval_seconds);
      },
      .make = makeStrategy<BlkIOReconcileStrategy>,
  };
}

}  // namespace koord::roles::koordlet::qosmanager
