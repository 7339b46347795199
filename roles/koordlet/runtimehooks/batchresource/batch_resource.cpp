#include "runtimehooks/batchresource/batch_resource.h"

#include <algorithm>

#include "koord/cgroup/cfs_quota_tree.h"
#include "koord/cgroup/kubepods_path.h"
#include "koord/cgroup/resource_executor.h"
#include "koord/core/saturating.h"
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
  return std::clamp<std::int64_t>(saturatingMul(milli, 1024) / 1000, 2, 262144);
}

std::int64_t milliCPUToQuota(std::int64_t milli) {
  if (milli <= 0)
    return -1;
  // A limit above every CPU Linux can have is clamped to that many CPUs rather than made -1
  // (Koordinator's int64 product wraps negative here): a BE pod that asked for a limit keeps a
  // quota, and this one is far below the kernel's largest (2^44-1 us), so the write succeeds.
  return std::clamp<std::int64_t>(saturatingMul(milli, 100), 1000, kMaxCFSQuota);
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
    request = saturatingAdd(request,
                            std::max<std::int64_t>(0, valueOf(c.requests, kBatchCPU).value_or(0)));
    // One container without a limit makes the pod unlimited.
    auto cl = valueOf(c.limits, kBatchCPU).value_or(0);
    cpu_limit = (cpu_limit < 0 || cl <= 0) ? -1 : saturatingAdd(cpu_limit, cl);
    auto ml = valueOf(c.limits, kBatchMemory).value_or(0);
    // A sum past int64 stays at its maximum, which the kernel reads as no limit: no node has
    // that much memory to limit.
    mem_limit = (mem_limit < 0 || ml <= 0) ? -1 : saturatingAdd(mem_limit, ml);
  }
  plan.pod.cpu_shares = milliCPUToShares(request);
  plan.pod.cfs_quota = cpu_limit < 0 ? -1 : milliCPUToQuota(cpu_limit);
  plan.pod.memory_limit = mem_limit;
  return plan;
}

ApplyStats applyBatchResource(cgroup::ResourceExecutor& cgroups, const PodMeta& pod,
                              const BatchResourcePlan& plan) {
  ApplyStats stats;
  auto count = [&](const kube::Error* error, bool written) {
    if (error != nullptr && cgroup::isRefusedWrite(*error))
      ++stats.refused;
    else if (error != nullptr)
      stats.errors.push_back(error->message);
    else if (written)
      ++stats.written;
    else
      ++stats.unchanged;
  };
  // CFS quotas go in together at the end, in the order cgroup v1 accepts.
  std::vector<std::pair<std::string, std::int64_t>> quotas;
  auto write = [&](const std::string& dir, const CgroupValues& v, std::int64_t quota) {
    const std::pair<cgroup::Resource, std::int64_t> values[] = {
        {cgroup::Resource::kCpuShares, v.cpu_shares},
        {cgroup::Resource::kMemoryLimit, v.memory_limit}};
    for (const auto& [resource, value] : values) {
      auto r = cgroups.write(dir, resource, std::to_string(value));
      if (!r) {
        const kube::Error error = r.error();
        count(&error, false);
      } else {
        count(nullptr, *r == cgroup::WriteOutcome::kWritten);
      }
    }
    quotas.emplace_back(dir, quota);
  };
  auto dir = podCgroupDir(cgroups.root().driver, pod);
  if (!dir) {
    stats.errors.push_back(dir.error().message);
    return stats;
  }
  // v1 refuses a quota above the parent's (the besteffort tier's, while CPU suppression holds it
  // down), so the plan's quotas are kept within it: the container's within the pod's new one.
  // Shares and memory limits take any order.
  const std::int64_t pod_quota =
      cgroup::capToParentQuota(cgroups, *dir, plan.pod.cfs_quota).value_or(plan.pod.cfs_quota);
  write(*dir, plan.pod, pod_quota);
  for (std::size_t i = 0; i < pod.containers.size() && i < plan.containers.size(); ++i) {
    const auto& c = pod.containers[i];
    if (c.id.empty())
      continue;
    auto cdir = cgroup::containerDir(cgroups.root().driver, *dir, c.runtime, c.id);
    if (!cdir) {
      stats.errors.push_back(cdir.error().message);
      continue;
    }
    write(*cdir, plan.containers[i], cgroup::quotaWithin(plan.containers[i].cfs_quota, pod_quota));
  }
  auto written = cgroup::writeQuotasLeveled(cgroups, quotas);
  stats.written += written.written;
  stats.unchanged += written.unchanged;
  for (const auto& e : written.errors)
    count(&e.error, false);
  return stats;
}

}  // namespace koord::roles::koordlet
