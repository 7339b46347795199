// The allocator under a pod's device-allocate-hint and device-joint-allocate, on Device objects
// written as the koordlet writes them.
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "catch_expected.h"
#include "device_fixtures.h"
#include "koord/apis/device_allocation.h"
#include "plugins/deviceshare/allocator.h"
#include "plugins/deviceshare/scoring.h"

using namespace koord;
using namespace koord::roles::scheduler;
using namespace koord::roles::scheduler::deviceshare;
using namespace koord::roles::scheduler::deviceshare::testing;

namespace {

// `device` (one of the fixtures' JSON objects) with metadata labels.
std::string labelled(const std::string& device, const std::string& labels) {
  return "{\"labels\":" + labels + "," + device.substr(1);
}

// An RDMA NIC on switch pci<pcie> with a "general" group of two VFs and a "special" group of
// one.
std::string nicWithGroups(int minor, int pcie) {
  return fmt::format(
      R"({{"type":"rdma","id":"nic-{0}","minor":{0},"health":true,)"
      R"("resources":{{"koordinator.sh/rdma":"100"}},)"
      R"("topology":{{"socketID":0,"nodeID":{1},"pcieID":"pci{1}"}},"vfGroups":[)"
      R"({{"labels":{{"type":"general"}},"vfs":[{{"minor":1,"busID":"0000:{0}f:00.2"}},)"
      R"({{"minor":0,"busID":"0000:{0}f:00.1"}}]}},)"
      R"({{"labels":{{"type":"special"}},"vfs":[{{"minor":2,"busID":"0000:{0}f:00.3"}}]}}]}})",
      minor, pcie);
}

std::vector<int> minorsOf(const apis::DeviceAllocations& a, std::string_view type) {
  std::vector<int> out;
  if (auto it = a.find(type); it != a.end()) {
    for (const auto& d : it->second)
      out.push_back(d.minor);
  }
  return out;
}

struct Placed {
  Status status;
  apis::DeviceAllocations devices;
};

Placed place(NodeDeviceState& node, const PodDeviceRequests& requests, const std::string& hint,
             const std::string& joint = "") {
  const PodDeviceHints hints = hintsOf(hint, joint, requests);
  Placed out;
  out.status = allocateDevices(node, requests, {.hints = &hints}, out.devices);
  // Filter agrees with Reserve.
  CHECK(checkDevices(node, requests, {.hints = &hints}).ok() == out.status.ok());
  return out;
}

}  // namespace

TEST_CASE("device hints: selector picks devices by their labels", "[scheduler][deviceshare]") {
  NodeDeviceState node =
      nodeWith({labelled(gpuJson({.minor = 0}), R"({"model":"T4"})"),
                labelled(gpuJson({.minor = 1}), R"({"model":"A100"})"), gpuJson({.minor = 2})});
  const auto one = podRequests({{"nvidia.com/gpu", "1"}});
  auto a100 = place(node, one, R"({"gpu":{"selector":{"matchLabels":{"model":"A100"}}}})");
  REQUIRE(a100.status.ok());
  CHECK(minorsOf(a100.devices, "gpu") == std::vector<int>{1});
  REQUIRE(node.addPod("ns/a", a100.devices));
  // The only A100 is taken: the others do not qualify.
  auto again = place(node, one, R"({"gpu":{"selector":{"matchLabels":{"model":"A100"}}}})");
  CHECK(again.status.message() == "Insufficient gpu devices");
  CHECK(again.devices.empty());
  auto other = place(node, one,
                     R"({"gpu":{"selector":{"matchExpressions":[{"key":"model","operator":)"
                     R"("NotIn","values":["A100"]}]}}})");
  REQUIRE(other.status.ok());
  CHECK(minorsOf(other.devices, "gpu") == std::vector<int>{0});
}

