// takeCpus: the candidate orders (free whole cores per NUMA node and per socket, free CPUs per
// NUMA node and per socket, every free CPU) and the phases that try them in turn.
#include "plugins/nodenumaresource/cpu_accumulator.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

namespace koord::roles::scheduler::nodenumaresource {

namespace {

using CpuList = std::vector<int>;

// One NUMA node's or socket's candidates with the keys they are ordered by.
struct Group {
  int id = 0;            // node id or socket index
  int free_score = 0;    // the group's free CPUs (the first key)
  int socket_score = 0;  // its socket's free CPUs (the second key, NUMA nodes only)
  CpuList cpus;
};

class Accumulator {
 public:
  Accumulator(const NodeCpuTopology& topology, int max_ref_count, const CpuSet& available,
              AllocatedCpus allocated, const TakeCpusRequest& request)
      : t_(topology),
        max_ref_count_(max_ref_count),
        allocated_(allocated),
        policy_(request.exclusive_policy),
        packs_(packs(request.numa_strategy)),
        needed_(request.num_cpus),
        free_(available & topology.cpus()),
        free_count_(free_.size()),
        exclusive_cores_(static_cast<std::size_t>(topology.numCores()), 0) {
    for (std::size_t id = 0; id < allocated.size(); ++id) {
      const CpuExclusivePolicy p = allocated[id].exclusive;
      if (p == CpuExclusivePolicy::kNone)
        continue;
      const CpuDetail* d = t_.find(static_cast<int>(id));
      if (d == nullptr)
        continue;
      mark(*d, p);
    }
  }

  bool satisfied() const { return needed_ < 1; }
  bool failed() const { return needed_ > free_count_; }
  bool needs(int n) const { return needed_ >= n; }
  int needed() const { return needed_; }
  const CpuSet& result() const { return result_; }

  void take(std::span<const int> cpus) {
    for (int c : cpus) {
      result_.add(c);
      free_.remove(c);
      --free_count_;
      if (policy_ != CpuExclusivePolicy::kNone)
        mark(*t_.find(c), policy_);
    }
    needed_ -= static_cast<int>(cpus.size());
  }

  // Whole free cores grouped by NUMA node; with `filter_exclusive` a NUMANodeLevel pod skips
  // NUMA nodes that NUMANodeLevel pods hold.
  std::vector<Group> freeCoresInNode(bool filter_exclusive) const {
    std::vector<int> socket_free(static_cast<std::size_t>(t_.numSockets()), 0);
    std::vector<Group> groups;  // cpus holds the node's whole free cores until expanded
    CpuList core_cpus;
    for (int core = 0; core < t_.numCores(); ++core) {
      freeOfCore(core, core_cpus,
                 [&](int) { return filter_exclusive && nodeExcluded(t_.nodeOfCore(core)); });
      socket_free[static_cast<std::size_t>(t_.socketOfCore(core))] +=
          static_cast<int>(core_cpus.size());
      if (static_cast<int>(core_cpus.size()) == t_.cpusPerCore() && !core_cpus.empty())
        groupFor(groups, t_.nodeOfCore(core)).cpus.push_back(core);
    }
    for (Group& g : groups) {
      std::vector<int> cores = std::move(g.cpus);
      sortCores(cores);
      g.cpus.clear();
      for (int core : cores) {
        freeOfCore(core, core_cpus, [](int) { return false; });
        g.cpus.insert(g.cpus.end(), core_cpus.begin(), core_cpus.end());
      }
      g.free_score = static_cast<int>(g.cpus.size());
      g.socket_score = socket_free[static_cast<std::size_t>(t_.socketOfNode(g.id))];
    }
    orderGroups(groups, /*by_node=*/true);
    return groups;
  }

