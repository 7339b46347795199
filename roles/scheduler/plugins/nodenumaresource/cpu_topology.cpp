// NodeCpuTopology: checks the reported CPUs and indexes cores, NUMA nodes and sockets densely.
#include "plugins/nodenumaresource/cpu_topology.h"

#include <algorithm>
#include <map>
#include <utility>

#include <fmt/format.h>

namespace koord::roles::scheduler::nodenumaresource {

namespace {

const CpuSet& emptySet() {
  static const CpuSet empty;
  return empty;
}

}  // namespace

Expected<NodeCpuTopology> NodeCpuTopology::build(std::span<const cgroup::CpuInfo> cpus) {
  NodeCpuTopology t;
  if (cpus.empty())
    return t;
  std::vector<cgroup::CpuInfo> sorted(cpus.begin(), cpus.end());
  std::sort(sorted.begin(), sorted.end(),
            [](const cgroup::CpuInfo& a, const cgroup::CpuInfo& b) { return a.cpu_id < b.cpu_id; });
  for (std::size_t i = 0; i < sorted.size(); ++i) {
    const cgroup::CpuInfo& c = sorted[i];
    if (c.cpu_id < 0 || c.cpu_id > cgroup::kMaxCpuId)
      return invalidArgument(
          fmt::format("cpu {}: id outside [0, {}]", c.cpu_id, cgroup::kMaxCpuId));
    if (i > 0 && sorted[i - 1].cpu_id == c.cpu_id)
      return invalidArgument(fmt::format("cpu {}: listed twice", c.cpu_id));
    if (c.node_id < 0 || c.node_id > kMaxNumaNodeId)
      return invalidArgument(
          fmt::format("cpu {}: NUMA node {} outside [0, {}]", c.cpu_id, c.node_id, kMaxNumaNodeId));
    if (c.socket_id < 0 || c.socket_id > kMaxSocketId)
      return invalidArgument(
          fmt::format("cpu {}: socket {} outside [0, {}]", c.cpu_id, c.socket_id, kMaxSocketId));
    if (c.core_id < 0)
      return invalidArgument(fmt::format("cpu {}: negative core id {}", c.cpu_id, c.core_id));
  }

  // Sockets and NUMA nodes, ascending; a node belongs to one socket.
  std::map<int, int> node_socket;  // node id -> socket id
  for (const cgroup::CpuInfo& c : sorted) {
    auto [it, inserted] = node_socket.emplace(c.node_id, c.socket_id);
    if (!inserted && it->second != c.socket_id)
      return invalidArgument(fmt::format("cpu {}: NUMA node {} is on sockets {} and {}", c.cpu_id,
                                         c.node_id, it->second, c.socket_id));
    t.socket_ids_.push_back(c.socket_id);
  }
  std::sort(t.socket_ids_.begin(), t.socket_ids_.end());
  t.socket_ids_.erase(std::unique(t.socket_ids_.begin(), t.socket_ids_.end()), t.socket_ids_.end());
  auto socketIndex = [&](int socket_id) {
    return static_cast<int>(
        std::lower_bound(t.socket_ids_.begin(), t.socket_ids_.end(), socket_id) -
        t.socket_ids_.begin());
  };
  for (const auto& [node, socket] : node_socket) {
    t.node_ids_.push_back(node);
    t.node_socket_.push_back(socketIndex(socket));
    t.node_mask_ |= numaBit(node);
  }

  // Physical cores by (socket, core id); a core's CPUs share one NUMA node.
  std::map<std::pair<int, int>, int> core_node;  // (socket, core id) -> node id
  for (const cgroup::CpuInfo& c : sorted) {
    auto [it, inserted] = core_node.emplace(std::make_pair(c.socket_id, c.core_id), c.node_id);
    if (!inserted && it->second != c.node_id)
      return invalidArgument(fmt::format("cpu {}: core {} of socket {} is on NUMA nodes {} and {}",
                                         c.cpu_id, c.core_id, c.socket_id, it->second, c.node_id));
  }
  std::map<std::pair<int, int>, int> core_index;
  for (const auto& [key, node] : core_node) {
    const int index = static_cast<int>(core_index.size());
    core_index.emplace(key, index);
    t.core_node_.push_back(node);
    t.core_socket_.push_back(socketIndex(key.first));
  }

  t.index_by_id_.assign(static_cast<std::size_t>(sorted.back().cpu_id) + 1, -1);
  t.core_by_id_.assign(t.index_by_id_.size(), -1);
  t.node_cpus_.resize(t.node_ids_.size());
  t.socket_cpus_.resize(t.socket_ids_.size());
  std::vector<std::vector<int>> per_core(core_index.size());
  for (const cgroup::CpuInfo& c : sorted) {
    CpuDetail d;
    d.cpu_id = c.cpu_id;
    d.core_id = c.core_id;
    d.socket_id = c.socket_id;
    d.node_id = c.node_id;
    d.core = core_index.at({c.socket_id, c.core_id});
    d.socket = socketIndex(c.socket_id);
    t.index_by_id_[static_cast<std::size_t>(c.cpu_id)] =
        static_cast<std::int16_t>(t.details_.size());
    t.core_by_id_[static_cast<std::size_t>(c.cpu_id)] = static_cast<std::int16_t>(d.core);
    t.details_.push_back(d);
    t.all_.add(c.cpu_id);
    const auto node_pos = static_cast<std::size_t>(
        std::lower_bound(t.node_ids_.begin(), t.node_ids_.end(), c.node_id) - t.node_ids_.begin());
    t.node_cpus_[node_pos].add(c.cpu_id);
    t.socket_cpus_[static_cast<std::size_t>(d.socket)].add(c.cpu_id);
    per_core[static_cast<std::size_t>(d.core)].push_back(c.cpu_id);
  }
  t.core_offsets_.reserve(per_core.size() + 1);
  t.core_offsets_.push_back(0);
  for (const auto& ids : per_core) {
    t.core_cpus_.insert(t.core_cpus_.end(), ids.begin(), ids.end());
    t.core_offsets_.push_back(static_cast<int>(t.core_cpus_.size()));
  }
  t.uniform_cores_ = std::all_of(
      per_core.begin(), per_core.end(),
      [&](const std::vector<int>& ids) { return static_cast<int>(ids.size()) == t.cpusPerCore(); });
  return t;
}

int NodeCpuTopology::socketOfNode(int node_id) const {
  auto it = std::lower_bound(node_ids_.begin(), node_ids_.end(), node_id);
  if (it == node_ids_.end() || *it != node_id)
    return -1;
  return node_socket_[static_cast<std::size_t>(it - node_ids_.begin())];
}

const CpuSet& NodeCpuTopology::cpusInNode(int node_id) const {
  auto it = std::lower_bound(node_ids_.begin(), node_ids_.end(), node_id);
  if (it == node_ids_.end() || *it != node_id)
    return emptySet();
  return node_cpus_[static_cast<std::size_t>(it - node_ids_.begin())];
}

CpuSet NodeCpuTopology::cpusInNodes(NumaMask nodes) const {
  CpuSet out;
  for (std::size_t i = 0; i < node_ids_.size(); ++i) {
    if ((nodes & numaBit(node_ids_[i])) != 0)
      out.unionWith(node_cpus_[i]);
  }
  return out;
}

const CpuSet& NodeCpuTopology::cpusInSocketIndex(int socket) const {
  if (socket < 0 || static_cast<std::size_t>(socket) >= socket_cpus_.size())
    return emptySet();
  return socket_cpus_[static_cast<std::size_t>(socket)];
}

}  // namespace koord::roles::scheduler::nodenumaresource