TEST_CASE("device hints: Score counts only the devices the selector picks",
          "[scheduler][deviceshare]") {
  // Two nodes alike in their A100 (free) and unlike in their T4 (taken on one): under spread
  // the pod bound for the A100 scores them alike, as Koordinator's filterNodeDevice leaves the
  // T4 out of the sums.
  const auto half = podRequests({{"koordinator.sh/gpu-memory-ratio", "50"}});
  NodeDeviceState idle = nodeWith({labelled(gpuJson({.minor = 0}), R"({"model":"T4"})"),
                                   labelled(gpuJson({.minor = 1}), R"({"model":"A100"})")});
  NodeDeviceState busy = nodeWith({labelled(gpuJson({.minor = 0}), R"({"model":"T4"})"),
                                   labelled(gpuJson({.minor = 1}), R"({"model":"A100"})")});
  apis::DeviceAllocations t4;
  REQUIRE(allocateDevices(busy, podRequests({{"nvidia.com/gpu", "1"}}), {}, t4).ok());
  REQUIRE(minorsOf(t4, "gpu") == std::vector<int>{0});
  REQUIRE(busy.addPod("ns/t4", t4));
  const DeviceScorer spread = DeviceScorer::defaults();
  const PodDeviceHints a100 =
      hintsOf(R"({"gpu":{"selector":{"matchLabels":{"model":"A100"}}}})", "", half);
  std::int64_t idle_score = 0;
  std::int64_t busy_score = 0;
  REQUIRE(scoreNode(idle, half, spread, {.hints = &a100}, idle_score).ok());
  REQUIRE(scoreNode(busy, half, spread, {.hints = &a100}, busy_score).ok());
  CHECK(idle_score > 0);
  CHECK(busy_score == idle_score);
  // Without the hint the taken T4 counts, and spread prefers the idle node.
  REQUIRE(scoreNode(idle, half, spread, {}, idle_score).ok());
  REQUIRE(scoreNode(busy, half, spread, {}, busy_score).ok());
  CHECK(busy_score < idle_score);
}

TEST_CASE("device hints: ApplyForAll and RequestsAsCount", "[scheduler][deviceshare]") {
  SECTION("ApplyForAll takes every NIC, or every NIC the selector matches") {
    NodeDeviceState node = nodeWith({labelled(rdmaJson(1, 0), R"({"net":"a"})"),
                                     labelled(rdmaJson(2, 0), R"({"net":"a"})"), rdmaJson(3, 1)});
    const auto one = podRequests({{"koordinator.sh/rdma", "1"}});
    auto all = place(node, one, R"({"rdma":{"allocateStrategy":"ApplyForAll"}})");
    REQUIRE(all.status.ok());
    CHECK(apis::formatDeviceAllocations(all.devices) ==
          R"({"rdma":[{"minor":1,"resources":{"koordinator.sh/rdma":"1"}},)"
          R"({"minor":2,"resources":{"koordinator.sh/rdma":"1"}},)"
          R"({"minor":3,"resources":{"koordinator.sh/rdma":"1"}}]})");
    auto net_a = place(node, one,
                       R"({"rdma":{"allocateStrategy":"ApplyForAll",)"
                       R"("selector":{"matchLabels":{"net":"a"}}}})");
    REQUIRE(net_a.status.ok());
    CHECK(minorsOf(net_a.devices, "rdma") == std::vector<int>{1, 2});
    auto none = place(node, one,
                      R"({"rdma":{"allocateStrategy":"ApplyForAll",)"
                      R"("selector":{"matchLabels":{"net":"b"}}}})");
    CHECK(none.status.code() == Code::kUnschedulableAndUnresolvable);
    CHECK(none.status.message() == "Insufficient rdma devices");
  }
  SECTION("RequestsAsCount: the amount is a count of devices, whole ones under DeviceLevel") {
    NodeDeviceState node = nodeWith({rdmaJson(1, 0), rdmaJson(2, 0), rdmaJson(3, 1)});
    const auto two = podRequests({{"koordinator.sh/rdma", "2"}});
    auto shared = place(node, two, R"({"rdma":{"allocateStrategy":"RequestsAsCount"}})");
    REQUIRE(shared.status.ok());
    CHECK(apis::formatDeviceAllocations(shared.devices) ==
          R"({"rdma":[{"minor":1,"resources":{"koordinator.sh/rdma":"1"}},)"
          R"({"minor":2,"resources":{"koordinator.sh/rdma":"1"}}]})");
    REQUIRE(node.addPod("ns/shared", shared.devices));
    const std::string exclusive =
        R"({"rdma":{"allocateStrategy":"RequestsAsCount","exclusivePolicy":"DeviceLevel"}})";
    auto whole = place(node, podRequests({{"koordinator.sh/rdma", "1"}}), exclusive);
    REQUIRE(whole.status.ok());
    CHECK(apis::formatDeviceAllocations(whole.devices) ==
          R"({"rdma":[{"minor":3,"resources":{"koordinator.sh/rdma":"100"}}]})");
    REQUIRE(node.addPod("ns/whole", whole.devices));
    // Two whole NICs wanted, none left whole.
    CHECK(place(node, two, exclusive).status.message() == "Insufficient rdma devices");
  }
}