  // Whole free cores grouped by socket.
  std::vector<Group> freeCoresInSocket() const {
    std::vector<Group> groups;
    std::vector<std::vector<int>> cores_by_socket(static_cast<std::size_t>(t_.numSockets()));
    CpuList core_cpus;
    for (int core = 0; core < t_.numCores(); ++core) {
      freeOfCore(core, core_cpus, [](int) { return false; });
      if (static_cast<int>(core_cpus.size()) != t_.cpusPerCore() || core_cpus.empty())
        continue;
      cores_by_socket[static_cast<std::size_t>(t_.socketOfCore(core))].push_back(core);
    }
    for (int s = 0; s < t_.numSockets(); ++s) {
      std::vector<int>& cores = cores_by_socket[static_cast<std::size_t>(s)];
      if (cores.empty())
        continue;
      sortCores(cores);
      Group g;
      g.id = s;
      for (int core : cores) {
        freeOfCore(core, core_cpus, [](int) { return false; });
        g.cpus.insert(g.cpus.end(), core_cpus.begin(), core_cpus.end());
      }
      g.free_score = static_cast<int>(g.cpus.size());
      groups.push_back(std::move(g));
    }
    orderGroups(groups, /*by_node=*/false);
    return groups;
  }

  // Free CPUs grouped by NUMA node, least shared first; with `filter_exclusive` the excluded
  // cores and nodes are left out and only the first CPU of each core is kept.
  std::vector<Group> freeCpusInNode(bool filter_exclusive) const {
    std::vector<int> socket_free(static_cast<std::size_t>(t_.numSockets()), 0);
    std::vector<Group> groups;
    free_.forEach([&](int c) {
      const CpuDetail& d = *t_.find(c);
      if (filter_exclusive && (coreExcluded(d.core) || nodeExcluded(d.node_id)))
        return;
      groupFor(groups, d.node_id).cpus.push_back(c);
      ++socket_free[static_cast<std::size_t>(d.socket)];
    });
    for (Group& g : groups) {
      g.free_score = static_cast<int>(g.cpus.size());
      g.socket_score = socket_free[static_cast<std::size_t>(t_.socketOfNode(g.id))];
      sortByRefCount(g.cpus);
      if (filter_exclusive)
        onePerCore(g.cpus);
    }
    orderGroups(groups, /*by_node=*/true);
    return groups;
  }

  // Free CPUs grouped by socket; with `filter_exclusive` PCPULevel-excluded cores are left out
  // and only the first CPU of each core is kept.
  std::vector<Group> freeCpusInSocket(bool filter_exclusive) const {
    std::vector<Group> groups(static_cast<std::size_t>(t_.numSockets()));
    free_.forEach([&](int c) {
      const CpuDetail& d = *t_.find(c);
      if (filter_exclusive && coreExcluded(d.core))
        return;
      groups[static_cast<std::size_t>(d.socket)].cpus.push_back(c);
    });
    std::vector<Group> out;
    for (int s = 0; s < t_.numSockets(); ++s) {
      Group& g = groups[static_cast<std::size_t>(s)];
      if (g.cpus.empty())
        continue;
      g.id = s;
      sortByRefCount(g.cpus);
      if (filter_exclusive)
        onePerCore(g.cpus);
      g.free_score = static_cast<int>(g.cpus.size());
      out.push_back(std::move(g));
    }
    orderGroups(out, /*by_node=*/false);
    return out;
  }

