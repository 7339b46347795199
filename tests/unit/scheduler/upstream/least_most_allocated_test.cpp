#include <catch2/catch.hpp>

#include "fixtures.h"
#include "plugins/upstream/noderesources/least_allocated.h"
#include "plugins/upstream/noderesources/most_allocated.h"

namespace koord::roles::scheduler::upstream {
namespace {

using namespace testing;

// upstream's score-table pods: cpuOnly asks 1000m+2000m cpu and an explicit 0 memory,
// cpuAndMemory 1000m+2000m cpu and 2000+3000 memory; a pod without containers asks nothing,
// not even the non-zero defaults.
const Resource kNoRequest = res(0, 0);
const Resource kCPUOnly = res(3000, 0);
const Resource kCPUAndMemory = res(3000, 5000);

struct ScoreCase {
  std::string name;
  Resource pod;
  std::vector<Resource> nodes;                  // allocatable cpu/memory per node
  std::vector<std::vector<Resource>> existing;  // pods already on each node
  std::vector<std::int64_t> want;
  std::vector<ResourceSpec> resources = defaultResourceSpecs();
};

std::vector<NodeInfo> buildNodes(const ScoreCase& c) {
  std::vector<NodeInfo> nodes;
  for (std::size_t i = 0; i < c.nodes.size(); ++i) {
    std::vector<PodInfo> pods;
    if (i < c.existing.size()) {
      for (const auto& r : c.existing[i])
        pods.push_back(podRequesting(r));
    }
    nodes.push_back(makeNodeInfo(makeNode("machine" + std::to_string(i + 1), c.nodes[i]), pods));
  }
  return nodes;
}

template <typename Plugin, typename Args>
void runScoreTable(const std::vector<ScoreCase>& cases) {
  for (const auto& c : cases) {
    INFO(c.name);
    auto args = std::make_shared<Args>();
    args->resources = c.resources;
    const Plugin plugin(args);
    CHECK_FALSE(plugin.hasNormalizeScore());
    CHECK(scoreAll(plugin, CycleState{}, podRequesting(c.pod), buildNodes(c)) == c.want);
  }
}

TEST_CASE("NodeResourcesLeastAllocated table (kube-scheduler 1.20)", "[scheduler][upstream]") {
  const std::vector<ScoreCase> cases = {
      // cpu (4000-0)*100/4000 = 100, memory (10000-0)*100/10000 = 100 on both nodes.
      {"nothing scheduled, nothing requested",
       kNoRequest,
       {res(4000, 10000), res(4000, 10000)},
       {},
       {100, 100}},
      // machine1: cpu 25, memory 50 -> 37; machine2: cpu 50, memory 50 -> 50.
      {"nothing scheduled, resources requested, differently sized machines",
       kCPUAndMemory,
       {res(4000, 10000), res(6000, 10000)},
       {},
       {37, 50}},
      {"no resources requested, pods scheduled",
       kNoRequest,
       {res(4000, 10000), res(4000, 10000)},
       {{kNoRequest, kNoRequest}, {kNoRequest, kNoRequest}},
       {100, 100}},
      // machine1: cpu 40, memory 100 -> 70; machine2: cpu 40, memory 75 -> 57.
      {"no resources requested, pods scheduled with resources",
       kNoRequest,
       {res(10000, 20000), res(10000, 20000)},
       {{kCPUOnly, kCPUOnly}, {kCPUOnly, kCPUAndMemory}},
       {70, 57}},
      // machine1: cpu 40, memory 75 -> 57; machine2: cpu 40, memory 50 -> 45.
      {"resources requested, pods scheduled with resources",
       kCPUAndMemory,
       {res(10000, 20000), res(10000, 20000)},
       {{kCPUOnly}, {kCPUAndMemory}},
       {57, 45}},
      // machine2: cpu 40, memory (50000-10000)*100/50000 = 80 -> 60.
      {"resources requested, pods scheduled with resources, differently sized machines",
       kCPUAndMemory,
       {res(10000, 20000), res(10000, 50000)},
       {{kCPUOnly}, {kCPUAndMemory}},
       {57, 60}},
      // cpu 6000 > 4000 scores 0 on both; memory 100 and 50.
      {"requested resources exceed node capacity",
       kCPUOnly,
       {res(4000, 10000), res(4000, 10000)},
       {{kCPUOnly}, {kCPUAndMemory}},
       {50, 25}},
      {"zero node resources, pods scheduled with resources",
       kNoRequest,
       {res(0, 0), res(0, 0)},
       {{kCPUOnly}, {kCPUAndMemory}},
       {0, 0}},
      // machine1: (25*1 + 50*2)/3 = 41; machine2: (50 + 100)/3 = 50.
      {"nothing scheduled, resources requested with different weight on CPU and memory",
       kCPUAndMemory,
       {res(4000, 10000), res(6000, 10000)},
       {},
       {41, 50},
       {{"memory", 2}, {"cpu", 1}}},
      // A BE pod asks batch-cpu; under 1.20's rules the node without batch-cpu scores 0 on it
      // and is still averaged over three resources: (50+50+0)/3 = 33.
      {"a scalar resource the node lacks scores 0 and still counts (1.20)",
       res(3000, 5000, {{"kubernetes.io/batch-cpu", 1000}}),
       {res(6000, 10000, {{"kubernetes.io/batch-cpu", 4000}}), res(6000, 10000)},
       {},
       {58, 33},
       {{"cpu", 1}, {"memory", 1}, {"kubernetes.io/batch-cpu", 1}}},
  };
  runScoreTable<NodeResourcesLeastAllocated, NodeResourcesLeastAllocatedArgs>(cases);
}

TEST_CASE("NodeResourcesMostAllocated table (kube-scheduler 1.20)", "[scheduler][upstream]") {
  const std::vector<ScoreCase> cases = {
      {"nothing scheduled, nothing requested",
       kNoRequest,
       {res(4000, 10000), res(4000, 10000)},
       {},
       {0, 0}},
      // machine1: cpu 75, memory 50 -> 62; machine2: cpu 50, memory 50 -> 50.
      {"nothing scheduled, resources requested, differently sized machines",
       kCPUAndMemory,
       {res(4000, 10000), res(6000, 10000)},
       {},
       {62, 50}},
      // machine1: cpu 60, memory 0 -> 30; machine2: cpu 60, memory 25 -> 42.
      {"no resources requested, pods scheduled with resources",
       kNoRequest,
       {res(10000, 20000), res(10000, 20000)},
       {{kCPUOnly, kCPUOnly}, {kCPUOnly, kCPUAndMemory}},
       {30, 42}},
      // machine1: cpu 60, memory 25 -> 42; machine2: cpu 60, memory 50 -> 55.
      {"resources requested, pods scheduled with resources",
       kCPUAndMemory,
       {res(10000, 20000), res(10000, 20000)},
       {{kCPUOnly}, {kCPUAndMemory}},
       {42, 55}},
      // 1.20 scores a resource above capacity 0: machine1 cpu 5000 > 4000 -> 0, memory 90 -> 45;
      // machine2 cpu 50, memory 9000 > 8000 -> 0 -> 25.
      {"resources requested with more than the node, pods scheduled with resources",
       res(5000, 9000),
       {res(4000, 10000), res(10000, 8000)},
       {},
       {45, 25}},
      // machine1: (75*1 + 50*2)/3 = 58; machine2: (50 + 100)/3 = 50.
      {"nothing scheduled, resources requested with different weight on CPU and memory",
       kCPUAndMemory,
       {res(4000, 10000), res(6000, 10000)},
       {},
       {58, 50},
       {{"memory", 2}, {"cpu", 1}}},
  };
  runScoreTable<NodeResourcesMostAllocated, NodeResourcesMostAllocatedArgs>(cases);
}

TEST_CASE("resource scorers use the non-zero requests for cpu and memory",
          "[scheduler][upstream]") {
  // A pod whose containers request nothing weighs 100m and 200Mi when scoring (1.20), and the
  // node's pods count the same way.
  const std::int64_t mi = 1024 * 1024;
  PodInfo pod;
  pod.non_zero_requests = res(kDefaultMilliCPURequest, kDefaultMemoryRequest);
  PodInfo existing;
  existing.non_zero_requests = res(kDefaultMilliCPURequest, kDefaultMemoryRequest);
  const NodeInfo node = makeNodeInfo(makeNode("n", res(1000, 2000 * mi)), {existing});
  // cpu (1000-200)*100/1000 = 80, memory (2000-400)*100/2000 = 80.
  const NodeResourcesLeastAllocated least(nullptr);
  std::int64_t s = -1;
  REQUIRE(least.score(CycleState{}, pod, node, s).ok());
  CHECK(s == 80);
  const NodeResourcesMostAllocated most(nullptr);
  REQUIRE(most.score(CycleState{}, pod, node, s).ok());
  CHECK(s == 20);
}

TEST_CASE("allocatableAndRequested per resource kind", "[scheduler][upstream]") {
  Resource alloc =
      res(4000, 8000,
          {{"kubernetes.io/batch-cpu", 3000}, {"example.com/gpu", 4}, {"hugepages-2Mi", 10}});
  alloc.ephemeral_storage = 100;
  alloc.allowed_pod_number = 10;
  PodInfo existing = podRequesting(res(100, 200, {{"kubernetes.io/batch-cpu", 500}}));
  existing.requests.ephemeral_storage = 5;
  existing.non_zero_requests = res(150, 300);
  const NodeInfo node = makeNodeInfo(makeNode("n", alloc), {existing});
  PodInfo pod =
      podRequesting(res(0, 0, {{"kubernetes.io/batch-cpu", 1000}, {"example.com/gpu", 1}}));
  pod.requests.ephemeral_storage = 7;
  pod.non_zero_requests = res(100, 200);
  struct Case {
    std::string resource;
    std::int64_t allocatable;
    std::int64_t requested;
  };
  const std::vector<Case> cases = {
      {"cpu", 4000, 250},
      {"memory", 8000, 500},
      {"ephemeral-storage", 100, 12},
      {"kubernetes.io/batch-cpu", 3000, 1500},
      {"example.com/gpu", 4, 1},
      {"hugepages-2Mi", 10, 0},
      {"pods", 0, 0},
      {"not-a-scalar", 0, 0},
  };
  for (const auto& c : cases) {
    INFO(c.resource);
    const auto got = allocatableAndRequested(node, pod, c.resource);
    CHECK(got.allocatable == c.allocatable);
    CHECK(got.requested == c.requested);
  }
}

TEST_CASE("resource name kinds follow v1helper", "[scheduler][upstream]") {
  struct Case {
    std::string name;
    bool extended;
    bool scalar;
  };
  const std::vector<Case> cases = {
      {"cpu", false, false},
      {"example.com/aaa", true, true},
      {"kubernetes.io/batch-cpu", false, true},
      {"subdomain.kubernetes.io/something", false, true},
      {"hugepages-2Mi", false, true},
      {"attachable-volumes-aws-ebs", false, true},
      {"requests.example.com/aaa", false, false},
      {"example.com/", false, false},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    CHECK(isExtendedResourceName(c.name) == c.extended);
    CHECK(isScalarResourceName(c.name) == c.scalar);
  }
}

}  // namespace
}  // namespace koord::roles::scheduler::upstream
