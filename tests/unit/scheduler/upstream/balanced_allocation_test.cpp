#include <catch2/catch.hpp>

#include "fixtures.h"
#include "plugins/upstream/noderesources/balanced_allocation.h"

namespace koord::roles::scheduler::upstream {
namespace {

using namespace testing;

const Resource kNoRequest = res(0, 0);
const Resource kCPUOnly = res(3000, 0);
const Resource kCPUAndMemory = res(3000, 5000);

struct Case {
  std::string name;
  Resource pod;
  std::vector<Resource> nodes;
  std::vector<std::vector<Resource>> existing;
  std::vector<std::int64_t> want;
  std::vector<ResourceSpec> resources = {};  // empty: 1.20's formula
};

void runTable(const std::vector<Case>& cases) {
  for (const auto& c : cases) {
    INFO(c.name);
    auto args = std::make_shared<NodeResourcesBalancedAllocationArgs>();
    args->resources = c.resources;
    const NodeResourcesBalancedAllocation plugin(args);
    std::vector<NodeInfo> nodes;
    for (std::size_t i = 0; i < c.nodes.size(); ++i) {
      std::vector<PodInfo> pods;
      if (i < c.existing.size()) {
        for (const auto& r : c.existing[i])
          pods.push_back(podRequesting(r));
      }
      nodes.push_back(makeNodeInfo(makeNode("machine" + std::to_string(i + 1), c.nodes[i]), pods));
    }
    CHECK(scoreAll(plugin, CycleState{}, podRequesting(c.pod), nodes) == c.want);
  }
}

TEST_CASE("NodeResourcesBalancedAllocation table (kube-scheduler 1.20)", "[scheduler][upstream]") {
  const std::vector<Case> cases = {
      // Both fractions 0: (1 - 0) * 100.
      {"nothing scheduled, nothing requested",
       kNoRequest,
       {res(4000, 10000), res(4000, 10000)},
       {},
       {100, 100}},
      // machine1: cpu 3000/4000 = 0.75, memory 0.5 -> 75; machine2: 0.5 and 0.5 -> 100.
      {"nothing scheduled, resources requested, differently sized machines",
       kCPUAndMemory,
       {res(4000, 10000), res(6000, 10000)},
       {},
       {75, 100}},
      {"no resources requested, pods scheduled",
       kNoRequest,
       {res(4000, 10000), res(4000, 10000)},
       {{kNoRequest, kNoRequest}, {kNoRequest, kNoRequest}},
       {100, 100}},
      // machine1: 0.6 and 0 -> 40; machine2: 0.6 and 0.25 -> 65.
      {"no resources requested, pods scheduled with resources",
       kNoRequest,
       {res(10000, 20000), res(10000, 20000)},
       {{kCPUOnly, kCPUOnly}, {kCPUOnly, kCPUAndMemory}},
       {40, 65}},
      // machine1: 0.6 and 0.25 -> 65; machine2: 0.6 and 0.5 -> 90.
      {"resources requested, pods scheduled with resources",
       kCPUAndMemory,
       {res(10000, 20000), res(10000, 20000)},
       {{kCPUOnly}, {kCPUAndMemory}},
       {65, 90}},
      // machine2: 0.6 and 10000/50000 = 0.2 -> 60.
      {"resources requested, pods scheduled with resources, differently sized machines",
       kCPUAndMemory,
       {res(10000, 20000), res(10000, 50000)},
       {{kCPUOnly}, {kCPUAndMemory}},
       {65, 60}},
      // cpu 6000/4000 >= 1 on both nodes.
      {"requested resources exceed node capacity",
       kCPUOnly,
       {res(4000, 10000), res(4000, 10000)},
       {{kCPUOnly}, {kCPUAndMemory}},
       {0, 0}},
      // No allocatable counts as full.
      {"zero node resources, pods scheduled with resources",
       kNoRequest,
       {res(0, 0), res(0, 0)},
       {{kCPUOnly}, {kCPUAndMemory}},
       {0, 0}},
      // Exactly full in memory is already excluded.
      {"a node reaching capacity in one resource scores 0",
       res(1000, 10000),
       {res(4000, 10000)},
       {},
       {0}},
  };
  runTable(cases);
}

TEST_CASE("NodeResourcesBalancedAllocation with configured resources uses the std deviation",
          "[scheduler][upstream]") {
  const std::vector<ResourceSpec> cpu_memory = {{"cpu", 1}, {"memory", 1}};
  const std::vector<ResourceSpec> with_batch = {
      {"cpu", 1}, {"memory", 1}, {"kubernetes.io/batch-cpu", 1}};
  const std::vector<Case> cases = {
      // Two resources: std = |0.75 - 0.5| / 2 = 0.125 -> 87; 0.5/0.5 -> 100.
      {"two resources, differently sized machines",
       kCPUAndMemory,
       {res(4000, 10000), res(6000, 10000)},
       {},
       {87, 100},
       cpu_memory},
      // Fractions are capped at 1 rather than zeroing the node: |1 - 0| / 2 = 0.5 -> 50.
      {"a resource above capacity counts as full",
       kCPUOnly,
       {res(4000, 10000)},
       {{kCPUOnly}},
       {50},
       cpu_memory},
      // Three resources: fractions 0.5, 0.5, 0.25; mean 5/12; std = sqrt(1/72) = 0.118 -> 88.
      // A node without batch-cpu leaves it out: 0.5 and 0.5 -> 100.
      {"three resources; a node lacking one leaves it out",
       res(3000, 5000, {{"kubernetes.io/batch-cpu", 1000}}),
       {res(6000, 10000, {{"kubernetes.io/batch-cpu", 4000}}), res(6000, 10000)},
       {},
       {88, 100},
       with_batch},
      // Only one fraction left: no deviation.
      {"a single resource has no deviation",
       kCPUAndMemory,
       {res(4000, 10000)},
       {},
       {100},
       {{"cpu", 1}}},
  };
  runTable(cases);
}

}  // namespace
}  // namespace koord::roles::scheduler::upstream