  // Every free CPU, core by core: cores on sockets already holding the result first, then by
  // the strategy over socket and NUMA node free CPUs, then the fullest-used cores.
  CpuList freeCpus(bool filter_exclusive) const {
    struct Core {
      int core;
      int socket;
      int node;
      int free;
      int socket_free = 0;
      int node_free = 0;
      int colo = 0;
      std::uint64_t refs = 0;
    };
    std::vector<Core> cores;
    std::vector<int> socket_free(static_cast<std::size_t>(t_.numSockets()), 0);
    std::vector<int> node_free(static_cast<std::size_t>(kMaxNumaNodeId) + 1, 0);
    CpuList core_cpus;
    for (int core = 0; core < t_.numCores(); ++core) {
      freeOfCore(core, core_cpus, [&](int) {
        return filter_exclusive && (coreExcluded(core) || nodeExcluded(t_.nodeOfCore(core)));
      });
      if (core_cpus.empty())
        continue;
      const int n = static_cast<int>(core_cpus.size());
      socket_free[static_cast<std::size_t>(t_.socketOfCore(core))] += n;
      node_free[static_cast<std::size_t>(t_.nodeOfCore(core))] += n;
      cores.push_back(
          Core{core, t_.socketOfCore(core), t_.nodeOfCore(core), n, 0, 0, 0, coreRefs(core_cpus)});
    }
    for (Core& c : cores) {
      c.socket_free = socket_free[static_cast<std::size_t>(c.socket)];
      c.node_free = node_free[static_cast<std::size_t>(c.node)];
      c.colo = t_.cpusInSocketIndex(c.socket).intersectionSize(result_);
    }
    const bool shared = max_ref_count_ > 1;
    std::sort(cores.begin(), cores.end(), [&](const Core& a, const Core& b) {
      if (a.colo != b.colo)
        return a.colo > b.colo;
      if (a.socket_free != b.socket_free)
        return packs_ ? a.socket_free < b.socket_free : a.socket_free > b.socket_free;
      if (a.node_free != b.node_free)
        return packs_ ? a.node_free < b.node_free : a.node_free > b.node_free;
      if (a.free != b.free)
        return a.free < b.free;
      if (a.socket != b.socket)
        return a.socket < b.socket;
      if (shared && a.refs != b.refs)
        return a.refs < b.refs;
      return a.core < b.core;
    });
    CpuList out;
    out.reserve(static_cast<std::size_t>(free_count_));
    for (const Core& c : cores) {
      freeOfCore(c.core, core_cpus, [&](int) { return false; });
      sortByRefCount(core_cpus);
      out.insert(out.end(), core_cpus.begin(), core_cpus.end());
    }
    return out;
  }

  // Round robin over cores: the first CPU of every core, then the second, and so on.
  CpuList spread(CpuList cpus) const {
    if (static_cast<int>(cpus.size()) <= t_.cpusPerCore())
      return cpus;
    CpuList out;
    out.reserve(cpus.size());
    std::vector<char> seen(static_cast<std::size_t>(t_.numCores()), 0);
    while (!cpus.empty()) {
      std::fill(seen.begin(), seen.end(), 0);
      CpuList rest;
      for (int c : cpus) {
        char& s = seen[static_cast<std::size_t>(t_.find(c)->core)];
        if (s != 0) {
          rest.push_back(c);
          continue;
        }
        s = 1;
        out.push_back(c);
      }
      cpus = std::move(rest);
    }
    return out;
  }

 private:
  void mark(const CpuDetail& d, CpuExclusivePolicy p) {
    if (p == CpuExclusivePolicy::kPCPULevel)
      exclusive_cores_[static_cast<std::size_t>(d.core)] = 1;
    else if (p == CpuExclusivePolicy::kNUMANodeLevel)
      exclusive_nodes_ |= numaBit(d.node_id);
  }
  bool coreExcluded(int core) const {
    return policy_ == CpuExclusivePolicy::kPCPULevel &&
           exclusive_cores_[static_cast<std::size_t>(core)] != 0;
  }
  bool nodeExcluded(int node_id) const {
    return policy_ == CpuExclusivePolicy::kNUMANodeLevel &&
           (exclusive_nodes_ & numaBit(node_id)) != 0;
  }

  std::uint32_t refs(int cpu) const {
    const auto i = static_cast<std::size_t>(cpu);
    return i < allocated_.size() ? allocated_[i].ref_count : 0;
  }
  std::uint64_t coreRefs(const CpuList& cpus) const {
    std::uint64_t sum = 0;
    for (int c : cpus)
      sum += refs(c);
    return sum;
  }

