#include "plugins/deviceshare/allocator.h"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "catch_expected.h"
#include "device_fixtures.h"
#include "koord/apis/device_allocation.h"

using namespace koord;
using namespace koord::roles::scheduler;
using namespace koord::roles::scheduler::deviceshare;
using namespace koord::roles::scheduler::deviceshare::testing;

namespace {

using Entries = std::vector<std::pair<std::string, std::string>>;

PodDeviceRequests requestOf(const Entries& entries) {
  kube::ResourceList list;
  for (const auto& [name, value] : entries)
    list.emplace(name, kube::Quantity::parse(value).value());
  auto r = podDeviceRequests(Resource::fromList(list));
  if (!r.has_value())
    FAIL(r.error().message);
  return *r;
}

std::vector<int> minorsOf(const apis::DeviceAllocations& a, std::string_view type) {
  std::vector<int> out;
  auto it = a.find(type);
  if (it != a.end()) {
    for (const auto& d : it->second)
      out.push_back(d.minor);
  }
  return out;
}

// One pod after another on the same node: each placed pod is counted before the next.
struct Step {
  Entries request;
  std::vector<int> minors;  // empty: refused
  std::string reason = {};
};

void runSteps(NodeDeviceState& node, const AllocateOptions& options, const std::vector<Step>& steps,
              std::string_view type = "gpu") {
  int i = 0;
  for (const Step& step : steps) {
    INFO("pod " << i);
    const PodDeviceRequests request = requestOf(step.request);
    apis::DeviceAllocations got;
    const Status status = allocateDevices(node, request, options, got);
    const Status check = checkDevices(node, request, options);
    // Filter's answer and Reserve's agree.
    CHECK(check.code() == status.code());
    if (step.minors.empty()) {
      CHECK(status.code() == Code::kUnschedulable);
      CHECK(status.message() == step.reason);
      CHECK(check.message() == step.reason);
      CHECK(got.empty());
    } else {
      REQUIRE(status.ok());
      CHECK(minorsOf(got, type) == step.minors);
      REQUIRE(node.addPod("ns/pod-" + std::to_string(i), got));
    }
    ++i;
  }
}

}  // namespace

TEST_CASE("allocate: binpack shares one GPU before taking the next", "[scheduler][deviceshare]") {
  NodeDeviceState node = gpus(2);
  const DeviceScorer binpack =
      DeviceScorer{ScoringStrategyType::kMostAllocated, DeviceScorer::defaults().weights};
  runSteps(node, {.scorer = &binpack},
           {
               {{{"koordinator.sh/gpu-memory-ratio", "50"}}, {0}},
               {{{"koordinator.sh/gpu-memory-ratio", "50"}}, {0}},
               {{{"koordinator.sh/gpu-memory-ratio", "100"}}, {1}},
               {{{"koordinator.sh/gpu-memory-ratio", "100"}}, {}, "Insufficient gpu devices"},
           });
}

TEST_CASE("allocate: spread puts shares on different GPUs", "[scheduler][deviceshare]") {
  NodeDeviceState node = gpus(2);
  const DeviceScorer spread = DeviceScorer::defaults();
  runSteps(node, {.scorer = &spread},
           {
               {{{"koordinator.sh/gpu-memory-ratio", "50"}}, {0}},
               {{{"koordinator.sh/gpu-memory-ratio", "50"}}, {1}},
               // Half of each card is left: no whole card.
               {{{"koordinator.sh/gpu-memory-ratio", "100"}}, {}, "Insufficient gpu devices"},
               {{{"koordinator.sh/gpu-memory-ratio", "50"}}, {0}},
               {{{"koordinator.sh/gpu-memory-ratio", "100"}}, {}, "Insufficient gpu devices"},
           });
}

TEST_CASE("allocate: without a scorer devices go by minor", "[scheduler][deviceshare]") {
  NodeDeviceState node = gpus(3);
  runSteps(node, {},
           {
               {{{"koordinator.sh/gpu", "30"}}, {0}},
               {{{"koordinator.sh/gpu", "80"}}, {1}},
               {{{"koordinator.sh/gpu", "70"}}, {0}},
               {{{"nvidia.com/gpu", "1"}}, {2}},
               {{{"koordinator.sh/gpu", "20"}}, {1}},
               {{{"koordinator.sh/gpu", "1"}}, {}, "Insufficient gpu devices"},
           });
}

