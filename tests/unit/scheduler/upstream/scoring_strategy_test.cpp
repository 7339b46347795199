#include <catch2/catch.hpp>

#include "fixtures.h"
#include "plugins/upstream/noderesources/fit.h"

namespace koord::roles::scheduler::upstream {
namespace {

using namespace testing;

constexpr std::string_view kV1beta2 = "kubescheduler.config.k8s.io/v1beta2";

const Resource kNoRequest = res(0, 0);
const Resource kCPUOnly = res(3000, 0);
const Resource kCPUAndMemory = res(3000, 5000);

struct Case {
  std::string name;
  std::string args;  // NodeResourcesFitArgs JSON under v1beta2
  Resource pod;
  std::vector<Resource> nodes;
  std::vector<std::vector<Resource>> existing;
  std::vector<std::int64_t> want;
};

void runTable(const std::vector<Case>& cases) {
  for (const auto& c : cases) {
    INFO(c.name);
    const auto json = parseJson(c.args);
    auto args = decodeNodeResourcesFitArgs(&json, kV1beta2);
    INFO((args ? std::string() : args.error().message));
    REQUIRE(args.has_value());
    REQUIRE((*args)->scoring_strategy);
    const ScoringNodeResourcesFit plugin(*args);
    std::vector<NodeInfo> nodes;
    for (std::size_t i = 0; i < c.nodes.size(); ++i) {
      std::vector<PodInfo> pods;
      if (i < c.existing.size()) {
        for (const auto& r : c.existing[i])
          pods.push_back(podRequesting(r));
      }
      nodes.push_back(makeNodeInfo(makeNode("node" + std::to_string(i + 1), c.nodes[i]), pods));
    }
    CHECK(scoreAll(plugin, CycleState{}, podRequesting(c.pod), nodes) == c.want);
  }
}

TEST_CASE("NodeResourcesFit scoringStrategy LeastAllocated", "[scheduler][upstream]") {
  const std::string least = R"({"scoringStrategy":{"type":"LeastAllocated"}})";
  const std::vector<Case> cases = {
      {"the default strategy is LeastAllocated over cpu and memory",
       "{}",
       kCPUAndMemory,
       {res(4000, 10000), res(6000, 10000)},
       {},
       {37, 50}},
      {"nothing scheduled, nothing requested",
       least,
       kNoRequest,
       {res(4000, 10000), res(4000, 10000)},
       {},
       {100, 100}},
      {"resources requested, pods scheduled with resources, differently sized nodes",
       least,
       kCPUAndMemory,
       {res(10000, 20000), res(10000, 50000)},
       {{kCPUOnly}, {kCPUAndMemory}},
       {57, 60}},
      {"requested resources exceed node capacity",
       least,
       kCPUOnly,
       {res(4000, 10000), res(4000, 10000)},
       {{kCPUOnly}, {kCPUAndMemory}},
       {50, 25}},
      // Nodes without cpu or memory leave both out: nothing to average.
      {"zero node resources",
       least,
       kNoRequest,
       {res(0, 0), res(0, 0)},
       {{kCPUOnly}, {kCPUAndMemory}},
       {0, 0}},
      {"different weights on cpu and memory",
       R"({"scoringStrategy":{"type":"LeastAllocated",
           "resources":[{"name":"memory","weight":2},{"name":"cpu","weight":1}]}})",
       kCPUAndMemory,
       {res(4000, 10000), res(6000, 10000)},
       {},
       {41, 50}},
      // node1: cpu 50, memory 50, batch-cpu (4000-1000)*100/4000 = 75 -> 58. node2 has no
      // batch-cpu, so it is left out: (50 + 50) / 2 = 50 (1.20 would give 33).
      {"a scalar resource the node lacks is left out of the average",
       R"({"scoringStrategy":{"type":"LeastAllocated","resources":[
           {"name":"cpu","weight":1},{"name":"memory","weight":1},
           {"name":"kubernetes.io/batch-cpu","weight":1}]}})",
       res(3000, 5000, {{"kubernetes.io/batch-cpu", 1000}}),
       {res(6000, 10000, {{"kubernetes.io/batch-cpu", 4000}}), res(6000, 10000)},
       {},
       {58, 50}},
      // batch-memory weighs 3: (50 + 50 + 25*3) / 5 = 35.
      {"batch-memory with a weight",
       R"({"scoringStrategy":{"type":"LeastAllocated","resources":[
           {"name":"cpu"},{"name":"memory"},{"name":"kubernetes.io/batch-memory","weight":3}]}})",
       res(3000, 5000, {{"kubernetes.io/batch-memory", 6000}}),
       {res(6000, 10000, {{"kubernetes.io/batch-memory", 8000}})},
       {},
       {35}},
  };
  runTable(cases);
}