  // The free CPUs of a core, ascending, unless skip(cpu).
  template <typename Skip>
  void freeOfCore(int core, CpuList& out, Skip&& skip) const {
    out.clear();
    for (int c : t_.cpusOfCore(core)) {
      if (free_.contains(c) && !skip(c))
        out.push_back(c);
    }
  }

  // Least shared first (CPU id among equals); a no-op unless CPUs may be shared.
  void sortByRefCount(CpuList& cpus) const {
    if (max_ref_count_ <= 1)
      return;
    std::stable_sort(cpus.begin(), cpus.end(), [&](int a, int b) { return refs(a) < refs(b); });
  }

  void onePerCore(CpuList& cpus) const {
    std::vector<char> seen(static_cast<std::size_t>(t_.numCores()), 0);
    std::erase_if(cpus, [&](int c) {
      char& s = seen[static_cast<std::size_t>(t_.find(c)->core)];
      if (s != 0)
        return true;
      s = 1;
      return false;
    });
  }

  // Whole free cores only, so every core has the same count: least shared, then core order.
  void sortCores(std::vector<int>& cores) const {
    if (max_ref_count_ <= 1)
      return;  // already in core order
    CpuList cpus;
    std::vector<std::pair<std::uint64_t, int>> keyed;
    keyed.reserve(cores.size());
    for (int core : cores) {
      freeOfCore(core, cpus, [](int) { return false; });
      keyed.emplace_back(coreRefs(cpus), core);
    }
    std::sort(keyed.begin(), keyed.end());
    for (std::size_t i = 0; i < cores.size(); ++i)
      cores[i] = keyed[i].second;
  }

  static Group& groupFor(std::vector<Group>& groups, int id) {
    for (Group& g : groups) {
      if (g.id == id)
        return g;
    }
    groups.push_back(Group{id, 0, 0, {}});
    return groups.back();
  }

  // By free CPUs (fewest first when packing), for NUMA nodes then by their socket's free CPUs
  // the same way, then by id.
  void orderGroups(std::vector<Group>& groups, bool by_node) const {
    std::erase_if(groups, [](const Group& g) { return g.cpus.empty(); });
    std::sort(groups.begin(), groups.end(), [&](const Group& a, const Group& b) {
      if (a.free_score != b.free_score)
        return packs_ ? a.free_score < b.free_score : a.free_score > b.free_score;
      if (by_node && a.socket_score != b.socket_score)
        return packs_ ? a.socket_score < b.socket_score : a.socket_score > b.socket_score;
      return a.id < b.id;
    });
  }

