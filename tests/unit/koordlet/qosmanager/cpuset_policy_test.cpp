#include "qosmanager/cpusuppress/cpuset_policy.h"

#include <algorithm>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

using namespace koord::roles::koordlet::qosmanager;
using koord::apis::QoSClass;
using koord::cgroup::CpuInfo;
using koord::cgroup::CpuTopology;
using koord::cgroup::formatCpuList;

namespace {

CpuInfo cpu(int id, int core, int socket, int node) {
  return CpuInfo{.cpu_id = id, .core_id = core, .socket_id = socket, .node_id = node};
}

CpuTopology topology(std::vector<CpuInfo> cpus) {
  std::sort(cpus.begin(), cpus.end(),
            [](const CpuInfo& a, const CpuInfo& b) { return a.cpu_id < b.cpu_id; });
  return CpuTopology{std::move(cpus)};
}

// Koordinator's 8-CPU test node: two NUMA nodes on two sockets, sibling pairs (0,1) (2,3) on
// node 0 and (4,5) (6,7) on node 1.
CpuTopology koordNode8() {
  return topology({cpu(0, 0, 0, 0), cpu(1, 0, 0, 0), cpu(2, 1, 0, 0), cpu(3, 1, 0, 0),
                   cpu(4, 2, 1, 1), cpu(5, 2, 1, 1), cpu(6, 3, 1, 1), cpu(7, 3, 1, 1)});
}

// The pods Koordinator's tests run with: an LSR pod pinned to 0,6 and an LSE pod to 7.
std::vector<PodCPUSet> koordPods() {
  return {PodCPUSet{QoSClass::kLSR, {0, 6}}, PodCPUSet{QoSClass::kLSE, {7}}};
}

std::string next(const CpuTopology& topo, std::int64_t suppress_milli, std::vector<int> current,
                 std::vector<int> excluded, std::vector<PodCPUSet> pods) {
  CPUSetSuppressInput in;
  in.suppress_milli = suppress_milli;
  in.current_be_cpus = std::move(current);
  in.excluded_cpus = std::move(excluded);
  in.pod_cpusets = std::move(pods);
  return formatCpuList(nextBECPUSet(topo, in));
}

// 16 CPUs, 4 sockets, 2 NUMA nodes, all hyper-threaded (Koordinator's larger test node).
std::vector<CpuInfo> koordNode16() {
  std::vector<CpuInfo> cpus;
  for (int id = 0; id < 16; ++id)
    cpus.push_back(cpu(id, id / 2, id / 4, id / 8));
  return cpus;
}

}  // namespace

TEST_CASE("target CPU count: ceil of the suppress cores, at least 2") {
  CHECK(targetBECPUCount(2500, 8, 16) == 3);
  CHECK(targetBECPUCount(3000, 8, 16) == 3);
  CHECK(targetBECPUCount(3001, 8, 16) == 4);
  CHECK(targetBECPUCount(1000, 8, 16) == 2);
  CHECK(targetBECPUCount(0, 8, 16) == 2);
  CHECK(targetBECPUCount(-5000, 8, 16) == 2);
}

TEST_CASE("target CPU count: growth per round is capped, shrinking is not") {
  // ceil(16 x 10%) = 2 more than the current 2.
  CHECK(targetBECPUCount(10000, 2, 16) == 4);
  // ceil(8 x 10%) = 1; ceil(10 x 10%) = 1; ceil(11 x 10%) = 2.
  CHECK(targetBECPUCount(10000, 2, 8) == 3);
  CHECK(targetBECPUCount(10000, 2, 10) == 3);
  CHECK(targetBECPUCount(10000, 2, 11) == 4);
  // Exactly at the cap is allowed.
  CHECK(targetBECPUCount(4000, 2, 16) == 4);
  // From 12 down to 3 at once.
  CHECK(targetBECPUCount(3000, 12, 16) == 3);
  // The cap applies after the minimum, as in Koordinator: from an empty cpuset on a 4-CPU node
  // only ceil(0.4) = 1 CPU.
  CHECK(targetBECPUCount(0, 0, 4) == 1);
}

