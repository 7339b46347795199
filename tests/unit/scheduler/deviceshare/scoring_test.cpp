#include "plugins/deviceshare/scoring.h"

#include <catch2/catch.hpp>

#include <string>
#include <utility>
#include <vector>

#include "catch_expected.h"
#include "device_fixtures.h"
#include "plugins/deviceshare/allocator.h"

using namespace koord;
using namespace koord::roles::scheduler;
using namespace koord::roles::scheduler::deviceshare;
using namespace koord::roles::scheduler::deviceshare::testing;

namespace {

DeviceResources ratio(std::int64_t r) {
  DeviceResources out;
  out.set(DeviceResource::kGPUMemoryRatio, r);
  return out;
}

}  // namespace

TEST_CASE("scoring: one device under each strategy", "[scheduler][deviceshare]") {
  struct Case {
    ScoringStrategyType type;
    std::int64_t free;
    std::int64_t request;
    std::int64_t score;
  };
  const std::vector<Case> cases{
      // LeastAllocated: (total - (used + request)) * 100 / total.
      {ScoringStrategyType::kLeastAllocated, 100, 50, 50},
      {ScoringStrategyType::kLeastAllocated, 50, 50, 0},
      {ScoringStrategyType::kLeastAllocated, 100, 30, 70},
      {ScoringStrategyType::kLeastAllocated, 20, 30, 0},  // more than is left
      // MostAllocated: (used + request) * 100 / total, capped at 100.
      {ScoringStrategyType::kMostAllocated, 100, 50, 50},
      {ScoringStrategyType::kMostAllocated, 50, 50, 100},
      {ScoringStrategyType::kMostAllocated, 20, 30, 100},
      {ScoringStrategyType::kMostAllocated, 100, 33, 33},
  };
  for (const Case& c : cases) {
    INFO("free " << c.free << " request " << c.request);
    DeviceScorer scorer = DeviceScorer::defaults();
    scorer.type = c.type;
    CHECK(scorer.scoreDevice(ratio(c.request), ratio(100), ratio(c.free)) == c.score);
  }
}

TEST_CASE("scoring: weights and resources the device lacks", "[scheduler][deviceshare]") {
  const std::vector<std::pair<std::string, std::int64_t>> spec{
      {"koordinator.sh/gpu-core", 3}, {"koordinator.sh/gpu-memory-ratio", 1}, {"cpu", 5}};
  const DeviceScorer scorer = DeviceScorer::fromSpec(ScoringStrategyType::kMostAllocated, spec);
  CHECK(scorer.weights[static_cast<std::size_t>(DeviceResource::kGPUCore)] == 3);
  CHECK(scorer.weights[static_cast<std::size_t>(DeviceResource::kGPUMemoryRatio)] == 1);
  CHECK(scorer.weights[static_cast<std::size_t>(DeviceResource::kRDMA)] == 0);

  DeviceResources total;
  total.set(DeviceResource::kGPUCore, 100);
  total.set(DeviceResource::kGPUMemoryRatio, 100);
  DeviceResources free = total;
  DeviceResources request;
  request.set(DeviceResource::kGPUCore, 20);
  request.set(DeviceResource::kGPUMemoryRatio, 60);
  // (20 * 3 + 60 * 1) / 4.
  CHECK(scorer.scoreDevice(request, total, free) == 30);

  // A device without gpu-core: only the ratio counts.
  DeviceResources ratio_only;
  ratio_only.set(DeviceResource::kGPUMemoryRatio, 100);
  CHECK(scorer.scoreDevice(request, ratio_only, ratio_only) == 60);
  // Nothing weighted on the device: 0.
  DeviceResources rdma;
  rdma.set(DeviceResource::kRDMA, 100);
  CHECK(scorer.scoreDevice(request, rdma, rdma) == 0);
}

TEST_CASE("scoring: nodes", "[scheduler][deviceshare]") {
  const DeviceScorer spread = DeviceScorer::defaults();
  const DeviceScorer binpack{ScoringStrategyType::kMostAllocated, spread.weights};
  const PodDeviceRequests half = podRequests({{"koordinator.sh/gpu-memory-ratio", "50"}});

  NodeDeviceState empty = gpus(2);
  NodeDeviceState busy = gpus(2);
  apis::DeviceAllocations a;
  REQUIRE(allocateDevices(busy, podRequests({{"nvidia.com/gpu", "1"}}), {}, a).ok());
  REQUIRE(busy.addPod("ns/a", a));

  struct Case {
    std::string name;
    const NodeDeviceState* node;
    const DeviceScorer* scorer;
    std::int64_t score;
  };
  const std::vector<Case> cases{
      // Sums over the node's cards: total 200, the request 50.
      {"spread, empty node", &empty, &spread, 75},
      {"spread, one card taken", &busy, &spread, 25},
      {"binpack, empty node", &empty, &binpack, 25},
      {"binpack, one card taken", &busy, &binpack, 75},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    std::int64_t score = -1;
    REQUIRE(scoreNode(*c.node, half, *c.scorer, {}, score).ok());
    CHECK(score == c.score);
  }

  SECTION("two device types add up") {
    NodeDeviceState node = nodeWith(
        {gpuJson({.minor = 0, .health = true, .numa = 0, .memory = "16Gi"}), rdmaJson(1, 0)});
    std::int64_t score = -1;
    REQUIRE(scoreNode(node,
                      podRequests({{"koordinator.sh/gpu-memory-ratio", "50"},
                                   {"koordinator.sh/rdma", "10"}}),
                      spread, {}, score)
                .ok());
    CHECK(score == 50 + 90);
  }
  SECTION("a type with nothing free scores nothing") {
    NodeDeviceState node = gpus(1);
    REQUIRE(allocateDevices(node, podRequests({{"nvidia.com/gpu", "1"}}), {}, a).ok());
    REQUIRE(node.addPod("ns/a", a));
    std::int64_t score = -1;
    REQUIRE(scoreNode(node, half, binpack, {}, score).ok());
    CHECK(score == 0);
  }
  SECTION("only the NUMA nodes allowed") {
    NodeDeviceState node =
        nodeWith({gpuJson({.minor = 0, .health = true, .numa = 0, .memory = "16Gi"}),
                  gpuJson({.minor = 1, .health = true, .numa = 1, .memory = "16Gi"})});
    REQUIRE(
        allocateDevices(node, podRequests({{"nvidia.com/gpu", "1"}}), {.numa_nodes = 0b1}, a).ok());
    REQUIRE(node.addPod("ns/a", a));
    std::int64_t score = -1;
    REQUIRE(scoreNode(node, half, spread, {.numa_nodes = 0b10}, score).ok());
    CHECK(score == 50);
  }
  SECTION("the demand's refusal") {
    std::int64_t score = -1;
    const Status s =
        scoreNode(gpus(1), podRequests({{"koordinator.sh/fpga", "100"}}), spread, {}, score);
    CHECK(s.code() == Code::kUnschedulableAndUnresolvable);
    CHECK(score == 0);
  }
}