  const NodeCpuTopology& t_;
  int max_ref_count_;
  AllocatedCpus allocated_;
  CpuExclusivePolicy policy_;
  bool packs_;
  int needed_;
  CpuSet free_;
  int free_count_;
  std::vector<char> exclusive_cores_;
  NumaMask exclusive_nodes_ = 0;
  CpuSet result_;
};

// How many physical cores the topology's CPUs among `cpus` sit on, without the heap.
int distinctCores(const NodeCpuTopology& t, const CpuSet& cpus) {
  std::array<std::uint64_t, (cgroup::kMaxCpuId + 1) / 64> marks;
  const auto words = static_cast<std::size_t>((t.numCores() + 63) / 64);
  std::fill_n(marks.begin(), words, 0);
  int n = 0;
  cpus.forEach([&](int c) {
    const int core = t.coreOf(c);
    if (core < 0)
      return;
    std::uint64_t& w = marks[static_cast<std::size_t>(core) / 64];
    const std::uint64_t bit = std::uint64_t{1} << (core % 64);
    n += (w & bit) == 0 ? 1 : 0;
    w |= bit;
  });
  return n;
}

std::span<const int> firstN(const CpuList& cpus, int n) {
  return std::span<const int>(cpus).first(static_cast<std::size_t>(n));
}

}  // namespace

Expected<CpuSet> takeCpus(const NodeCpuTopology& topology, int max_ref_count,
                          const CpuSet& available, AllocatedCpus allocated,
                          const TakeCpusRequest& request) {
  Accumulator acc(topology, max_ref_count, available, allocated, request);
  if (acc.satisfied())
    return acc.result();
  if (acc.failed())
    return invalidArgument(std::string(kErrNotEnoughCpus));

  const bool full_pcpus = request.bind_policy == CpuBindPolicy::kFullPCPUs;
  const int per_core = topology.cpusPerCore();
  if (full_pcpus || per_core == 1) {
    // Whole cores of one NUMA node, then of one socket, in the strategy's order.
    if (acc.needed() <= topology.cpusPerNode()) {
      for (bool filter_exclusive : {true, false}) {
        for (const Group& g : acc.freeCoresInNode(filter_exclusive)) {
          if (static_cast<int>(g.cpus.size()) >= acc.needed()) {
            acc.take(firstN(g.cpus, acc.needed()));
            return acc.result();
          }
        }
      }
    }
    if (acc.needed() <= topology.cpusPerSocket()) {
      for (const Group& g : acc.freeCoresInSocket()) {
        if (static_cast<int>(g.cpus.size()) >= acc.needed()) {
          acc.take(firstN(g.cpus, acc.needed()));
          return acc.result();
        }
      }
    }
    // Larger than a socket, or no socket has room: whole sockets' free cores from the freest
    // socket down, then single cores from the sockets with the fewest.
    std::vector<Group> sockets = acc.freeCoresInSocket();
    std::stable_sort(sockets.begin(), sockets.end(),
                     [](const Group& a, const Group& b) { return a.cpus.size() > b.cpus.size(); });
    std::vector<Group> rest;
    for (Group& g : sockets) {
      if (!acc.needs(static_cast<int>(g.cpus.size()))) {
        rest.push_back(std::move(g));
        continue;
      }
      acc.take(g.cpus);
      if (acc.satisfied())
        return acc.result();
    }
    if (per_core > 0 && acc.needs(per_core)) {
      std::stable_sort(rest.begin(), rest.end(), [](const Group& a, const Group& b) {
        return a.cpus.size() < b.cpus.size();
      });
      // Never past the request: a remainder smaller than a core is left to the last phase.
      for (const Group& g : rest) {
        for (std::size_t i = 0; i + static_cast<std::size_t>(per_core) <= g.cpus.size();
             i += static_cast<std::size_t>(per_core)) {
          if (!acc.needs(per_core))
            break;
          acc.take(std::span<const int>(g.cpus).subspan(i, static_cast<std::size_t>(per_core)));
          if (acc.satisfied())
            return acc.result();
        }
      }
    }
  }

  if (!full_pcpus) {
    // One NUMA node, then one socket, that can hold the whole request, even where spreading
    // over physical cores cannot be kept.
    if (acc.needed() <= topology.cpusPerNode()) {
      for (bool filter_exclusive : {true, false}) {
        for (const Group& g : acc.freeCpusInNode(filter_exclusive)) {
          if (static_cast<int>(g.cpus.size()) >= acc.needed()) {
            acc.take(firstN(acc.spread(g.cpus), acc.needed()));
            return acc.result();
          }
        }
      }
    }
    if (acc.needed() <= topology.cpusPerSocket()) {
      for (bool filter_exclusive : {true, false}) {
        for (const Group& g : acc.freeCpusInSocket(filter_exclusive)) {
          if (static_cast<int>(g.cpus.size()) >= acc.needed()) {
            acc.take(firstN(acc.spread(g.cpus), acc.needed()));
            return acc.result();
          }
        }
      }
    }
  }

  // Whatever is left, next to what was taken.
  for (bool filter_exclusive : {true, false}) {
    for (int c : acc.spread(acc.freeCpus(filter_exclusive))) {
      if (acc.needs(1))
        acc.take(std::span<const int>(&c, 1));
      if (acc.satisfied())
        return acc.result();
    }
  }
  return invalidArgument(std::string(kErrFailedToAllocateCpus));
}

Expected<CpuSet> takePreferredCpus(const NodeCpuTopology& topology, int max_ref_count,
                                   const CpuSet& available, const CpuSet& preferred,
                                   AllocatedCpus allocated, const TakeCpusRequest& request) {
  CpuSet result;
  CpuSet rest = available;
  TakeCpusRequest remaining = request;
  const CpuSet usable = available & preferred;
  if (!usable.empty()) {
    TakeCpusRequest first = request;
    first.num_cpus = std::min(request.num_cpus, usable.size());
    auto taken = takeCpus(topology, max_ref_count, usable, allocated, first);
    if (!taken)
      return taken;
    result = std::move(*taken);
    remaining.num_cpus -= result.size();
    rest.subtract(usable);
  }
  if (remaining.num_cpus > 0) {
    auto taken = takeCpus(topology, max_ref_count, rest, allocated, remaining);
    if (!taken)
      return taken;
    result.unionWith(*taken);
  }
  return result;
}

CpuSet cpusUsableByRequiredPolicy(const NodeCpuTopology& topology, const CpuSet& available,
                                  CpuBindPolicy policy) {
  if (policy != CpuBindPolicy::kFullPCPUs && policy != CpuBindPolicy::kSpreadByPCPUs)
    return available;
  CpuSet out;
  const int per_core = topology.cpusPerCore();
  for (int core = 0; core < topology.numCores(); ++core) {
    const std::span<const int> cpus = topology.cpusOfCore(core);
    if (policy == CpuBindPolicy::kFullPCPUs) {
      int free = 0;
      for (int c : cpus)
        free += available.contains(c) ? 1 : 0;
      if (free != per_core)
        continue;
      for (int c : cpus) {
        if (available.contains(c))
          out.add(c);
      }
    } else {
      for (int c : cpus) {
        if (available.contains(c)) {
          out.add(c);
          break;
        }
      }
    }
  }
  return out;
}

int countCpusUsableByRequiredPolicy(const NodeCpuTopology& topology, const CpuSet& available,
                                    CpuBindPolicy policy) {
  if (policy != CpuBindPolicy::kFullPCPUs && policy != CpuBindPolicy::kSpreadByPCPUs)
    return available.intersectionSize(topology.cpus());
  if (policy == CpuBindPolicy::kSpreadByPCPUs)
    return distinctCores(topology, available);
  if (topology.uniformCores()) {
    // A core is whole unless one of its CPUs is unavailable: count the cores those touch.
    const CpuSet unavailable = topology.cpus() - available;
    return (topology.numCores() - distinctCores(topology, unavailable)) * topology.cpusPerCore();
  }
  const int per_core = topology.cpusPerCore();
  int count = 0;
  for (int core = 0; core < topology.numCores(); ++core) {
    int free = 0;
    for (int c : topology.cpusOfCore(core))
      free += available.contains(c) ? 1 : 0;
    count += free == per_core ? free : 0;
  }
  return count;
}

bool satisfiesRequiredPolicy(const NodeCpuTopology& topology, const CpuSet& cpus,
                             CpuBindPolicy policy) {
  if (policy != CpuBindPolicy::kFullPCPUs && policy != CpuBindPolicy::kSpreadByPCPUs)
    return true;
  std::vector<char> seen(static_cast<std::size_t>(topology.numCores()), 0);
  int cores = 0;
  cpus.forEach([&](int c) {
    const CpuDetail* d = topology.find(c);
    if (d == nullptr)
      return;
    char& s = seen[static_cast<std::size_t>(d->core)];
    cores += s == 0 ? 1 : 0;
    s = 1;
  });
  if (policy == CpuBindPolicy::kFullPCPUs)
    return cores * topology.cpusPerCore() == cpus.size();
  return cores == cpus.size();
}

}  // namespace koord::roles::scheduler::nodenumaresource
