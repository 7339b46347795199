#include "plugins/deviceshare/node_device_state.h"

#include <catch2/catch.hpp>

#include "catch_expected.h"
#include "device_fixtures.h"
#include "koord/apis/device_allocation.h"

using namespace koord;
using namespace koord::roles::scheduler::deviceshare;
using namespace koord::roles::scheduler::deviceshare::testing;

namespace {

apis::DeviceAllocations gpuShare(int minor, const std::string& ratio, const std::string& memory) {
  apis::DeviceAllocations a;
  a["gpu"].push_back(
      apis::DeviceAllocation{.minor = minor,
                             .resources = resources({{"koordinator.sh/gpu-core", ratio},
                                                     {"koordinator.sh/gpu-memory-ratio", ratio},
                                                     {"koordinator.sh/gpu-memory", memory}}),
                             .vfs = {},
                             .gpu_shared_resource_template = {}});
  return a;
}

std::int64_t freeRatio(const NodeDeviceState& s, int minor) {
  return s.device(DeviceType::kGPU, minor)->free.get(DeviceResource::kGPUMemoryRatio);
}

}  // namespace

TEST_CASE("node devices: pods' allocations are counted and given back",
          "[scheduler][deviceshare]") {
  NodeDeviceState s = gpus(2);
  CHECK(s.hasDeviceObject());
  CHECK(s.summary(DeviceType::kGPU).devices_with_free == 2);
  CHECK(s.summary(DeviceType::kGPU).free_sum.get(DeviceResource::kGPUMemoryRatio) == 200);
  REQUIRE(s.gpuCardMemory() == std::optional<std::int64_t>(16LL << 30));

  REQUIRE(s.addPod("ns/a", gpuShare(0, "50", "8Gi")));
  CHECK(freeRatio(s, 0) == 50);
  CHECK(s.device(DeviceType::kGPU, 0)->free.get(DeviceResource::kGPUMemory) == 8LL << 30);
  CHECK(freeRatio(s, 1) == 100);
  CHECK(s.summary(DeviceType::kGPU).free_sum.get(DeviceResource::kGPUMemoryRatio) == 150);
  CHECK(s.summary(DeviceType::kGPU).max_free.get(DeviceResource::kGPUMemoryRatio) == 100);

  // The pod seen again (assumed at Reserve, then bound): counted once.
  CHECK_FALSE(s.addPod("ns/a", gpuShare(0, "50", "8Gi")));
  CHECK(freeRatio(s, 0) == 50);

  REQUIRE(s.addPod("ns/b", gpuShare(0, "50", "8Gi")));
  CHECK(freeRatio(s, 0) == 0);
  CHECK(s.summary(DeviceType::kGPU).devices_with_free == 1);
  REQUIRE(s.podAllocations("ns/b") != nullptr);
  CHECK(*s.podAllocations("ns/b") == gpuShare(0, "50", "8Gi"));

  REQUIRE(s.removePod("ns/a"));
  CHECK_FALSE(s.removePod("ns/a"));
  CHECK(s.podAllocations("ns/a") == nullptr);
  CHECK(freeRatio(s, 0) == 50);
  REQUIRE(s.removePod("ns/b"));
  CHECK(freeRatio(s, 0) == 100);
  CHECK(s.summary(DeviceType::kGPU).devices_with_free == 2);
}

TEST_CASE("node devices: over-allocation never makes free negative", "[scheduler][deviceshare]") {
  NodeDeviceState s = gpus(1);
  REQUIRE(s.addPod("ns/a", gpuShare(0, "100", "16Gi")));
  REQUIRE(s.addPod("ns/b", gpuShare(0, "100", "16Gi")));
  CHECK(freeRatio(s, 0) == 0);
  REQUIRE(s.removePod("ns/b"));
  // Used went from 200 to 100: still nothing free.
  CHECK(freeRatio(s, 0) == 0);
}

TEST_CASE("node devices: unhealthy devices offer nothing", "[scheduler][deviceshare]") {
  NodeDeviceState s =
      nodeWith({gpuJson({.minor = 0, .health = false, .numa = -1, .memory = "16Gi"}),
                gpuJson({.minor = 1, .health = true, .numa = -1, .memory = "32Gi"})});
  CHECK(s.device(DeviceType::kGPU, 0)->free.isZero());
  CHECK(s.summary(DeviceType::kGPU).devices_with_free == 1);
  // The card memory is the first healthy card's.
  CHECK(s.gpuCardMemory() == std::optional<std::int64_t>(32LL << 30));

  NodeDeviceState none =
      nodeWith({gpuJson({.minor = 0, .health = false, .numa = -1, .memory = "16Gi"})});
  CHECK_FALSE(none.gpuCardMemory().has_value());
  CHECK(none.devices(DeviceType::kGPU).size() == 1);
}