TEST_CASE("spread selection matches Koordinator's tables") {
  SECTION("not enough candidates gives nothing") {
    CHECK(selectSpreadCPUs(0, {}).empty());
    const std::vector<CpuInfo> two{cpu(0, 0, 0, 0), cpu(1, 0, 0, 0)};
    CHECK(selectSpreadCPUs(3, two).empty());
  }
  SECTION("no siblings in a group: singles alternate between NUMA nodes") {
    const std::vector<CpuInfo> c{cpu(0, 0, 0, 0), cpu(1, 1, 0, 0), cpu(2, 2, 1, 1),
                                 cpu(3, 3, 1, 1), cpu(4, 0, 0, 0), cpu(5, 1, 0, 0),
                                 cpu(6, 2, 1, 1), cpu(7, 3, 1, 1)};
    CHECK(selectSpreadCPUs(3, c) == std::vector<int>{0, 4, 2});
  }
  SECTION("a sibling pair, then a single on the other node") {
    const std::vector<CpuInfo> c{cpu(0, 0, 0, 0), cpu(1, 0, 0, 0), cpu(2, 1, 0, 0),
                                 cpu(3, 1, 0, 0), cpu(4, 2, 1, 1), cpu(5, 2, 1, 1),
                                 cpu(6, 3, 1, 1), cpu(7, 3, 1, 1)};
    CHECK(selectSpreadCPUs(3, c) == std::vector<int>{0, 1, 4});
  }
  SECTION("groups are per NUMA node and socket") {
    CHECK(selectSpreadCPUs(5, koordNode16()) == std::vector<int>{0, 1, 4, 5, 8});
  }
  SECTION("the input order does not matter") {
    std::vector<CpuInfo> c = koordNode16();
    std::reverse(c.begin(), c.end());
    std::rotate(c.begin(), c.begin() + 5, c.end());
    CHECK(selectSpreadCPUs(5, c) == std::vector<int>{0, 1, 4, 5, 8});
  }
}

TEST_CASE("spread selection: pairs round-robin over NUMA nodes, larger nodes first") {
  // Node 1 has three cores, node 0 two: node 1 comes first.
  const std::vector<CpuInfo> c{cpu(0, 0, 0, 0), cpu(1, 0, 0, 0), cpu(2, 1, 0, 0), cpu(3, 1, 0, 0),
                               cpu(4, 0, 1, 1), cpu(5, 0, 1, 1), cpu(6, 1, 1, 1), cpu(7, 1, 1, 1),
                               cpu(8, 2, 1, 1), cpu(9, 2, 1, 1)};
  CHECK(selectSpreadCPUs(4, c) == std::vector<int>{4, 5, 0, 1});
  CHECK(selectSpreadCPUs(6, c) == std::vector<int>{4, 5, 0, 1, 6, 7});
  // Odd counts end with a single from the next node in turn.
  CHECK(selectSpreadCPUs(5, c) == std::vector<int>{4, 5, 0, 1, 6});
  // Everything: all pairs, no singles left.
  CHECK(selectSpreadCPUs(10, c).size() == 10);
}

TEST_CASE("spread selection: leftover singles once the pairs run out") {
  // Node 0: a pair (0,1) and lone 2; node 1: lone 3.
  // The single pass starts at the group the pair pass stopped at, here node 0 again.
  const std::vector<CpuInfo> c{cpu(0, 0, 0, 0), cpu(1, 0, 0, 0), cpu(2, 1, 0, 0), cpu(3, 5, 1, 1)};
  CHECK(selectSpreadCPUs(4, c) == std::vector<int>{0, 1, 2, 3});
  CHECK(selectSpreadCPUs(3, c) == std::vector<int>{0, 1, 3});
}

TEST_CASE("next BE cpuset: Koordinator's adjustByCPUSet cases") {
  const CpuTopology topo = koordNode8();
  // LSR CPUs 0,6 hold 2/7 of the pool: floor(3 x 2 / 7) = 0 come from them; the LS pool
  // {1,2,3,4,5} gives the pair (2,3) and then 4 from the other node.
  CHECK(next(topo, 3000, {7, 6, 3, 2}, {}, koordPods()) == "2-4");
  SECTION("scaling up within the step gives the same") {
    CHECK(next(topo, 3000, {7, 6}, {}, koordPods()) == "2-4");
  }
  SECTION("reserved CPU 3: one CPU from LSR, a pair from LS") {
    CHECK(next(topo, 3000, {7, 6, 3, 2}, {3}, koordPods()) == "0,4-5");
  }
  SECTION("reserved 1-6: the LSR pool cannot give its share, nothing changes") {
    CHECK(next(topo, 3000, {7, 6, 3, 2}, {1, 2, 3, 4, 5, 6}, koordPods()).empty());
  }
  SECTION("reserved 0-1,5-6: exactly enough") {
    CHECK(next(topo, 3000, {7, 6, 3, 2}, {0, 1, 5, 6}, koordPods()) == "2-4");
  }
}

