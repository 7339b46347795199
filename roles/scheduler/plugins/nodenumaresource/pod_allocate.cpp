// The resource manager's steps over one node: free NUMA resources, hints, the even spread over
// a hint's NUMA nodes, and the CPU choice per NUMA node.
#include "plugins/nodenumaresource/pod_allocate.h"

#include <algorithm>
#include <bit>
#include <string>
#include <utility>

#include <fmt/format.h>

namespace koord::roles::scheduler::nodenumaresource {

namespace {

bool requiredPolicy(const AllocateRequest& r) {
  return r.bind.required;
}

// The zones' free resources, cpu cut down to the CPUs a required bind policy may use there.
std::vector<NumaNodeResources> freeOnZones(const NodeNumaView& node,
                                           const AllocateRequest& request) {
  std::vector<NumaNodeResources> free =
      node.allocation
          .numaAvailability(node.topology, node.zones, node.cpu_amplification_ratio,
                            request.reusable)
          .available;
  if (!requiredPolicy(request))
    return free;
  const CpuSet available = node.allocation.availableCpus(
      node.topology, node.max_ref_count, node.reserved_cpus, request.preferred_cpus);
  for (NumaNodeResources& zone : free) {
    const std::int64_t cpu = zone.resources.get(NumaResource::kCpu);
    if (cpu == 0)
      continue;
    const CpuSet in_node = available & node.topology.cpusInNode(zone.node);
    const std::int64_t usable =
        std::int64_t{countCpusUsableByRequiredPolicy(node.topology, in_node, request.bind.policy)} *
        1000;
    if (usable < cpu)
      zone.resources.set(NumaResource::kCpu, usable);
  }
  return free;
}

// One NUMA node's share of what is left of a resource, `nodes_left` nodes still to go.
std::int64_t share(NumaResource r, std::int64_t remaining, int nodes_left, const NodeNumaView& node,
                   const AllocateRequest& request) {
  if (r != NumaResource::kCpu)
    return remaining / nodes_left;
  if (!request.request_cpu_bind)
    return remaining / nodes_left;
  // Bound pods ask whole CPUs; remaining is millicores, rounded up as Quantity.Value() would.
  const std::int64_t cpus = (remaining + 999) / 1000;
  if (request.bind.required && request.bind.policy == CpuBindPolicy::kFullPCPUs) {
    const std::int64_t per_core = std::max(node.topology.cpusPerCore(), 1);
    return (cpus / per_core) / nodes_left * per_core * 1000;
  }
  return cpus / nodes_left * 1000;
}

}  // namespace

CpuSet bindableCpus(const NodeNumaView& node, const AllocateRequest& request) {
  CpuSet available = node.allocation.availableCpus(node.topology, node.max_ref_count,
                                                   node.reserved_cpus, request.preferred_cpus);
  if (!requiredPolicy(request))
    return available;
  return cpusUsableByRequiredPolicy(node.topology, available, request.bind.policy);
}

bool cpusMayFit(const NodeNumaView& node, const AllocateRequest& request) {
  const CpuSet available = node.allocation.availableCpus(
      node.topology, node.max_ref_count, node.reserved_cpus, request.preferred_cpus);
  const int needed = request.num_cpus_needed;
  const int free = available.size();
  if (free < needed)
    return false;
  if (!requiredPolicy(request))
    return true;
  const NodeCpuTopology& t = node.topology;
  const int per_core = std::max(t.cpusPerCore(), 1);
  if (request.bind.policy == CpuBindPolicy::kFullPCPUs && t.uniformCores()) {
    // Each unavailable CPU spoils at most one core: a lower bound on the whole free cores.
    if (std::int64_t{t.numCores() - (t.numCpus() - free)} * per_core >= needed)
      return true;
  } else if (request.bind.policy == CpuBindPolicy::kSpreadByPCPUs && t.uniformCores()) {
    // Free CPUs sit on at least free / per_core cores and at most on every core.
    if ((free + per_core - 1) / per_core >= needed)
      return true;
    if (t.numCores() < needed)
      return false;
  }
  return countCpusUsableByRequiredPolicy(t, available, request.bind.policy) >= needed;
}

Expected<ProviderHints> podNumaHints(const NodeNumaView& node, const AllocateRequest& request,
                                     const ResourceAllocationScorer* numa_scorer,
                                     NumaTopologyPolicy policy) {
  if (node.zones.empty())
    return invalidArgument(std::string(kErrInsufficientNumaResources));
  const std::vector<NumaNodeResources> free = freeOnZones(node, request);
  std::vector<NumaZone> zones;
  zones.reserve(free.size());
  for (std::size_t i = 0; i < free.size(); ++i)
    zones.push_back(NumaZone{node.zones[i].node, node.zones[i].resources, free[i].resources});
  auto hints = generateNumaHints(zones, request.requests, numa_scorer, policy);
  if (!hints)
    return invalidArgument(std::string(kReasonTooManyNumaNodes));
  return std::move(*hints);
}

Expected<std::vector<NumaNodeResources>> distributeOverHint(const NodeNumaView& node,
                                                            const AllocateRequest& request) {
  if (node.zones.empty())
    return invalidArgument(std::string(kErrInsufficientNumaResources));
  const std::vector<NumaNodeResources> free = freeOnZones(node, request);
  std::uint8_t named = 0;
  for (const NumaNodeResources& z : free)
    named |= z.resources.present;
  auto freeOf = [&](int numa_node, NumaResource r) -> std::int64_t {
    for (const NumaNodeResources& z : free) {
      if (z.node == numa_node)
        return z.resources.get(r);
    }
    return 0;
  };
  std::vector<int> hint_nodes;
  for (NumaMask m = request.hint.affinity; m != 0; m &= m - 1)
    hint_nodes.push_back(std::countr_zero(m));

  const NumaResources& requests =
      request.request_cpu_bind ? request.original_requests : request.requests;
  std::vector<NumaNodeResources> out;
  std::vector<std::string> reasons;
  for (NumaResource r : kAllNumaResources) {
    const auto bit = static_cast<std::uint8_t>(1U << static_cast<unsigned>(r));
    if (!requests.has(r) || (named & bit) == 0)
      continue;
    std::vector<int> order = hint_nodes;
    std::stable_sort(order.begin(), order.end(),
                     [&](int a, int b) { return freeOf(a, r) < freeOf(b, r); });
    std::int64_t remaining = requests.get(r);
    for (std::size_t i = 0; i < order.size(); ++i) {
      const std::int64_t want =
          share(r, remaining, static_cast<int>(order.size() - i), node, request);
      const std::int64_t got = std::min(freeOf(order[i], r), want);
      if (got == 0)
        continue;
      auto it = std::find_if(out.begin(), out.end(),
                             [&](const NumaNodeResources& x) { return x.node == order[i]; });
      if (it == out.end()) {
        out.push_back(NumaNodeResources{order[i], {}});
        it = out.end() - 1;
      }
      it->resources.set(r, got);
      remaining -= got;
    }
    if (remaining != 0)
      reasons.push_back(fmt::format("Insufficient NUMA {}", toString(r)));
  }
  if (!reasons.empty()) {
    std::string joined;
    for (const std::string& reason : reasons)
      joined += (joined.empty() ? "" : ", ") + reason;
    return invalidArgument(std::move(joined));
  }
  std::sort(out.begin(), out.end(),
            [](const NumaNodeResources& a, const NumaNodeResources& b) { return a.node < b.node; });
  return out;
}

Expected<CpuSet> allocateCpus(const NodeNumaView& node, const AllocateRequest& request,
                              std::span<const NumaNodeResources> numa) {
  CpuSet available = bindableCpus(node, request);
  if (available.size() < request.num_cpus_needed)
    return invalidArgument(std::string(kErrNotEnoughCpus));
  std::vector<AllocatedCpu> adjusted;
  AllocatedCpus allocated = node.allocation.allocatedCpus();
  if (!request.preferred_cpus.empty()) {
    adjusted = node.allocation.allocatedCpusExcept(request.preferred_cpus);
    allocated = adjusted;
  }
  TakeCpusRequest take;
  take.bind_policy = request.bind.policy;
  take.exclusive_policy = request.exclusive;
  take.numa_strategy = node.numa_strategy;

  CpuSet result;
  int needed = request.num_cpus_needed;
  if (!numa.empty()) {
    for (const NumaNodeResources& n : numa) {
      const CpuSet in_node = available & node.topology.cpusInNode(n.node);
      take.num_cpus = static_cast<int>(
          std::min<std::int64_t>(in_node.size(), n.resources.get(NumaResource::kCpu) / 1000));
      auto cpus = takePreferredCpus(node.topology, node.max_ref_count, in_node,
                                    request.preferred_cpus, allocated, take);
      if (!cpus)
        return cpus;
      result.unionWith(*cpus);
    }
    needed -= result.size();
    if (needed != 0)
      return invalidArgument(std::string(kErrNotEnoughCpus));
  }
  if (needed > 0) {
    available.subtract(result);
    take.num_cpus = needed;
    auto cpus = takePreferredCpus(node.topology, node.max_ref_count, available,
                                  request.preferred_cpus, allocated, take);
    if (!cpus)
      return cpus;
    result.unionWith(*cpus);
  }
  if (requiredPolicy(request) &&
      !satisfiesRequiredPolicy(node.topology, result, request.bind.policy))
    return invalidArgument(fmt::format("insufficient CPUs to satisfy required cpu bind policy {}",
                                       toString(request.bind.policy)));
  return result;
}

Expected<PodAllocation> allocatePod(const NodeNumaView& node, const AllocateRequest& request) {
  PodAllocation out;
  out.exclusive = request.exclusive;
  if (request.hint.affinity != 0) {
    auto numa = distributeOverHint(node, request);
    if (!numa)
      return numa.error();
    out.numa_resources = std::move(*numa);
  }
  if (request.request_cpu_bind) {
    auto cpus = allocateCpus(node, request, out.numa_resources);
    if (!cpus)
      return cpus.error();
    out.cpus = std::move(*cpus);
  }
  return out;
}

}  // namespace koord::roles::scheduler::nodenumaresource
