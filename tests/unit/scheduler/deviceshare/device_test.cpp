#include "plugins/deviceshare/device.h"

#include <boost/json.hpp>

#include <catch2/catch.hpp>

#include <string>

#include "catch_expected.h"
#include "device_fixtures.h"
#include "koord/apis/device.h"

using namespace koord;
using namespace koord::roles::scheduler::deviceshare;
using namespace koord::roles::scheduler::deviceshare::testing;

namespace {

kube::Quantity q(std::string_view text) {
  return kube::Quantity::parse(text).value();
}

// Two devices of Koordinator's own test Device (device_allocator_test.go), VFs shortened.
constexpr std::string_view kKoordinatorDevice =
    R"({"metadata":{"name":"test-node-1","creationTimestamp":null,"annotations":{}},"spec":{"devices":[)"
    R"({"type":"rdma","labels":{"type":"fakeW"},"id":"0000:1f:00.0","minor":1,"health":true,)"
    R"("resources":{"koordinator.sh/rdma":"100"},"topology":{"socketID":0,"nodeID":0,"pcieID":"0"},)"
    R"("vfGroups":[{"labels":{"type":"general"},"vfs":[{"minor":0,"busID":"0000:1f:00.2"},)"
    R"({"minor":1,"busID":"0000:1f:00.3"}]}]},)"
    R"({"type":"gpu","id":"GPU-8c25ea37-2909-6e62-b7bf-e2fcadebea8d","minor":0,"health":true,)"
    R"("resources":{"koordinator.sh/gpu-core":"100","koordinator.sh/gpu-memory":"83201216Ki",)"
    R"("koordinator.sh/gpu-memory-ratio":"100"},"topology":{"socketID":0,"nodeID":0,"pcieID":"0"}}]},)"
    R"("status":{}})";

}  // namespace

TEST_CASE("Device: Koordinator's Device object reads", "[scheduler][deviceshare]") {
  auto device = apis::decodeDevice(boost::json::parse(kKoordinatorDevice));
  REQUIRE(device.has_value());
  CHECK(device->name == "test-node-1");
  REQUIRE(device->devices.size() == 2);

  const apis::DeviceInfo& rdma = device->devices[0];
  CHECK(rdma.type == "rdma");
  CHECK(rdma.uuid == "0000:1f:00.0");
  CHECK(rdma.minor == 1);
  CHECK(rdma.health);
  CHECK(rdma.labels.at("type") == "fakeW");
  CHECK(rdma.resources.at("koordinator.sh/rdma") == q("100"));
  REQUIRE(rdma.topology.has_value());
  CHECK(rdma.topology->pcie_id == "0");
  REQUIRE(rdma.vf_groups.size() == 1);
  CHECK(rdma.vf_groups[0].labels.at("type") == "general");
  CHECK(rdma.vf_groups[0].vfs.at(1) == apis::DeviceVirtualFunction{1, "0000:1f:00.3"});

  const apis::DeviceInfo& gpu = device->devices[1];
  CHECK(gpu.resources.at("koordinator.sh/gpu-memory") == q("83201216Ki"));
  CHECK_FALSE(gpu.module_id.has_value());
}

TEST_CASE("Device: deprecated kubernetes.io/ names move to koordinator.sh/",
          "[scheduler][deviceshare]") {
  auto device = apis::decodeDevice(boost::json::parse(deviceJson(
      {R"({"type":"gpu","minor":0,"health":true,"resources":{"kubernetes.io/gpu-core":"100",)"
       R"("kubernetes.io/gpu-memory":"8Gi","kubernetes.io/gpu-memory-ratio":"100"}})",
       R"({"type":"fpga","minor":0,"health":true,"resources":{"kubernetes.io/fpga":"100",)"
       R"("koordinator.sh/fpga":"50"}})"})));
  REQUIRE(device.has_value());
  CHECK(device->devices[0].resources == resources({{"koordinator.sh/gpu-core", "100"},
                                                   {"koordinator.sh/gpu-memory", "8Gi"},
                                                   {"koordinator.sh/gpu-memory-ratio", "100"}}));
  // Where the new name is there already, the old one stays as it is (Koordinator's transformer).
  CHECK(device->devices[1].resources ==
        resources({{"kubernetes.io/fpga", "100"}, {"koordinator.sh/fpga", "50"}}));
}