TEST_CASE("allocate: whole cards", "[scheduler][deviceshare]") {
  NodeDeviceState node = gpus(4);
  const DeviceScorer binpack =
      DeviceScorer{ScoringStrategyType::kMostAllocated, DeviceScorer::defaults().weights};
  runSteps(node, {.scorer = &binpack},
           {
               {{{"koordinator.sh/gpu-memory-ratio", "50"}}, {0}},
               // Card 0 is half taken: two whole cards are 1 and 2.
               {{{"nvidia.com/gpu", "2"}}, {1, 2}},
               {{{"nvidia.com/gpu", "2"}}, {}, "Insufficient gpu devices"},
               {{{"nvidia.com/gpu", "1"}}, {3}},
           });

  // What a whole card's allocation says, as the koordlet reads it.
  NodeDeviceState fresh = gpus(4);
  apis::DeviceAllocations got;
  REQUIRE(allocateDevices(fresh, requestOf({{"nvidia.com/gpu", "2"}}), {}, got).ok());
  CHECK(apis::formatDeviceAllocations(got) ==
        R"({"gpu":[{"minor":0,"resources":{"koordinator.sh/gpu-core":"100",)"
        R"("koordinator.sh/gpu-memory":"16Gi","koordinator.sh/gpu-memory-ratio":"100"}},)"
        R"({"minor":1,"resources":{"koordinator.sh/gpu-core":"100",)"
        R"("koordinator.sh/gpu-memory":"16Gi","koordinator.sh/gpu-memory-ratio":"100"}}]})");

  DeviceDemand demand;
  REQUIRE(deviceDemand(fresh, requestOf({{"nvidia.com/gpu", "3"}}), {}, demand).ok());
  CHECK(demand.countOf(DeviceType::kGPU) == 3);
  CHECK(demand.of(DeviceType::kGPU).get(DeviceResource::kGPUMemoryRatio) == 100);
  CHECK(demand.of(DeviceType::kGPU).get(DeviceResource::kGPUCore) == 100);
  CHECK_FALSE(checkDevices(fresh, requestOf({{"nvidia.com/gpu", "5"}}), {}).ok());
}

TEST_CASE("allocate: gpu-memory in bytes", "[scheduler][deviceshare]") {
  struct Case {
    std::string name;
    Entries request;
    std::string annotation;  // one card's allocation, or the error
    std::int64_t count = 1;
  };
  const std::vector<Case> cases{
      {"half a card's memory is half its ratio; no core asked, none given",
       {{"koordinator.sh/gpu-memory", "8Gi"}},
       R"({"gpu":[{"minor":0,"resources":{"koordinator.sh/gpu-memory":"8Gi",)"
       R"("koordinator.sh/gpu-memory-ratio":"50"}}]})"},
      {"the ratio is truncated to a whole percent",
       {{"koordinator.sh/gpu-core", "10"}, {"koordinator.sh/gpu-memory", "1Gi"}},
       R"({"gpu":[{"minor":0,"resources":{"koordinator.sh/gpu-core":"10",)"
       R"("koordinator.sh/gpu-memory":"1Gi","koordinator.sh/gpu-memory-ratio":"6"}}]})"},
      {"a ratio asks for its bytes",
       {{"koordinator.sh/gpu-memory-ratio", "25"}},
       R"({"gpu":[{"minor":0,"resources":{"koordinator.sh/gpu-memory":"4Gi",)"
       R"("koordinator.sh/gpu-memory-ratio":"25"}}]})"},
      {"two cards' memory is two cards, the core split (zero here) named",
       {{"koordinator.sh/gpu-memory", "32Gi"}},
       R"({"gpu":[{"minor":0,"resources":{"koordinator.sh/gpu-core":"0",)"
       R"("koordinator.sh/gpu-memory":"16Gi","koordinator.sh/gpu-memory-ratio":"100"}},)"
       R"({"minor":1,"resources":{"koordinator.sh/gpu-core":"0",)"
       R"("koordinator.sh/gpu-memory":"16Gi","koordinator.sh/gpu-memory-ratio":"100"}}]})",
       2},
      {"one and a half cards' memory fits no card",
       {{"koordinator.sh/gpu-memory", "24Gi"}},
       "Insufficient gpu devices"},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    NodeDeviceState node = gpus(2);
    apis::DeviceAllocations got;
    const Status status = allocateDevices(node, requestOf(c.request), {}, got);
    if (c.annotation.starts_with("{")) {
      REQUIRE(status.ok());
      CHECK(apis::formatDeviceAllocations(got) == c.annotation);
      DeviceDemand demand;
      REQUIRE(deviceDemand(node, requestOf(c.request), {}, demand).ok());
      CHECK(demand.countOf(DeviceType::kGPU) == c.count);
    } else {
      CHECK(status.message() == c.annotation);
    }
  }
}