TEST_CASE("next BE cpuset: never fewer than 2 CPUs, unless growing from fewer") {
  const CpuTopology topo = koordNode8();
  CHECK(next(topo, -4000, {0, 1, 2, 3, 4, 5, 6, 7}, {}, {}) == "0-1");
  CHECK(next(topo, 0, {0, 1, 2, 3}, {}, {}) == "0-1");
  // From an empty cpuset the step cap (ceil(0.8) = 1) wins over the minimum.
  CHECK(next(topo, 200, {}, {}, {}) == "0");
}

TEST_CASE("next BE cpuset: growth limited to 10% of the node per round") {
  const CpuTopology topo = topology(koordNode16());
  // Wants 12, has 2; ceil(16 x 10%) = 2 more: 4 CPUs, a pair from each of the first two
  // (node, socket) groups.
  CHECK(next(topo, 12000, {0, 1}, {}, {}) == "0-1,4-5");
  // Shrinking from 16 to ceil(2.1) = 3 happens at once.
  CHECK(next(topo, 2100, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, {}, {}) ==
        "0-1,4");
}

TEST_CASE("next BE cpuset: exclusions and LSE pods are never given to BE") {
  const CpuTopology topo = topology(koordNode16());
  // Reserved 0-3, LSE on 8-9: the whole groups 4-7 and 12-15 come before the half one 10-11.
  const std::string got =
      next(topo, 4000, {0, 1, 2, 3}, {0, 1, 2, 3}, {PodCPUSet{QoSClass::kLSE, {8, 9}}});
  CHECK(got == "4-5,12-13");
  // All CPUs excluded or LSE: nothing to give, keep the current cpuset.
  CHECK(next(koordNode8(), 3000, {0, 1}, {0, 1, 2, 3, 4, 5}, {PodCPUSet{QoSClass::kLSE, {6, 7}}})
            .empty());
}

TEST_CASE("next BE cpuset: the later pod decides a shared CPU's pool") {
  const CpuTopology topo = koordNode8();
  // CPU 1 named LSE then LS stays available: both groups hold 4, node 0 goes first.
  CHECK(next(topo, 3000, {0, 1, 2}, {},
             {PodCPUSet{QoSClass::kLSE, {1}}, PodCPUSet{QoSClass::kLS, {1}}}) == "0-1,4");
  // Named LS then LSE it is excluded: node 1 is now the larger group, and 0 the single.
  CHECK(next(topo, 3000, {0, 1, 2}, {},
             {PodCPUSet{QoSClass::kLS, {1}}, PodCPUSet{QoSClass::kLSE, {1}}}) == "0,4-5");
}

TEST_CASE("next BE cpuset: LSR and LS pools share the target by size") {
  const CpuTopology topo = topology(koordNode16());
  // LSR owns 4 of 16 CPUs: floor(8 x 4 / 16) = 2 from LSR (a pair), 6 from LS.
  const std::vector<PodCPUSet> pods{PodCPUSet{QoSClass::kLSR, {12, 13, 14, 15}}};
  const std::string got = next(topo, 8000, {0, 1, 2, 3, 4, 5, 6, 7}, {}, pods);
  CHECK(got == "0-1,4-5,8-9,12-13");
}

TEST_CASE("next BE cpuset: a pool too small for its share is skipped, as in Koordinator") {
  // Pools: LSR {0}, LS {2}; target 3 -> 1 from LSR, 2 from LS which has only one.
  const CpuTopology topo = koordNode8();
  CHECK(next(topo, 3000, {0, 1, 2}, {1, 3, 4, 5, 6, 7}, {PodCPUSet{QoSClass::kLSR, {0}}}) == "0");
}

TEST_CASE("next BE cpuset is deterministic whatever the pod and exclusion order") {
  const CpuTopology topo = topology(koordNode16());
  const std::string a = next(topo, 6500, {0, 1, 2, 3, 4, 5}, {3, 1, 2},
                             {PodCPUSet{QoSClass::kLSR, {15, 14}}, PodCPUSet{QoSClass::kLSE, {9}}});
  const std::string b = next(topo, 6500, {5, 4, 3, 2, 1, 0}, {2, 3, 1},
                             {PodCPUSet{QoSClass::kLSE, {9}}, PodCPUSet{QoSClass::kLSR, {14, 15}}});
  CHECK(a == b);
  CHECK(!a.empty());
}