TEST_CASE("device hints: PCIeLevel exclusivity skips switches in use", "[scheduler][deviceshare]") {
  // NICs 1 and 2 share switch pci0; NIC 3 is alone on pci1.
  NodeDeviceState node = nodeWith({rdmaJson(1, 0), rdmaJson(2, 0), rdmaJson(3, 1)});
  const auto one = podRequests({{"koordinator.sh/rdma", "1"}});
  apis::DeviceAllocations first;
  REQUIRE(allocateDevices(node, one, {}, first).ok());
  REQUIRE(minorsOf(first, "rdma") == std::vector<int>{1});
  REQUIRE(node.addPod("ns/a", first));
  const std::string pcie = R"({"rdma":{"exclusivePolicy":"PCIeLevel"}})";
  auto apart = place(node, one, pcie);
  REQUIRE(apart.status.ok());
  CHECK(minorsOf(apart.devices, "rdma") == std::vector<int>{3});
  REQUIRE(node.addPod("ns/b", apart.devices));
  CHECK(place(node, one, pcie).status.message() == "Insufficient rdma devices");
  // Without the policy NIC 2 still serves.
  CHECK(allocateDevices(node, one, {}, first).ok());
}

TEST_CASE("device hints: vfSelector picks VFs from matching groups", "[scheduler][deviceshare]") {
  NodeDeviceState node = nodeWith({nicWithGroups(1, 0)});
  const auto one = podRequests({{"koordinator.sh/rdma", "1"}});
  const std::string special = R"({"rdma":{"vfSelector":{"matchLabels":{"type":"special"}}}})";
  auto got = place(node, one, special);
  REQUIRE(got.status.ok());
  REQUIRE(got.devices.at("rdma").size() == 1);
  CHECK(got.devices.at("rdma")[0].vfs == std::vector<apis::VirtualFunction>{{2, "0000:1f:00.3"}});
  REQUIRE(node.addPod("ns/a", got.devices));
  // The special group's one VF is taken; the general group's lowest bus id still serves.
  CHECK(place(node, one, special).status.message() == "Insufficient rdma devices");
  auto general = place(node, one, R"({"rdma":{"vfSelector":{"matchLabels":{"type":"general"}}}})");
  REQUIRE(general.status.ok());
  CHECK(general.devices.at("rdma")[0].vfs ==
        std::vector<apis::VirtualFunction>{{0, "0000:1f:00.1"}});
  // A GPU hint with a vfSelector where no GPU has VFs.
  NodeDeviceState gpus_only = gpus(1);
  auto refused =
      place(gpus_only, podRequests({{"nvidia.com/gpu", "1"}}), R"({"gpu":{"vfSelector":{}}})");
  CHECK(refused.status.code() == Code::kUnschedulableAndUnresolvable);
  CHECK(refused.status.message() == "Insufficient gpu VirtualFunctions");
}

