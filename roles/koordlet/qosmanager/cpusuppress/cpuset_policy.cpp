#include "qosmanager/cpusuppress/cpuset_policy.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <utility>

namespace koord::roles::koordlet::qosmanager {

namespace {

// Growing BE is welcome but not urgent: at most this share of the node's CPUs per round, so a
// brief LS lull does not hand BE the whole node at once.
constexpr double kBEMaxIncreaseCPURatio = 0.1;

using Group = std::vector<cgroup::CpuInfo>;

std::vector<Group> groupByNumaNode(std::span<const cgroup::CpuInfo> candidates) {
  std::map<std::pair<int, int>, Group> by_node;
  for (const cgroup::CpuInfo& c : candidates)
    by_node[{c.node_id, c.socket_id}].push_back(c);
  std::vector<Group> groups;
  groups.reserve(by_node.size());
  for (auto& [key, group] : by_node) {
    std::sort(group.begin(), group.end(), [](const cgroup::CpuInfo& a, const cgroup::CpuInfo& b) {
      return a.core_id != b.core_id ? a.core_id < b.core_id : a.cpu_id < b.cpu_id;
    });
    groups.push_back(std::move(group));
  }
  std::sort(groups.begin(), groups.end(), [](const Group& a, const Group& b) {
    return a.size() != b.size() ? a.size() > b.size() : a.front().cpu_id < b.front().cpu_id;
  });
  return groups;
}

}  // namespace

int targetBECPUCount(std::int64_t suppress_milli, std::size_t current_count,
                     std::size_t node_cpu_count) {
  // Integer division truncates towards zero, which is the ceiling for negative values.
  std::int64_t want = suppress_milli > 0 ? (suppress_milli + 999) / 1000 : suppress_milli / 1000;
  want = std::max<std::int64_t>(want, kBEMinCPUSetCPUs);
  const auto max_increase = static_cast<std::int64_t>(
      std::ceil(static_cast<double>(node_cpu_count) * kBEMaxIncreaseCPURatio));
  const auto current = static_cast<std::int64_t>(current_count);
  if (want - current > max_increase)
    want = current + max_increase;
  return static_cast<int>(want);
}

std::vector<int> selectSpreadCPUs(int count, std::span<const cgroup::CpuInfo> candidates) {
  std::vector<int> picked;
  if (count <= 0 || candidates.size() < static_cast<std::size_t>(count))
    return picked;
  const std::vector<Group> groups = groupByNumaNode(candidates);
  const std::size_t n = groups.size();
  std::set<int> used;
  int need = count;

  // Whole cores first: a pair of siblings per group, round robin, until less than a pair is
  // needed or a full round finds no free pair.
  std::size_t i = 0;
  int need_at_round_start = -1;
  while (need > 1) {
    if (i == 0) {
      if (need_at_round_start == need)
        break;
      need_at_round_start = need;
    }
    const Group& g = groups[i];
    for (std::size_t j = 0; j + 1 < g.size(); ++j) {
      if (used.contains(g[j].cpu_id))
        continue;
      if (g[j].core_id == g[j + 1].core_id) {
        picked.push_back(g[j].cpu_id);
        picked.push_back(g[j + 1].cpu_id);
        used.insert(g[j].cpu_id);
        used.insert(g[j + 1].cpu_id);
        need -= 2;
        break;
      }
    }
    i = (i + 1) % n;
  }

  // Then single CPUs, round robin from the group the pair pass stopped at.
  const std::size_t start = i;
  need_at_round_start = -1;
  while (need > 0) {
    if (i == start) {
      if (need_at_round_start == need)
        break;
      need_at_round_start = need;
    }
    for (const cgroup::CpuInfo& c : groups[i]) {
      if (!used.contains(c.cpu_id)) {
        picked.push_back(c.cpu_id);
        used.insert(c.cpu_id);
        --need;
        break;
      }
    }
    i = (i + 1) % n;
  }
  return picked;
}

std::vector<int> nextBECPUSet(const cgroup::CpuTopology& topology, const CPUSetSuppressInput& in) {
  std::map<int, apis::QoSClass> pool_of_cpu;
  for (const PodCPUSet& pod : in.pod_cpusets) {
    for (int cpu : pod.cpus)
      pool_of_cpu[cpu] = pod.qos;
  }
  const std::set<int> excluded(in.excluded_cpus.begin(), in.excluded_cpus.end());
  std::vector<cgroup::CpuInfo> lsr_pool;
  std::vector<cgroup::CpuInfo> ls_pool;
  for (const cgroup::CpuInfo& c : topology.cpus) {
    if (excluded.contains(c.cpu_id))
      continue;
    auto it = pool_of_cpu.find(c.cpu_id);
    const apis::QoSClass pool = it == pool_of_cpu.end() ? apis::QoSClass::kNone : it->second;
    if (pool == apis::QoSClass::kLSR)
      lsr_pool.push_back(c);
    else if (pool != apis::QoSClass::kLSE)
      ls_pool.push_back(c);
  }
  std::vector<int> cpus;
  const std::size_t available = lsr_pool.size() + ls_pool.size();
  if (available == 0)
    return cpus;

  const int target =
      targetBECPUCount(in.suppress_milli, in.current_be_cpus.size(), topology.cpus.size());
  const auto from_lsr = static_cast<int>(static_cast<std::int64_t>(target) *
                                         static_cast<std::int64_t>(lsr_pool.size()) /
                                         static_cast<std::int64_t>(available));
  if (from_lsr > 0)
    cpus = selectSpreadCPUs(from_lsr, lsr_pool);
  if (target - from_lsr > 0) {
    const std::vector<int> from_ls = selectSpreadCPUs(target - from_lsr, ls_pool);
    cpus.insert(cpus.end(), from_ls.begin(), from_ls.end());
  }
  std::sort(cpus.begin(), cpus.end());
  return cpus;
}

}  // namespace koord::roles::koordlet::qosmanager
