// NodeAllocation: adding and releasing pods, shared CPUs, available CPUs with reserved and
// preferred CPUs, NUMA node usage and the free NUMA resources (node_allocation_test.go's cases).
#include <string>
#include <vector>

#include "fixture.h"
#include "plugins/nodenumaresource/node_allocation.h"

using nnr::CpuExclusivePolicy;
using nnr::NumaNodeStatus;
using nnr::NumaResource;

namespace {

nnr::PodAllocation pod(std::string uid, std::string_view cpu_list,
                       CpuExclusivePolicy exclusive = CpuExclusivePolicy::kPCPULevel) {
  nnr::PodAllocation a;
  a.uid = std::move(uid);
  a.cpus = cpus(cpu_list);
  a.exclusive = exclusive;
  return a;
}

nnr::NumaResources res(std::int64_t milli_cpu, std::int64_t memory = -1) {
  nnr::NumaResources r;
  r.set(NumaResource::kCpu, milli_cpu);
  if (memory >= 0)
    r.set(NumaResource::kMemory, memory);
  return r;
}

constexpr std::int64_t kGi = 1024LL * 1024 * 1024;

}  // namespace

// TestNodeAllocationAddCPUs and TestNodeAllocationStateReleaseCPUs.
TEST_CASE("NodeAllocation add, re-add and release", "[nodenumaresource]") {
  const nnr::NodeCpuTopology t = topologyOf(2, 1, 4, 2);
  nnr::NodeAllocation node;
  REQUIRE(node.add(t, pod("a", "1-4")));
  CHECK(node.podCount() == 1);
  CHECK(node.allocatedCpuSet().toString() == "1-4");
  for (int c = 1; c <= 4; ++c) {
    INFO(c);
    CHECK(node.allocatedCpus()[static_cast<std::size_t>(c)] ==
          nnr::AllocatedCpu{1, CpuExclusivePolicy::kPCPULevel});
  }
  CHECK(node.availableCpus(t, 2, {}).toString() == "0-15");
  CHECK(node.availableCpus(t, 1, {}).toString() == "0,5-15");

  // The same uid again changes nothing.
  CHECK_FALSE(node.add(t, pod("a", "1-4")));
  CHECK(node.allocatedCpus()[1].ref_count == 1);

  // Another pod sharing 2-4.
  REQUIRE(node.add(t, pod("b", "2-5", CpuExclusivePolicy::kNUMANodeLevel)));
  CHECK(node.allocatedCpus()[3] == nnr::AllocatedCpu{2, CpuExclusivePolicy::kNUMANodeLevel});
  CHECK(node.availableCpus(t, 2, {}).toString() == "0-1,5-15");

  REQUIRE(node.release("a"));
  CHECK_FALSE(node.release("a"));
  CHECK(node.availableCpus(t, 1, {}).toString() == "0-1,6-15");
  // update replaces what a uid holds.
  node.update(t, pod("b", "8-9", CpuExclusivePolicy::kNone));
  CHECK(node.allocatedCpuSet().toString() == "8-9");
  REQUIRE(node.find("b") != nullptr);
  CHECK(node.find("b")->cpus.toString() == "8-9");
  REQUIRE(node.release("b"));
  CHECK(node.allocatedCpuSet().empty());
  CHECK(node.allocatedCpus().empty());
  CHECK(node.podCount() == 0);
}

// Test_cpuAllocation_getAvailableCPUs_with_preferred_cpus, plus reserved CPUs.
TEST_CASE("NodeAllocation available CPUs with reserved and preferred CPUs", "[nodenumaresource]") {
  const nnr::NodeCpuTopology t = topologyOf(2, 1, 4, 2);
  nnr::NodeAllocation node;
  REQUIRE(node.add(t, pod("a", "0-4")));
  struct Case {
    std::string name;
    int max_ref;
    std::string reserved, preferred, want;
  };
  const std::vector<Case> cases = {
      {"held CPUs are gone", 1, "", "", "5-15"},
      {"preferred CPUs count one hold fewer", 1, "", "1-2", "1-2,5-15"},
      {"reserved CPUs are never available", 1, "14-15", "1", "1,5-13"},
      {"shared CPUs stay below the limit", 2, "", "", "0-15"},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    CHECK(node.availableCpus(t, c.max_ref, cpus(c.reserved), cpus(c.preferred)).toString() ==
          c.want);
  }
  const std::vector<nnr::AllocatedCpu> except = node.allocatedCpusExcept(cpus("1-2"));
  CHECK(except[1].ref_count == 0);
  CHECK(except[1].exclusive == CpuExclusivePolicy::kNone);
  CHECK(except[3].ref_count == 1);
}