TEST_CASE("device hints: GPUs and NICs jointly on one PCIe switch", "[scheduler][deviceshare]") {
  const std::string gpu_rdma = R"({"deviceTypes":["gpu","rdma"],"requiredScope":"SamePCIe"})";
  const std::string vf = R"({"rdma":{"vfSelector":{}}})";
  SECTION("a switch with room takes the whole pod, the next pod another switch") {
    // GPUs 0 and 1 on pci0 with NIC 1, GPUs 2 and 3 on pci1 with NIC 2.
    NodeDeviceState node =
        nodeWith({gpuJson({.minor = 0, .numa = 0}), gpuJson({.minor = 1, .numa = 0}),
                  gpuJson({.minor = 2, .numa = 1}), gpuJson({.minor = 3, .numa = 1}),
                  rdmaJson(1, 0, 2), rdmaJson(2, 1, 2)});
    const auto two_gpus = podRequests({{"nvidia.com/gpu", "2"}, {"koordinator.sh/rdma", "1"}});
    auto a = place(node, two_gpus, vf, gpu_rdma);
    REQUIRE(a.status.ok());
    CHECK(minorsOf(a.devices, "gpu") == std::vector<int>{0, 1});
    CHECK(minorsOf(a.devices, "rdma") == std::vector<int>{1});
    REQUIRE(node.addPod("ns/a", a.devices));
    auto b = place(node, two_gpus, vf, gpu_rdma);
    REQUIRE(b.status.ok());
    CHECK(minorsOf(b.devices, "gpu") == std::vector<int>{2, 3});
    CHECK(minorsOf(b.devices, "rdma") == std::vector<int>{2});
  }
  SECTION("GPUs across switches take a NIC on each") {
    NodeDeviceState node =
        nodeWith({gpuJson({.minor = 0, .numa = 0}), gpuJson({.minor = 1, .numa = 1}),
                  rdmaJson(1, 0), rdmaJson(2, 1)});
    auto got = place(node, podRequests({{"nvidia.com/gpu", "2"}, {"koordinator.sh/rdma", "1"}}), "",
                     gpu_rdma);
    REQUIRE(got.status.ok());
    CHECK(minorsOf(got.devices, "gpu") == std::vector<int>{0, 1});
    CHECK(minorsOf(got.devices, "rdma") == std::vector<int>{1, 2});
  }
  SECTION("NICs only beside one of the GPUs' switches") {
    NodeDeviceState node =
        nodeWith({gpuJson({.minor = 0, .numa = 0}), gpuJson({.minor = 1, .numa = 1}),
                  rdmaJson(1, 0), rdmaJson(2, 0)});
    const auto pod = podRequests({{"nvidia.com/gpu", "2"}, {"koordinator.sh/rdma", "1"}});
    auto refused = place(node, pod, "", gpu_rdma);
    CHECK(refused.status.code() == Code::kUnschedulable);
    CHECK(refused.status.message() == "node(s) Device Joint-Allocate rules violation");
    CHECK(refused.devices.empty());
    // Without SamePCIe the pod still gets devices, the GPUs' switches first.
    auto loose = place(node, pod, "", R"({"deviceTypes":["gpu","rdma"]})");
    REQUIRE(loose.status.ok());
    CHECK(minorsOf(loose.devices, "gpu") == std::vector<int>{0, 1});
    CHECK(minorsOf(loose.devices, "rdma") == std::vector<int>{1, 2});
  }
  SECTION("one NIC for two switches") {
    NodeDeviceState node = nodeWith(
        {gpuJson({.minor = 0, .numa = 0}), gpuJson({.minor = 1, .numa = 1}), rdmaJson(1, 0)});
    auto refused = place(node, podRequests({{"nvidia.com/gpu", "2"}, {"koordinator.sh/rdma", "1"}}),
                         "", gpu_rdma);
    CHECK(refused.status.message() == "node(s) Joint-Allocate rules not met");
  }
}