TEST_CASE("allocate: unhealthy devices are skipped", "[scheduler][deviceshare]") {
  NodeDeviceState node =
      nodeWith({gpuJson({.minor = 0, .health = false, .numa = -1, .memory = "16Gi"}),
                gpuJson({.minor = 1, .health = true, .numa = -1, .memory = "16Gi"})});
  runSteps(node, {},
           {
               {{{"koordinator.sh/gpu-memory-ratio", "100"}}, {1}},
               {{{"koordinator.sh/gpu-memory-ratio", "10"}}, {}, "Insufficient gpu devices"},
           });

  struct Case {
    std::string name;
    NodeDeviceState node;
    Entries request;
    Code code;
    std::string reason;
  };
  std::vector<Case> cases;
  cases.push_back({"every GPU unhealthy",
                   nodeWith({gpuJson({.minor = 0, .health = false, .numa = -1, .memory = "16Gi"})}),
                   {{"nvidia.com/gpu", "1"}},
                   Code::kUnschedulableAndUnresolvable,
                   "no healthy GPU Devices"});
  cases.push_back({"no GPU at all",
                   nodeWith({rdmaJson(1, 0)}),
                   {{"nvidia.com/gpu", "1"}},
                   Code::kUnschedulableAndUnresolvable,
                   "Insufficient gpu devices"});
  cases.push_back({"no FPGA at all",
                   gpus(1),
                   {{"koordinator.sh/fpga", "100"}},
                   Code::kUnschedulableAndUnresolvable,
                   "Insufficient fpga devices"});
  cases.push_back({"cards that report no memory cannot take a memory request",
                   nodeWith({R"({"type":"gpu","minor":0,"health":true,)"
                             R"("resources":{"koordinator.sh/gpu-core":"100"}})"}),
                   {{"koordinator.sh/gpu-memory", "1Gi"}},
                   Code::kUnschedulableAndUnresolvable,
                   "gpu devices report no koordinator.sh/gpu-memory"});
  for (Case& c : cases) {
    INFO(c.name);
    apis::DeviceAllocations got;
    const Status status = allocateDevices(c.node, requestOf(c.request), {}, got);
    CHECK(status.code() == c.code);
    CHECK(status.message() == c.reason);
    const Status check = checkDevices(c.node, requestOf(c.request), {});
    CHECK(check.code() == c.code);
    CHECK(check.message() == c.reason);
  }
}

namespace {

// Four cards, two on each of NUMA nodes 0 and 1, and an RDMA NIC on each.
NodeDeviceState numaNode() {
  return nodeWith({gpuJson({.minor = 0, .health = true, .numa = 0, .memory = "16Gi"}),
                   gpuJson({.minor = 1, .health = true, .numa = 0, .memory = "16Gi"}),
                   gpuJson({.minor = 2, .health = true, .numa = 1, .memory = "16Gi"}),
                   gpuJson({.minor = 3, .health = true, .numa = 1, .memory = "16Gi"}),
                   rdmaJson(1, 0), rdmaJson(2, 1)});
}

}  // namespace

