#include "qosmanager/cgreconcile/cgroup_reconcile.h"

#include <boost/json/object.hpp>

#include <unistd.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "koord/cgroup/resource_executor.h"
#include "koord/core/log.h"
#include "koordlet_options.h"
#include "qosmanager/cgreconcile/memory_qos_apply.h"
#include "qosmanager/cgreconcile/memory_qos_files.h"
#include "qosmanager/cgreconcile/memory_qos_plan.h"
#include "qosmanager/cgreconcile/memory_qos_policy.h"
#include "statesinformer/states_snapshot.h"

namespace koord::roles::koordlet::qosmanager {

namespace {

std::int64_t pageSize() {
  const long page = ::sysconf(_SC_PAGESIZE);
  return page > 0 ? page : 4096;
}

// Acts only on a synced snapshot whose NodeSLO has a resourceQOSStrategy (Koordinator skips
// without one); a NodeSLO this koordlet cannot read writes nothing. The files the kernel lacks
// are said once, at info, until the set changes; each distinct problem is logged once until it
// changes, not every round.
class CgroupReconcileStrategy final : public QoSStrategy {
 public:
  explicit CgroupReconcileStrategy(const StrategyContext& c)
      : cgroups_(c.cgroups), page_size_(pageSize()) {}

  void runOnce(const StatesSnapshot& states, std::chrono::system_clock::time_point) override {
    if (!states.synced || states.node_slo == nullptr ||
        states.node_slo->resource_qos_strategy == nullptr || states.node == nullptr)
      return;
    report(round(states));
  }

 private:
  std::string round(const StatesSnapshot& states) {
    auto strategy = decodeMemoryQOSStrategy(*states.node_slo->resource_qos_strategy);
    if (!strategy) {
      return fmt::format("NodeSLO {}: {}; nothing written", states.node_slo->name,
                         strategy.error().message);
    }
    auto missing = missingMemoryQOSFiles(cgroups_);
    reportMissing(missing);
    if (missing.size() == kMemoryQOSResources.size())
      return "";
    std::vector<cgroup::Resource> skip;
    for (const auto& m : missing)
      skip.push_back(m.resource);
    MemoryQOSNode node;
    node.driver = cgroups_.root().driver;
    node.page_size = page_size_;
    if (auto it = states.node->allocatable.find("memory"); it != states.node->allocatable.end())
      node.allocatable_memory = it->second.value();
    static const std::vector<PodMeta> kNoPods;
    const auto& pods = states.pods != nullptr ? *states.pods : kNoPods;
    auto plan = planMemoryQOS(*strategy, pods, node);
    auto stats = applyMemoryQOSPlan(plan, skip, page_size_, cgroups_);
    KOORD_VLOG(5, "memory qos: {} written, {} unchanged, {} cgroups absent", stats.written,
               stats.unchanged, stats.absent);
    std::string problem;
    for (const auto& e : plan.errors)
      problem += (problem.empty() ? "" : "; ") + e;
    for (const auto& e : stats.errors)
      problem += (problem.empty() ? "" : "; ") + e;
    return problem;
  }

  void reportMissing(const std::vector<MissingMemoryFile>& missing) {
    std::string paths;
    for (const auto& m : missing)
      paths += (paths.empty() ? "" : ", ") + m.path;
    if (!paths.empty() && paths != last_missing_) {
      // A kernel without them (v1 other than Anolis) is common and not a fault.
      KOORD_LOG_INFO("memory qos: the kernel lacks {}; skipped", paths);
    }
    last_missing_ = std::move(paths);
  }

  void report(std::string problem) {
    if (!problem.empty() && problem != last_problem_)
      KOORD_LOG_WARNING("memory qos: {}", problem);
    last_problem_ = std::move(problem);
  }

  cgroup::ResourceExecutor& cgroups_;
  std::int64_t page_size_;
  std::string last_missing_;
  std::string last_problem_;
};

}  // namespace

StrategySpec cgroupReconcileStrategy() {
  return {
      .name = "cgroup reconcile",
      .gate = "CgroupReconcile",
      .interval = [](const KoordletOptions& o) -> std::chrono::milliseconds {
        return std::chrono::seconds(o.reconcile_interval_seconds);
      },
      .make = makeStrategy<CgroupReconcileStrategy>,
  };
}

}  // namespace koord::roles::koordlet::qosmanager
