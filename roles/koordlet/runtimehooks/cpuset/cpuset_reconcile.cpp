#include "runtimehooks/cpuset/cpuset_reconcile.h"

#include <fmt/format.h>

#include <algorithm>

#include "koord/cgroup/kubepods_path.h"
#include "koord/cgroup/resource_executor.h"
#include "metricsadvisor/resource_collector.h"
#include "runtimehooks/cpuset/cpuset_allocator.h"

namespace koord::roles::koordlet {

namespace {

// The container ID a child directory's name carries: the name itself (cgroupfs) or what is
// between the last '-' and ".scope" (systemd); containerDir checks it.
std::string_view idOfChild(std::string_view name) {
  if (name.ends_with(".scope")) {
    name.remove_suffix(6);
    auto dash = name.rfind('-');
    return dash == std::string_view::npos ? std::string_view() : name.substr(dash + 1);
  }
  return name;
}

class Writer {
 public:
  Writer(cgroup::ResourceExecutor& cgroups, CPUSetReconcileStats& stats)
      : cgroups_(cgroups), stats_(stats) {}

  // The first failure, for the caller to report; refused writes are counted only.
  void write(const std::string& dir, cgroup::Resource r, std::string_view value) {
    auto outcome = cgroups_.write(dir, r, value);
    if (!outcome) {
      if (cgroup::isRefusedWrite(outcome.error()))
        ++stats_.refused;
      else if (error.empty())
        error = outcome.error().message;
    } else if (*outcome == cgroup::WriteOutcome::kWritten) {
      ++stats_.written;
    } else {
      ++stats_.unchanged;
    }
  }

  std::string error;

 private:
  cgroup::ResourceExecutor& cgroups_;
  CPUSetReconcileStats& stats_;
};

void reconcilePod(cgroup::ResourceExecutor& cgroups, const CPUSetRule* rule, const PodMeta& pod,
                  bool be_cpu_manager, CPUSetReconcileStats& stats) {
  auto plan = planContainerCPUSet(rule, pod.labels, pod.annotations, pod.kube_qos, be_cpu_manager);
  if (!plan) {
    stats.errors.emplace_back(
        pod.key(), fmt::format("{}: {}", kAnnotationResourceStatus, plan.error().message));
    return;
  }
  if (plan->cpus.empty() && !plan->unset_cfs_quota)
    return;
  auto dir = podCgroupDir(cgroups.root().driver, pod);
  if (!dir) {
    stats.errors.emplace_back(pod.key(), dir.error().message);
    return;
  }
  Writer writer(cgroups, stats);
  std::vector<std::string> targets;
  for (const ContainerMeta& c : pod.containers) {
    if (c.id.empty())
      continue;
    auto cdir = cgroup::containerDir(cgroups.root().driver, *dir, c.runtime, c.id);
    if (!cdir) {
      if (writer.error.empty())
        writer.error = cdir.error().message;
      continue;
    }
    targets.push_back(std::move(*cdir));
  }
  if (auto sandbox = sandboxCgroupDir(cgroups, *dir, pod))
    targets.push_back(std::move(*sandbox));
  for (const std::string& target : targets) {
    if (!plan->cpus.empty())
      writer.write(target, cgroup::Resource::kCpusetCpus, plan->cpus);
    if (plan->unset_cfs_quota)
      writer.write(target, cgroup::Resource::kCpuCfsQuota, "-1");
  }
  if (plan->unset_cfs_quota)
    writer.write(*dir, cgroup::Resource::kCpuCfsQuota, "-1");
  if (!writer.error.empty())
    stats.errors.emplace_back(pod.key(), std::move(writer.error));
}

}  // namespace

std::optional<std::string> sandboxCgroupDir(const cgroup::ResourceExecutor& cgroups,
                                            const std::string& pod_dir, const PodMeta& pod) {
  const auto driver = cgroups.root().driver;
  std::string runtime;
  std::vector<std::string> containers;
  for (const ContainerMeta& c : pod.containers) {
    if (c.id.empty())
      continue;
    runtime = c.runtime;
    if (auto cdir = cgroup::containerDir(driver, pod_dir, c.runtime, c.id))
      containers.push_back(std::move(*cdir));
  }
  if (runtime.empty())
    return std::nullopt;
  auto children = cgroups.listChildren(pod_dir, cgroup::Resource::kCpusetCpus);
  if (!children)
    return std::nullopt;
  std::optional<std::string> sandbox;
  for (std::string& child : *children) {
    if (std::find(containers.begin(), containers.end(), child) != containers.end())
      continue;
    const std::string_view name = std::string_view(child).substr(child.rfind('/') + 1);
    auto expected = cgroup::containerDir(driver, pod_dir, runtime, idOfChild(name));
    if (!expected || *expected != child)
      continue;
    if (sandbox)
      return std::nullopt;
    sandbox = std::move(child);
  }
  return sandbox;
}

CPUSetReconcileStats reconcileCPUSets(cgroup::ResourceExecutor& cgroups, const CPUSetRule* rule,
                                      std::span<const PodMeta> pods,
                                      std::span<const HostApplication> host_apps,
                                      bool be_cpu_manager) {
  CPUSetReconcileStats stats;
  for (const PodMeta& pod : pods) {
    if (pod.isRunning())
      reconcilePod(cgroups, rule, pod, be_cpu_manager, stats);
  }
  if (rule == nullptr)
    return stats;
  for (const HostApplication& app : host_apps) {
    const std::string what = fmt::format("host application {}", app.name);
    auto cpus = hostAppCpuset(*rule, app.qos);
    if (!cpus) {
      stats.errors.emplace_back(what, cpus.error().message);
      continue;
    }
    if (cpus->empty())
      continue;
    Writer writer(cgroups, stats);
    writer.write(hostAppCgroupDir(cgroups.root().driver, app), cgroup::Resource::kCpusetCpus,
                 *cpus);
    if (!writer.error.empty())
      stats.errors.emplace_back(what, std::move(writer.error));
  }
  return stats;
}

}  // namespace koord::roles::koordlet