TEST_CASE("allocate: NUMA nodes preferred and required", "[scheduler][deviceshare]") {
  struct Case {
    std::string name;
    AllocateOptions options;
    Entries request;
    std::vector<int> minors;  // empty: refused
  };
  const std::vector<Case> cases{
      {"no preference: by minor", {}, {{"nvidia.com/gpu", "1"}}, {0}},
      {"preferred NUMA node 1 first",
       {.preferred_numa_nodes = 0b10},
       {{"nvidia.com/gpu", "1"}},
       {2}},
      {"preferred first, then the rest",
       {.preferred_numa_nodes = 0b10},
       {{"nvidia.com/gpu", "3"}},
       {2, 3, 0}},
      {"required NUMA node 1", {.numa_nodes = 0b10}, {{"nvidia.com/gpu", "2"}}, {2, 3}},
      {"required NUMA node 0 holds two cards only",
       {.numa_nodes = 0b01},
       {{"nvidia.com/gpu", "3"}},
       {}},
      {"required NUMA node 5 holds none",
       {.numa_nodes = 0b100000},
       {{"koordinator.sh/gpu", "10"}},
       {}},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    NodeDeviceState node = numaNode();
    apis::DeviceAllocations got;
    const Status status = allocateDevices(node, requestOf(c.request), c.options, got);
    CHECK(checkDevices(node, requestOf(c.request), c.options).code() == status.code());
    if (c.minors.empty()) {
      CHECK(status.message() == "Insufficient gpu devices");
    } else {
      REQUIRE(status.ok());
      CHECK(minorsOf(got, "gpu") == c.minors);
    }
  }

  SECTION("a device without a topology is on no NUMA node") {
    NodeDeviceState node = gpus(2);
    CHECK(checkDevices(node, requestOf({{"nvidia.com/gpu", "1"}}), {.numa_nodes = 0b1}).code() ==
          Code::kUnschedulable);
    CHECK(checkDevices(node, requestOf({{"nvidia.com/gpu", "1"}}), {}).ok());
  }
}

TEST_CASE("allocate: NUMA hints for NodeNUMAResource", "[scheduler][deviceshare]") {
  struct Case {
    std::string name;
    Entries request;
    std::vector<NumaHint> hints;
  };
  const std::vector<Case> cases{
      {"one card: either node alone is preferred",
       {{"nvidia.com/gpu", "1"}},
       {{0b01, true}, {0b10, true}, {0b11, false}}},
      {"two cards: each node holds two",
       {{"nvidia.com/gpu", "2"}},
       {{0b01, true}, {0b10, true}, {0b11, false}}},
      {"three cards need both nodes", {{"nvidia.com/gpu", "3"}}, {{0b11, true}}},
      {"a card and a NIC",
       {{"nvidia.com/gpu", "1"}, {"koordinator.sh/rdma", "1"}},
       {{0b01, true}, {0b10, true}, {0b11, false}}},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    NodeDeviceState node = numaNode();
    auto hints = numaHints(node, requestOf(c.request), {});
    REQUIRE(hints.has_value());
    CHECK(hints->hints == c.hints);
  }

  SECTION("the resources the hints are for") {
    NodeDeviceState node = numaNode();
    auto hints = numaHints(node, requestOf({{"koordinator.sh/gpu-memory-ratio", "50"}}), {});
    REQUIRE(hints.has_value());
    CHECK(hints->resources == std::vector<std::string_view>{"koordinator.sh/gpu-memory",
                                                            "koordinator.sh/gpu-memory-ratio"});
  }
  SECTION("node 0 full: only sets with node 1 fit") {
    NodeDeviceState node = numaNode();
    apis::DeviceAllocations full;
    REQUIRE(allocateDevices(node, requestOf({{"nvidia.com/gpu", "2"}}), {.numa_nodes = 0b01}, full)
                .ok());
    REQUIRE(node.addPod("ns/full", full));
    auto hints = numaHints(node, requestOf({{"nvidia.com/gpu", "1"}}), {});
    REQUIRE(hints.has_value());
    CHECK(hints->hints == std::vector<NumaHint>{{0b10, true}, {0b11, false}});
    // Enough cards on the node, none free enough: no set fits.
    auto none = numaHints(node, requestOf({{"nvidia.com/gpu", "3"}}), {});
    REQUIRE(none.has_value());
    CHECK(none->hints.empty());
  }
  SECTION("no preference") {
    // More cards than the node has: no set holds enough.
    CHECK_FALSE(numaHints(numaNode(), requestOf({{"nvidia.com/gpu", "5"}}), {}).has_value());
    // Devices without a topology.
    CHECK_FALSE(numaHints(gpus(2), requestOf({{"nvidia.com/gpu", "1"}}), {}).has_value());
  }
}