TEST_CASE("NodeResourcesFit scoringStrategy MostAllocated", "[scheduler][upstream]") {
  const std::string most = R"({"scoringStrategy":{"type":"MostAllocated"}})";
  const std::vector<Case> cases = {
      {"nothing scheduled, nothing requested",
       most,
       kNoRequest,
       {res(4000, 10000), res(4000, 10000)},
       {},
       {0, 0}},
      {"nothing scheduled, resources requested, differently sized nodes",
       most,
       kCPUAndMemory,
       {res(4000, 10000), res(6000, 10000)},
       {},
       {62, 50}},
      {"resources requested, pods scheduled with resources",
       most,
       kCPUAndMemory,
       {res(10000, 20000), res(10000, 20000)},
       {{kCPUOnly}, {kCPUAndMemory}},
       {42, 55}},
      // Above capacity counts as full here: node1 cpu 100, memory 90 -> 95; node2 cpu 50,
      // memory 100 -> 75 (1.20's v1beta1 plugin gives 45 and 25).
      {"resources requested with more than the node",
       most,
       res(5000, 9000),
       {res(4000, 10000), res(10000, 8000)},
       {},
       {95, 75}},
      {"different weights on cpu and memory",
       R"({"scoringStrategy":{"type":"MostAllocated",
           "resources":[{"name":"memory","weight":2},{"name":"cpu","weight":1}]}})",
       kCPUAndMemory,
       {res(4000, 10000), res(6000, 10000)},
       {},
       {58, 50}},
  };
  runTable(cases);
}

TEST_CASE("NodeResourcesFit scoringStrategy RequestedToCapacityRatio", "[scheduler][upstream]") {
  const std::string favour_free = R"({"scoringStrategy":{"type":"RequestedToCapacityRatio",
      "requestedToCapacityRatio":{"shape":[{"utilization":0,"score":10},
                                           {"utilization":100,"score":0}]}}})";
  const std::string favour_full = R"({"scoringStrategy":{"type":"RequestedToCapacityRatio",
      "requestedToCapacityRatio":{"shape":[{"utilization":0,"score":0},
                                           {"utilization":100,"score":10}]}}})";
  const std::string peak_at_half = R"({"scoringStrategy":{"type":"RequestedToCapacityRatio",
      "resources":[{"name":"cpu","weight":1}],
      "requestedToCapacityRatio":{"shape":[{"utilization":0,"score":0},
                                           {"utilization":50,"score":10},
                                           {"utilization":100,"score":0}]}}})";
  const std::vector<Case> cases = {
      {"nothing requested on empty nodes: full score",
       favour_free,
       kNoRequest,
       {res(4000, 10000), res(4000, 10000)},
       {},
       {100, 100}},
      // node1: cpu utilization 75 -> 25, memory 50 -> 50, rounded average 37.5 -> 38.
      {"resources requested, differently sized nodes (rounded)",
       favour_free,
       kCPUAndMemory,
       {res(4000, 10000), res(6000, 10000)},
       {},
       {38, 50}},
      // node1: cpu 75, memory 50 -> 62.5 -> 63.
      {"the increasing shape packs",
       favour_full,
       kCPUAndMemory,
       {res(4000, 10000), res(6000, 10000)},
       {},
       {63, 50}},
      // Every resource scores 0 on the increasing shape: nothing is averaged.
      {"resources scoring 0 are left out", favour_full, kNoRequest, {res(4000, 10000)}, {}, {0}},
      // Above capacity evaluates the shape at 100.
      {"above capacity takes the shape's value at 100% utilization",
       favour_full,
       kCPUOnly,
       {res(4000, 10000)},
       {{kCPUOnly}},
       {100}},
      // utilization 75 on the tent: 100 + (0 - 100) * (75 - 50) / 50 = 50; 25 -> 50; 50 -> 100.
      {"a three-point shape interpolates each segment",
       peak_at_half,
       res(3000, 0),
       {res(4000, 1), res(12000, 1), res(6000, 1)},
       {},
       {50, 50, 100}},
  };
  runTable(cases);
}

TEST_CASE("NodeResourcesFit builds a Score plugin only for v1beta2+", "[scheduler][upstream]") {
  auto v1beta1 = decodeNodeResourcesFitArgs(nullptr, "kubescheduler.config.k8s.io/v1beta1");
  REQUIRE(v1beta1.has_value());
  CHECK_FALSE((*v1beta1)->scoring_strategy);
  auto v1beta2 = decodeNodeResourcesFitArgs(nullptr, kV1beta2);
  REQUIRE(v1beta2.has_value());
  REQUIRE((*v1beta2)->scoring_strategy);
  CHECK((*v1beta2)->scoring_strategy->type == ScoringStrategyType::kLeastAllocated);
  CHECK((*v1beta2)->scoring_strategy->resources == defaultResourceSpecs());
  auto v1 = decodeNodeResourcesFitArgs(nullptr, "kubescheduler.config.k8s.io/v1");
  REQUIRE(v1.has_value());
  CHECK((*v1)->scoring_strategy);
}

}  // namespace
}  // namespace koord::roles::scheduler::upstream
