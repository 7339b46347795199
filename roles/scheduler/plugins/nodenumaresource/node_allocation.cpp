// NodeAllocation: per-CPU hold counts, per-NUMA-node held resources and NUMA node usage.
#include "plugins/nodenumaresource/node_allocation.h"

#include <algorithm>
#include <bit>
#include <utility>

namespace koord::roles::scheduler::nodenumaresource {

bool NodeAllocation::add(const NodeCpuTopology& topology, PodAllocation pod) {
  if (pods_.find(pod.uid) != pods_.end())
    return false;
  Entry e;
  pod.cpus.forEach([&](int c) {
    const auto i = static_cast<std::size_t>(c);
    if (i >= cpus_.size())
      cpus_.resize(i + 1);
    ++cpus_[i].ref_count;
    cpus_[i].exclusive = pod.exclusive;
    held_.add(c);
    if (const CpuDetail* d = topology.find(c))
      e.numa_nodes |= numaBit(d->node_id);
  });
  const int used = std::popcount(e.numa_nodes);
  for (NumaMask m = e.numa_nodes; m != 0; m &= m - 1) {
    const auto node = static_cast<std::size_t>(std::countr_zero(m));
    ++(used > 1 ? shared_ : single_)[node];
  }
  for (const NumaNodeResources& r : pod.numa_resources)
    allocatedOn(r.node)->add(r.resources);
  e.pod = std::move(pod);
  std::string uid = e.pod.uid;
  pods_.emplace(std::move(uid), std::move(e));
  return true;
}

void NodeAllocation::update(const NodeCpuTopology& topology, PodAllocation pod) {
  release(pod.uid);
  add(topology, std::move(pod));
}

bool NodeAllocation::release(std::string_view uid) {
  auto it = pods_.find(uid);
  if (it == pods_.end())
    return false;
  const Entry& e = it->second;
  e.pod.cpus.forEach([&](int c) {
    const auto i = static_cast<std::size_t>(c);
    if (i >= cpus_.size() || cpus_[i].ref_count == 0)
      return;
    if (--cpus_[i].ref_count == 0) {
      cpus_[i].exclusive = CpuExclusivePolicy::kNone;
      held_.remove(c);
    }
  });
  const int used = std::popcount(e.numa_nodes);
  for (NumaMask m = e.numa_nodes; m != 0; m &= m - 1) {
    auto& counts = used > 1 ? shared_ : single_;
    const auto node = static_cast<std::size_t>(std::countr_zero(m));
    if (counts[node] > 0)
      --counts[node];
  }
  for (const NumaNodeResources& r : e.pod.numa_resources) {
    if (NumaResources* held = allocatedOn(r.node))
      held->subtractFloorZero(r.resources);
  }
  pods_.erase(it);
  while (!cpus_.empty() && cpus_.back().ref_count == 0)
    cpus_.pop_back();
  return true;
}

const PodAllocation* NodeAllocation::find(std::string_view uid) const {
  auto it = pods_.find(uid);
  return it == pods_.end() ? nullptr : &it->second.pod;
}

std::vector<AllocatedCpu> NodeAllocation::allocatedCpusExcept(const CpuSet& preferred) const {
  std::vector<AllocatedCpu> out(cpus_);
  preferred.forEach([&](int c) {
    const auto i = static_cast<std::size_t>(c);
    if (i >= out.size() || out[i].ref_count == 0)
      return;
    if (--out[i].ref_count == 0)
      out[i].exclusive = CpuExclusivePolicy::kNone;
  });
  return out;
}

CpuSet NodeAllocation::availableCpus(const NodeCpuTopology& topology, int max_ref_count,
                                     const CpuSet& reserved, const CpuSet& preferred) const {
  CpuSet out = topology.cpus();
  out.subtract(reserved);
  if (max_ref_count <= 1 && preferred.empty()) {
    out.subtract(held_);
    return out;
  }
  const auto limit = static_cast<std::uint32_t>(std::max(max_ref_count, 1));
  held_.forEach([&](int c) {
    std::uint32_t refs = cpus_[static_cast<std::size_t>(c)].ref_count;
    if (preferred.contains(c))
      --refs;
    if (refs >= limit)
      out.remove(c);
  });
  return out;
}

NumaNodeStatus NodeAllocation::numaNodeStatus(int node_id) const {
  if (node_id < 0 || node_id > kMaxNumaNodeId)
    return NumaNodeStatus::kIdle;
  const auto i = static_cast<std::size_t>(node_id);
  if (single_[i] == 0 && shared_[i] == 0)
    return NumaNodeStatus::kIdle;
  if (shared_[i] == 0)
    return NumaNodeStatus::kSingle;
  return NumaNodeStatus::kShared;
}

std::vector<NumaNodeStatus> NodeAllocation::numaNodeStatuses(int count) const {
  std::vector<NumaNodeStatus> out;
  out.reserve(static_cast<std::size_t>(std::max(count, 0)));
  for (int i = 0; i < count; ++i)
    out.push_back(numaNodeStatus(i));
  return out;
}

const NumaResources* NodeAllocation::allocatedOnNumaNode(int node_id) const {
  auto it = std::lower_bound(numa_allocated_.begin(), numa_allocated_.end(), node_id,
                             [](const NumaNodeResources& r, int node) { return r.node < node; });
  return it == numa_allocated_.end() || it->node != node_id ? nullptr : &it->resources;
}

NumaResources* NodeAllocation::allocatedOn(int node_id) {
  auto it = std::lower_bound(numa_allocated_.begin(), numa_allocated_.end(), node_id,
                             [](const NumaNodeResources& r, int node) { return r.node < node; });
  if (it == numa_allocated_.end() || it->node != node_id)
    it = numa_allocated_.insert(it, NumaNodeResources{node_id, {}});
  return &it->resources;
}

NodeAllocation::NumaAvailability NodeAllocation::numaAvailability(
    const NodeCpuTopology& topology, std::span<const NumaNodeResources> zones,
    double cpu_amplification_ratio, std::span<const NumaNodeResources> reusable) const {
  NumaAvailability out;
  out.available.reserve(zones.size());
  for (const NumaNodeResources& zone : zones) {
    NumaNodeResources available = zone;
    if (const NumaResources* held = allocatedOnNumaNode(zone.node)) {
      NumaResources allocated = *held;
      if (cpu_amplification_ratio > 1) {
        const std::int64_t bound =
            std::int64_t{held_.intersectionSize(topology.cpusInNode(zone.node))} * 1000;
        allocated.set(NumaResource::kCpu, allocated.get(NumaResource::kCpu) - bound +
                                              amplify(bound, cpu_amplification_ratio));
      }
      for (const NumaNodeResources& r : reusable) {
        if (r.node == zone.node)
          allocated.subtractFloorZero(r.resources);
      }
      available.resources.subtractFloorZero(allocated);
      out.allocated.push_back(NumaNodeResources{zone.node, allocated});
    }
    out.available.push_back(std::move(available));
  }
  return out;
}

}  // namespace koord::roles::scheduler::nodenumaresource