TEST_CASE("NodeAllocation NUMA node status", "[nodenumaresource]") {
  const nnr::NodeCpuTopology t = topologyOf(2, 1, 4, 2);  // node 0: 0-7, node 1: 8-15
  nnr::NodeAllocation node;
  CHECK(node.numaNodeStatuses(2) ==
        std::vector<NumaNodeStatus>{NumaNodeStatus::kIdle, NumaNodeStatus::kIdle});
  REQUIRE(node.add(t, pod("single", "0-1")));
  CHECK(node.numaNodeStatuses(2) ==
        std::vector<NumaNodeStatus>{NumaNodeStatus::kSingle, NumaNodeStatus::kIdle});
  REQUIRE(node.add(t, pod("spanning", "6-9")));
  CHECK(node.numaNodeStatuses(2) ==
        std::vector<NumaNodeStatus>{NumaNodeStatus::kShared, NumaNodeStatus::kShared});
  REQUIRE(node.release("single"));
  CHECK(node.numaNodeStatus(0) == NumaNodeStatus::kShared);
  REQUIRE(node.release("spanning"));
  CHECK(node.numaNodeStatus(0) == NumaNodeStatus::kIdle);
  CHECK(node.numaNodeStatus(1) == NumaNodeStatus::kIdle);
  // A pod with NUMA resources and no CPUs leaves the status alone.
  nnr::PodAllocation shares;
  shares.uid = "shares";
  shares.numa_resources = {{1, res(2000)}};
  REQUIRE(node.add(t, shares));
  CHECK(node.numaNodeStatus(1) == NumaNodeStatus::kIdle);
  REQUIRE(node.allocatedOnNumaNode(1) != nullptr);
  CHECK(node.allocatedOnNumaNode(1)->get(NumaResource::kCpu) == 2000);
  REQUIRE(node.release("shares"));
  CHECK(node.allocatedOnNumaNode(1)->get(NumaResource::kCpu) == 0);
}

// Test_getAvailableNUMANodeResources: zones of 16 CPUs (24 amplified by 1.5) and 32Gi.
TEST_CASE("NodeAllocation free NUMA resources", "[nodenumaresource]") {
  const nnr::NodeCpuTopology t = topologyOf(2, 1, 8, 2);  // node 0: 0-15, node 1: 16-31
  struct Case {
    std::string name;
    std::int64_t zone_cpu;
    double ratio;
    std::string bound_cpus;       // CPUs pods are bound to (node 0)
    std::int64_t held_cpu;        // NUMA cpu pods hold on node 0, 0 for none
    std::int64_t reusable_cpu;    // a reservation's on node 0
    std::int64_t want_free_cpu0;  // node 0
    std::int64_t want_held_cpu0;  // -1: node 0 not listed as held
  };
  const std::vector<Case> cases = {
      {"normal node", 16000, 1, "", 0, 0, 16000, -1},
      {"normal node with amplification ratios", 24000, 1.5, "", 0, 0, 24000, -1},
      {"amplification ratios and allocated CPUSets", 24000, 1.5, "0-3", 4000, 0, 18000, 6000},
      {"amplification ratios and allocated CPUSets and CPU Shares", 24000, 1.5, "0-3", 8000, 0,
       14000, 10000},
      {"without amplification bound CPUs count as held", 16000, 1, "0-3", 4000, 0, 12000, 4000},
      {"a reservation's CPUs are taken back", 16000, 1, "0-3", 4000, 3000, 15000, 1000},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    nnr::NodeAllocation node;
    if (c.held_cpu > 0 || !c.bound_cpus.empty()) {
      nnr::PodAllocation a = pod("a", c.bound_cpus, CpuExclusivePolicy::kNone);
      a.numa_resources = {{0, res(c.held_cpu)}};
      REQUIRE(node.add(t, a));
    }
    const std::vector<nnr::NumaNodeResources> zones = {{0, res(c.zone_cpu, 32 * kGi)},
                                                       {1, res(c.zone_cpu, 32 * kGi)}};
    std::vector<nnr::NumaNodeResources> reusable;
    if (c.reusable_cpu > 0)
      reusable.push_back({0, res(c.reusable_cpu)});
    const auto got = node.numaAvailability(t, zones, c.ratio, reusable);
    REQUIRE(got.available.size() == 2);
    CHECK(got.available[0].resources.get(NumaResource::kCpu) == c.want_free_cpu0);
    CHECK(got.available[0].resources.get(NumaResource::kMemory) == 32 * kGi);
    CHECK(got.available[1].resources == zones[1].resources);
    if (c.want_held_cpu0 < 0) {
      CHECK(got.allocated.empty());
    } else {
      REQUIRE(got.allocated.size() == 1);
      CHECK(got.allocated[0].node == 0);
      CHECK(got.allocated[0].resources.get(NumaResource::kCpu) == c.want_held_cpu0);
    }
  }
}