TEST_CASE("node devices: a Device update keeps the pods' holdings", "[scheduler][deviceshare]") {
  NodeDeviceState s = gpus(1);
  // A pod on a card the Device does not list yet: counted once the card appears.
  REQUIRE(s.addPod("ns/a", gpuShare(1, "50", "8Gi")));
  REQUIRE(s.addPod("ns/b", gpuShare(0, "30", "4Gi")));
  CHECK(s.device(DeviceType::kGPU, 1) == nullptr);

  s.setDevices(readNodeDevices(
      decode(deviceJson({gpuJson({.minor = 0, .health = true, .numa = -1, .memory = "16Gi"}),
                         gpuJson({.minor = 1, .health = true, .numa = -1, .memory = "16Gi"})}))));
  CHECK(freeRatio(s, 0) == 70);
  CHECK(freeRatio(s, 1) == 50);

  // The Device deleted: every card unhealthy, the pods still counted.
  s.markAllUnhealthy();
  CHECK(s.summary(DeviceType::kGPU).devices_with_free == 0);
  CHECK_FALSE(s.gpuCardMemory().has_value());
  CHECK(s.podAllocations("ns/a") != nullptr);
}

TEST_CASE("node devices: deprecated names in an annotation count", "[scheduler][deviceshare]") {
  NodeDeviceState s = gpus(1);
  apis::DeviceAllocations a;
  a["gpu"].push_back(
      apis::DeviceAllocation{.minor = 0,
                             .resources = resources({{"kubernetes.io/gpu-core", "40"},
                                                     {"kubernetes.io/gpu-memory-ratio", "40"},
                                                     {"kubernetes.io/gpu-memory", "4Gi"}}),
                             .vfs = {},
                             .gpu_shared_resource_template = {}});
  a["npu"].push_back(apis::DeviceAllocation{
      .minor = 0, .resources = {}, .vfs = {}, .gpu_shared_resource_template = {}});
  REQUIRE(s.addPod("ns/a", a));
  CHECK(freeRatio(s, 0) == 60);
}

TEST_CASE("node devices: RDMA virtual functions held by pods", "[scheduler][deviceshare]") {
  NodeDeviceState s = nodeWith({rdmaJson(1, 0, 2)});
  const DeviceState* nic = s.device(DeviceType::kRDMA, 1);
  REQUIRE(nic != nullptr);
  CHECK(nic->free_vfs == 2);

  apis::DeviceAllocations a;
  a["rdma"].push_back(
      apis::DeviceAllocation{.minor = 1,
                             .resources = resources({{"koordinator.sh/rdma", "1"}}),
                             .vfs = {apis::VirtualFunction{.minor = 0, .bus_id = "0000:1f:00.0"},
                                     apis::VirtualFunction{.minor = 9, .bus_id = "no-such-vf"}},
                             .gpu_shared_resource_template = {}});
  REQUIRE(s.addPod("ns/a", a));
  nic = s.device(DeviceType::kRDMA, 1);
  CHECK(nic->free_vfs == 1);
  CHECK(nic->vf_holders[0] == 1);
  CHECK(nic->free.get(DeviceResource::kRDMA) == 99);
  REQUIRE(s.removePod("ns/a"));
  CHECK(s.device(DeviceType::kRDMA, 1)->free_vfs == 2);
}

TEST_CASE("node devices: NUMA nodes of the devices", "[scheduler][deviceshare]") {
  NodeDeviceState s = nodeWith({gpuJson({.minor = 0, .health = true, .numa = 0, .memory = "16Gi"}),
                                gpuJson({.minor = 1, .health = false, .numa = 3, .memory = "16Gi"}),
                                rdmaJson(1, 1)});
  CHECK(s.summary(DeviceType::kGPU).numa_nodes == 0b1001);
  CHECK(s.summary(DeviceType::kRDMA).numa_nodes == 0b0010);
  CHECK(s.numaNodes() == 0b1011);
  NodeDeviceState empty;
  CHECK_FALSE(empty.hasDeviceObject());
}