TEST_CASE("allocate: RDMA", "[scheduler][deviceshare]") {
  SECTION("shares of one NIC, then whole NICs") {
    NodeDeviceState node = nodeWith({rdmaJson(1, 0), rdmaJson(2, 1)});
    const DeviceScorer binpack =
        DeviceScorer{ScoringStrategyType::kMostAllocated, DeviceScorer::defaults().weights};
    runSteps(node, {.scorer = &binpack},
             {
                 {{{"koordinator.sh/rdma", "1"}}, {1}},
                 {{{"koordinator.sh/rdma", "1"}}, {1}},
                 {{{"koordinator.sh/rdma", "100"}}, {2}},
                 {{{"koordinator.sh/rdma", "98"}}, {1}},
                 {{{"koordinator.sh/rdma", "1"}}, {}, "Insufficient rdma devices"},
             },
             "rdma");
  }
  SECTION("two whole NICs") {
    NodeDeviceState node = nodeWith({rdmaJson(1, 0), rdmaJson(2, 1), rdmaJson(3, 1)});
    apis::DeviceAllocations got;
    REQUIRE(allocateDevices(node, requestOf({{"koordinator.sh/rdma", "200"}}), {}, got).ok());
    CHECK(apis::formatDeviceAllocations(got) ==
          R"({"rdma":[{"minor":1,"resources":{"koordinator.sh/rdma":"100"}},)"
          R"({"minor":2,"resources":{"koordinator.sh/rdma":"100"}}]})");
  }
  SECTION("with a virtual function each, lowest bus id first") {
    NodeDeviceState node = nodeWith({rdmaJson(1, 0, 2)});
    const PodDeviceHints hints =
        hintsOf(std::string(kAnyRdmaVF), "", requestOf({{"koordinator.sh/rdma", "1"}}));
    const AllocateOptions vf{.hints = &hints};
    apis::DeviceAllocations got;
    REQUIRE(allocateDevices(node, requestOf({{"koordinator.sh/rdma", "1"}}), vf, got).ok());
    CHECK(apis::formatDeviceAllocations(got) ==
          R"({"rdma":[{"minor":1,"resources":{"koordinator.sh/rdma":"1"},)"
          R"("extension":{"vfs":[{"busID":"0000:1f:00.0"}]}}]})");
    REQUIRE(node.addPod("ns/a", got));
    REQUIRE(allocateDevices(node, requestOf({{"koordinator.sh/rdma", "1"}}), vf, got).ok());
    REQUIRE(got.at("rdma").at(0).vfs.size() == 1);
    CHECK(got.at("rdma")[0].vfs[0] == apis::VirtualFunction{1, "0000:1f:00.1"});
    REQUIRE(node.addPod("ns/b", got));
    // Both VFs taken: the NIC has rdma left but no VF.
    const Status status = allocateDevices(node, requestOf({{"koordinator.sh/rdma", "1"}}), vf, got);
    CHECK(status.message() == "Insufficient rdma devices");
    CHECK(checkDevices(node, requestOf({{"koordinator.sh/rdma", "1"}}), vf).code() ==
          Code::kUnschedulable);
    CHECK(checkDevices(node, requestOf({{"koordinator.sh/rdma", "1"}}), {}).ok());
  }
  SECTION("VFs wanted where no NIC has any") {
    NodeDeviceState node = nodeWith({rdmaJson(1, 0)});
    const PodDeviceHints hints =
        hintsOf(std::string(kAnyRdmaVF), "", requestOf({{"koordinator.sh/rdma", "1"}}));
    const Status status =
        checkDevices(node, requestOf({{"koordinator.sh/rdma", "1"}}), {.hints = &hints});
    CHECK(status.code() == Code::kUnschedulableAndUnresolvable);
    CHECK(status.message() == "Insufficient rdma VirtualFunctions");
  }
}

