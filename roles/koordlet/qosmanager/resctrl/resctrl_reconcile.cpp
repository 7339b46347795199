#include "qosmanager/resctrl/resctrl_reconcile.h"

#include <boost/json/object.hpp>

#include <algorithm>
#include <optional>
#include <string>
#include <unordered_set>
#include <utility>

#include <fmt/format.h>

#include "koord/cgroup/resource_executor.h"
#include "koord/core/log.h"
#include "koordlet_options.h"
#include "metricsadvisor/resource_collector.h"
#include "qosmanager/resctrl/resctrl_fs.h"
#include "qosmanager/sysreconcile/kernel_file.h"
#include "statesinformer/states_snapshot.h"

namespace koord::roles::koordlet::qosmanager {

namespace fs = std::filesystem;

namespace {

// The lines a group's schemata should hold; empty strings for parts left alone.
struct SchemataPlan {
  std::optional<std::uint64_t> l3;
  std::optional<std::int64_t> mb;
};

SchemataPlan planGroup(ResctrlGroup g, const ResctrlClassQOS& qos, const ResctrlCaps& caps,
                       CpuVendor vendor, ResctrlReconcileStats& stats) {
  SchemataPlan plan;
  auto mask = catL3Mask(caps.cbm, caps.min_cbm_bits, qos.cat_start_percent, qos.cat_end_percent);
  if (!mask)
    stats.errors.push_back(
        fmt::format("group {}: L3: {}", resctrlGroupName(g), mask.error().message));
  else
    plan.l3 = *mask;
  if (!caps.mb_ids.empty()) {
    plan.mb = mbaValue(qos.mba_percent, vendor);
    if (!plan.mb) {
      stats.skipped.push_back(
          fmt::format("group {}: mbaPercent {} is not in [1, 100], MB left as it is",
                      resctrlGroupName(g), qos.mba_percent));
    }
  }
  return plan;
}

void applySchemata(const fs::path& root, ResctrlGroup g, const SchemataPlan& plan,
                   const ResctrlCaps& caps, ResctrlReconcileStats& stats) {
  auto current = readGroupSchemata(root, g);
  if (!current) {
    stats.errors.push_back(current.error().message);
    return;
  }
  std::vector<std::string> lines;
  bool differs = false;
  if (plan.l3) {
    lines.push_back(formatL3Line(caps.l3_ids, *plan.l3));
    differs |= !l3Matches(*current, caps.l3_ids, *plan.l3);
  }
  if (plan.mb) {
    lines.push_back(formatMBLine(caps.mb_ids, *plan.mb));
    differs |= !mbMatches(*current, caps.mb_ids, *plan.mb);
  }
  if (!differs) {
    if (!lines.empty())
      ++stats.schemata_unchanged;
    return;
  }
  std::string text;
  for (const auto& l : lines)
    text += l + "\n";
  auto written = writeGroupSchemata(root, g, text);
  if (written) {
    ++stats.schemata_written;
    return;
  }
  if (lines.size() == 1) {
    stats.errors.push_back(written.error().message);
    return;
  }
  // The kernel takes a multi-line write whole or not at all: one refused line (an MB value the
  // hardware does not take, say) must not hold back the other.
  bool any = false;
  for (const auto& l : lines) {
    auto one = writeGroupSchemata(root, g, l + "\n");
    if (!one)
      stats.errors.push_back(one.error().message);
    any |= static_cast<bool>(one);
  }
  if (any)
    ++stats.schemata_written;
}

// The thread ids of the pod's cgroups that `held` does not hold yet.
void collectPodTasks(const cgroup::ResourceExecutor& cgroups, const PodMeta& pod,
                     const std::unordered_set<std::int32_t>& held, std::vector<std::int32_t>& out,
                     ResctrlReconcileStats& stats) {
  auto dir = podCgroupDir(cgroups.root().driver, pod);
  if (!dir) {
    stats.errors.push_back(fmt::format("pod {}: {}", pod.key(), dir.error().message));
    return;
  }
  if (!cgroups.exists(*dir, cgroup::Resource::kCgroupThreads))
    return;  // not created yet, or gone: the next round sees it
  auto children = cgroups.listChildren(*dir, cgroup::Resource::kCgroupThreads);
  if (!children) {
    stats.errors.push_back(fmt::format("pod {}: {}", pod.key(), children.error().message));
    return;
  }
  for (const auto& child : *children) {
    auto text = cgroups.read(child, cgroup::Resource::kCgroupThreads);
    if (!text)
      continue;  // a container that ended between the listing and the read
    auto ids = parseTaskIds(*text, kMaxResctrlTasks);
    if (!ids) {
      stats.errors.push_back(fmt::format(
          "pod {}: {}: {}", pod.key(),
          cgroups.pathOf(child, cgroup::Resource::kCgroupThreads).string(), ids.error().message));
      continue;
    }
    for (auto id : *ids) {
      if (out.size() >= kMaxResctrlTasks)
        return;
      if (!held.contains(id))
        out.push_back(id);
    }
  }
}

void placeTasks(const fs::path& root, ResctrlGroup g, const std::vector<PodMeta>& pods,
                const cgroup::ResourceExecutor& cgroups, ResctrlReconcileStats& stats) {
  // A tasks file that cannot be read leaves every id to be written: the kernel ignores an id
  // the group holds already.
  std::unordered_set<std::int32_t> held;
  if (auto current = readGroupTasks(root, g); current)
    held = std::move(*current);
  else
    stats.errors.push_back(current.error().message);
  std::vector<std::int32_t> ids;
  for (const auto& pod : pods) {
    if (pod.phase != PodPhase::kRunning && pod.phase != PodPhase::kPending)
      continue;
    if (resctrlGroupOf(pod.qos) != g)
      continue;
    collectPodTasks(cgroups, pod, held, ids, stats);
  }
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  auto written = addGroupTasks(root, g, ids);
  stats.tasks_added += written.written;
  stats.task_write_failures += written.failed;
  // A thread that exited since it was read is the common refusal: counted, not an error.
  if (written.failed > 0 && written.written == 0)
    stats.errors.push_back(fmt::format("group {}: every new task id refused: {}",
                                       resctrlGroupName(g), written.first_error));
}

}  // namespace

ResctrlReconcileStats reconcileResctrl(const fs::path& root, const ResctrlQOSStrategy& strategy,
                                       CpuVendor vendor, const std::vector<PodMeta>* pods,
                                       const cgroup::ResourceExecutor& cgroups) {
  ResctrlReconcileStats stats;
  stats.missing = resctrlMissingInterface(root);
  if (!stats.missing.empty())
    return stats;
  auto caps = readResctrlCaps(root);
  if (!caps) {
    stats.errors.push_back(caps.error().message);
    return stats;
  }
  for (auto g : kResctrlGroups) {
    auto created = ensureResctrlGroup(root, g);
    if (!created) {
      stats.errors.push_back(created.error().message);
      continue;
    }
    stats.groups_created += *created ? 1 : 0;
    const auto& qos = strategy.of(g);
    applySchemata(root, g, planGroup(g, qos, *caps, vendor, stats), *caps, stats);
    if (pods != nullptr && qos.enable)
      placeTasks(root, g, *pods, cgroups, stats);
  }
  return stats;
}

CpuVendor readCpuVendor(const fs::path& proc_root) {
  auto text = readKernelFileHead(proc_root / "cpuinfo", kMaxKernelFileBytes);
  if (!text || !*text)
    return CpuVendor::kIntel;
  std::string_view rest = **text;
  while (!rest.empty()) {
    auto nl = rest.find('\n');
    std::string_view line = rest.substr(0, nl);
    rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
    auto colon = line.find(':');
    if (colon != std::string_view::npos && trimKernelText(line.substr(0, colon)) == "vendor_id")
      return cpuVendorOf(line.substr(colon + 1));
  }
  return CpuVendor::kIntel;
}

namespace {

// Acts only on a synced snapshot whose NodeSLO has a resourceQOSStrategy (Koordinator skips
// without one). A NodeSLO this koordlet cannot read changes nothing. Each distinct problem is
// logged once until it changes, not every round.
class ResctrlStrategy final : public QoSStrategy {
 public:
  explicit ResctrlStrategy(const StrategyContext& c)
      : root_(fs::path(c.options.sys_fs_root_dir) / "resctrl"),
        proc_root_(c.options.proc_root_dir),
        cgroups_(c.cgroups) {}

