#include "runtimehooks/batchresource/batch_resource.h"

#include <algorithm>

#include "koord/cgroup/kubepods_path.h"
#include "koord/cgroup/resource_executor.h"
#include "metricsadvisor/resource_collector.h"

namespace koord::roles::koordlet {

namespace {

constexpr std::string_view kBatchCPU = "kubernetes.io/batch-cpu";
constexpr std::string_view kBatchMemory = "kubernetes.io/batch-memory";

// batch-cpu is written in integer milli-cores ("1500" means 1.5 cores), batch-memory in bytes.
std::optional<std::int64_t> valueOf(const kube::ResourceList& list, std::string_view name) {
  auto it = list.find(std::string(name));
  if (it == list.end())
    return std::nullopt;
  return it->second.value();
}

CgroupValues containerValues(const ContainerMeta& c) {
  CgroupValues v;
  v.cpu_shares = milliCPUToShares(valueOf(c.requests, kBatchCPU).value_or(0));
  v.cfs_quota = milliCPUToQuota(valueOf(c.limits, kBatchCPU).value_or(0));
  auto mem = valueOf(c.limits, kBatchMemory).value_or(0);
  v.memory_limit = mem > 0 ? mem : -1;
  return v;
}

}  // namespace

std::int64_t milliCPUToShares(std::int64_t milli) {
  if (milli <= 0)
    return 2;
  return std::clamp<std::int64_t>(milli * 1024 / 1000, 2, 262144);
}

std::int64_t milliCPUToQuota(std::int64_t milli) {
  auto quota = milli * 100;
  if (quota <= 0)
    return -1;
  return std::max<std::int64_t>(quota, 1000);
}

std::optional<BatchResourcePlan> planBatchResource(const PodMeta& pod) {
  if (apis::podQoSClassRaw(pod.labels) != apis::QoSClass::kBE)
    return std::nullopt;
  bool any = false;
  for (const auto& c : pod.containers) {
    for (auto name : {kBatchCPU, kBatchMemory}) {
      if (valueOf(c.requests, name) || valueOf(c.limits, name))
        any = true;
    }
  }
  if (!any)
    return std::nullopt;
  BatchResourcePlan plan;
  std::int64_t request = 0, cpu_limit = 0, mem_limit = 0;
  for (const auto& c : pod.containers) {
    plan.containers.push_back(containerValues(c));
    request += std::max<std::int64_t>(0, valueOf(c.requests, kBatchCPU).value_or(0));
    // One container without a limit makes the pod unlimited.
    auto cl = valueOf(c.limits, kBatchCPU).value_or(0);
    cpu_limit = (cpu_limit < 0 || cl <= 0) ? -1 : cpu_limit + cl;
    auto ml = valueOf(c.limits, kBatchMemory).value_or(0);
    mem_limit = (mem_limit < 0 || ml <= 0) ? -1 : mem_limit + ml;
  }
  plan.pod.cpu_shares = milliCPUToShares(request);
  plan.pod.cfs_quota = cpu_limit < 0 ? -1 : milliCPUToQuota(cpu_limit);
  plan.pod.memory_limit = mem_limit;
  return plan;
}

ApplyStats applyBatchResource(cgroup::ResourceExecutor& cgroups, const PodMeta& pod,
                              const BatchResourcePlan& plan) {
  ApplyStats stats;
  auto write = [&](const std::string& dir, const CgroupValues& v) {
    const std::pair<cgroup::Resource, std::int64_t> values[] = {
        {cgroup::Resource::kCpuShares, v.cpu_shares},
        {cgroup::Resource::kCpuCfsQuota, v.cfs_quota},
        {cgroup::Resource::kMemoryLimit, v.memory_limit}};
    for (const auto& [resource, value] : values) {
      auto r = cgroups.write(dir, resource, std::to_string(value));
      if (!r) {
        stats.errors.push_back(r.error().message);
      } else if (*r == cgroup::WriteOutcome::kWritten) {
        ++stats.written;
      } else {
        ++stats.unchanged;
      }
    }
  };
  auto dir = podCgroupDir(cgroups.root().driver, pod);
  if (!dir) {
    stats.errors.push_back(dir.error().message);
    return stats;
  }
  // No parent-before-child order is needed: the kernel enforces shares, quotas and memory limits
  // hierarchically and refuses a child above its parent only for cpuset, not touched here.
  write(*dir, plan.pod);
  for (std::size_t i = 0; i < pod.containers.size() && i < plan.containers.size(); ++i) {
    const auto& c = pod.containers[i];
    if (c.id.empty())
      continue;
    auto cdir = cgroup::containerDir(cgroups.root().driver, *dir, c.runtime, c.id);
    if (!cdir) {
      stats.errors.push_back(cdir.error().message);
      continue;
    }
    write(*cdir, plan.containers[i]);
  }
  return stats;
}

}  // namespace koord::roles::koordlet