TEST_CASE("allocate: GPU, RDMA and FPGA together", "[scheduler][deviceshare]") {
  NodeDeviceState node = nodeWith(
      {gpuJson({.minor = 0, .health = true, .numa = 0, .memory = "16Gi"}), rdmaJson(1, 0),
       R"({"type":"fpga","minor":4,"health":true,"resources":{"koordinator.sh/fpga":"100"}})"});
  const PodDeviceRequests all = requestOf(
      {{"nvidia.com/gpu", "1"}, {"koordinator.sh/rdma", "50"}, {"koordinator.sh/fpga", "100"}});
  apis::DeviceAllocations got;
  REQUIRE(allocateDevices(node, all, {}, got).ok());
  CHECK(minorsOf(got, "gpu") == std::vector<int>{0});
  CHECK(minorsOf(got, "rdma") == std::vector<int>{1});
  CHECK(minorsOf(got, "fpga") == std::vector<int>{4});
  REQUIRE(node.addPod("ns/a", got));

  // The GPU is taken: the first type that does not fit is the reason, and nothing is given.
  const Status status = allocateDevices(node, all, {}, got);
  CHECK(status.message() == "Insufficient gpu devices");
  CHECK(got.empty());
}

TEST_CASE("allocate: what preempted pods hold counts as free", "[scheduler][deviceshare]") {
  NodeDeviceState node = gpus(1);
  apis::DeviceAllocations victim;
  REQUIRE(allocateDevices(node, requestOf({{"koordinator.sh/gpu", "60"}}), {}, victim).ok());
  REQUIRE(node.addPod("ns/victim", victim));
  const PodDeviceRequests whole = requestOf({{"nvidia.com/gpu", "1"}});
  CHECK(checkDevices(node, whole, {}).code() == Code::kUnschedulable);

  const ReleasedDevice released[] = {
      {.type = DeviceType::kGPU,
       .minor = 0,
       .resources = DeviceResources::fromList(victim.at("gpu")[0].resources)}};
  CHECK(checkDevices(node, whole, {.released = released}).ok());
  apis::DeviceAllocations got;
  CHECK(allocateDevices(node, whole, {.released = released}, got).ok());
  CHECK(minorsOf(got, "gpu") == std::vector<int>{0});
}

TEST_CASE("allocate: gpu.shared splits the request over that many cards",
          "[scheduler][deviceshare]") {
  NodeDeviceState node = gpus(3, "16Gi");
  apis::DeviceAllocations got;
  const PodDeviceRequests shared =
      requestOf({{"koordinator.sh/gpu.shared", "2"}, {"koordinator.sh/gpu-memory-ratio", "100"}});
  REQUIRE(allocateDevices(node, shared, {}, got).ok());
  CHECK(apis::formatDeviceAllocations(got) ==
        R"({"gpu":[{"minor":0,"resources":{"koordinator.sh/gpu-memory":"8Gi",)"
        R"("koordinator.sh/gpu-memory-ratio":"50"}},)"
        R"({"minor":1,"resources":{"koordinator.sh/gpu-memory":"8Gi",)"
        R"("koordinator.sh/gpu-memory-ratio":"50"}}]})");
  REQUIRE(node.addPod("ns/a", got));
  // Three shares of a card each at most 50 free on two cards and 100 on the third: no three cards
  // hold 60 each.
  const PodDeviceRequests three =
      requestOf({{"koordinator.sh/gpu.shared", "3"}, {"koordinator.sh/gpu-memory-ratio", "180"}});
  CHECK(allocateDevices(node, three, {}, got).message() == "Insufficient gpu devices");
  CHECK(checkDevices(node, three, {}).message() == "Insufficient gpu devices");
  const PodDeviceRequests gib =
      requestOf({{"koordinator.sh/gpu.shared", "3"}, {"koordinator.sh/gpu-memory", "24Gi"}});
  REQUIRE(allocateDevices(node, gib, {}, got).ok());
  CHECK(minorsOf(got, "gpu") == std::vector<int>{0, 1, 2});
  CHECK(got.at("gpu")[0].resources.at("koordinator.sh/gpu-memory-ratio").value() == 50);
}