  void runOnce(const StatesSnapshot& states, std::chrono::system_clock::time_point) override {
    if (!states.synced || states.node_slo == nullptr ||
        states.node_slo->resource_qos_strategy == nullptr)
      return;
    report(round(states));
  }

 private:
  std::string round(const StatesSnapshot& states) {
    unsupported_ = false;
    auto strategy = decodeResctrlQOSStrategy(*states.node_slo->resource_qos_strategy);
    if (!strategy) {
      return fmt::format("NodeSLO {}: {}; nothing changed", states.node_slo->name,
                         strategy.error().message);
    }
    if (!vendor_)
      vendor_ = readCpuVendor(proc_root_);
    auto stats = reconcileResctrl(root_, *strategy, *vendor_, states.pods.get(), cgroups_);
    if (!stats.missing.empty()) {
      // A node without RDT is common and not a fault: said once, at info.
      unsupported_ = true;
      return fmt::format("{} is missing (resctrl not mounted, or no L3 CAT or MBA); skipped",
                         stats.missing);
    }
    KOORD_VLOG(5, "resctrl: {} groups created, {} schemata written, {} unchanged, {} tasks added",
               stats.groups_created, stats.schemata_written, stats.schemata_unchanged,
               stats.tasks_added);
    std::string problem;
    for (const auto& s : stats.skipped)
      problem += (problem.empty() ? "" : "; ") + s;
    for (const auto& e : stats.errors)
      problem += (problem.empty() ? "" : "; ") + e;
    return problem;
  }

  void report(std::string problem) {
    if (!problem.empty() && problem != last_problem_) {
      if (unsupported_)
        KOORD_LOG_INFO("resctrl: {}", problem);
      else
        KOORD_LOG_WARNING("resctrl: {}", problem);
    }
    last_problem_ = std::move(problem);
  }

  fs::path root_;
  fs::path proc_root_;
  const cgroup::ResourceExecutor& cgroups_;
  std::optional<CpuVendor> vendor_;
  bool unsupported_ = false;
  std::string last_problem_;
};

}  // namespace

StrategySpec resctrlStrategy() {
  return {
      .name = "resctrl",
      .gate = "RdtResctrl",
      .interval = [](const KoordletOptions& o) -> std::chrono::milliseconds {
        return std::chrono::seconds(o.reconcile_interval_seconds);
      },
      .make = makeStrategy<ResctrlStrategy>,
  };
}

}  // namespace koord::roles::koordlet::qosmanager