TEST_CASE("Device: malformed objects are refused naming the member", "[scheduler][deviceshare]") {
  struct Case {
    std::string json;
    std::string error;
  };
  std::string too_many;
  for (std::size_t i = 0; i <= apis::kMaxDevicesPerNode; ++i)
    too_many += std::string(i == 0 ? "" : ",") + R"({"type":"gpu"})";
  const std::vector<Case> cases{
      {"[]", "Device: expected object, got array"},
      {deviceJson({R"({"type":"gpu","minor":"0"})"}),
       "spec.devices[0].minor: expected integer, got string"},
      {deviceJson({R"({"type":"gpu","minor":0})", R"({"type":"gpu","minor":2147483648})"}),
       "spec.devices[1].minor"},
      {deviceJson({R"({"type":"gpu","health":"yes"})"}), "spec.devices[0].health"},
      {deviceJson({R"({"type":"gpu","resources":{"koordinator.sh/gpu-core":"x"}})"}),
       "spec.devices[0].resources[koordinator.sh/gpu-core]"},
      {deviceJson({R"({"type":"gpu","topology":{"nodeID":"0"}})"}),
       "spec.devices[0].topology.nodeID"},
      {deviceJson({R"({"type":"rdma","vfGroups":[{"vfs":[{"busID":1}]}]})"}),
       "spec.devices[0].vfGroups[0].vfs[0].busID"},
      {deviceJson({too_many}), "spec.devices"},
  };
  for (const Case& c : cases) {
    INFO(c.json.substr(0, 200));
    auto device = apis::decodeDevice(boost::json::parse(c.json));
    REQUIRE_FALSE(device.has_value());
    CHECK_THAT(device.error().message, Catch::Contains(c.error));
  }
}

TEST_CASE("Device: the scheduler's view by type and minor", "[scheduler][deviceshare]") {
  const NodeDevices devices = readNodeDevices(decode(deviceJson({
      gpuJson({.minor = 1, .health = true, .numa = 1, .memory = "16Gi"}),
      gpuJson({.minor = 0, .health = false, .numa = 0, .memory = "16Gi"}),
      rdmaJson(3, 0, 3),
      R"({"type":"xpu","minor":0,"health":true})",
      R"({"type":"gpu","health":true,"resources":{"koordinator.sh/gpu-core":"100"}})",
      R"({"type":"fpga","minor":0,"health":true,"resources":{"koordinator.sh/fpga":"100"},)"
      R"("topology":{"socketID":0,"nodeID":64}})",
  })));

  const auto& gpu = devices.of(DeviceType::kGPU);
  REQUIRE(gpu.size() == 2);
  // Sorted by minor; an unhealthy device offers nothing.
  CHECK(gpu[0].minor == 0);
  CHECK_FALSE(gpu[0].healthy);
  CHECK(gpu[0].total.isZero());
  CHECK(gpu[0].numa_node == 0);
  CHECK(gpu[1].minor == 1);
  CHECK(gpu[1].total.get(DeviceResource::kGPUMemory) == 16LL << 30);
  CHECK(gpu[1].total.get(DeviceResource::kGPUMemoryRatio) == 100);
  CHECK(gpu[1].numa_node == 1);

  const auto& rdma = devices.of(DeviceType::kRDMA);
  REQUIRE(rdma.size() == 1);
  REQUIRE(rdma[0].vfs.size() == 3);
  CHECK(rdma[0].vfs[0] == DeviceVF{0, "0000:3f:00.0"});
  CHECK(rdma[0].vfs[2] == DeviceVF{2, "0000:3f:00.2"});

  // A NUMA node past the mask's range counts as no topology.
  REQUIRE(devices.of(DeviceType::kFPGA).size() == 1);
  CHECK(devices.of(DeviceType::kFPGA)[0].numa_node == -1);

  REQUIRE(devices.skipped.size() == 2);
  CHECK_THAT(devices.skipped[0], Catch::Contains("spec.devices[3]") && Catch::Contains("xpu"));
  CHECK_THAT(devices.skipped[1], Catch::Contains("spec.devices[4]: no minor"));
}

TEST_CASE("Device: a minor named twice keeps the later device", "[scheduler][deviceshare]") {
  const NodeDevices devices = readNodeDevices(decode(deviceJson({
      gpuJson({.minor = 0, .health = true, .numa = -1, .memory = "16Gi"}),
      gpuJson({.minor = 0, .health = true, .numa = -1, .memory = "32Gi"}),
  })));
  REQUIRE(devices.of(DeviceType::kGPU).size() == 1);
  CHECK(devices.of(DeviceType::kGPU)[0].total.get(DeviceResource::kGPUMemory) == 32LL << 30);
  REQUIRE(devices.skipped.size() == 1);
  CHECK_THAT(devices.skipped[0], Catch::Contains("named again"));
}
