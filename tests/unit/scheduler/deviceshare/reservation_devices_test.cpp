// A reservation's devices as its owner pods may take them: its hold freed for them (what its
// owners took stays counted on the device), its devices taken first, and a Restricted
// reservation's device types only from its hold.
#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <vector>

#include "device_fixtures.h"
#include "plugins/deviceshare/reservation_devices.h"

namespace koord::roles::scheduler::deviceshare {
namespace {

using testing::gpus;
using testing::podRequests;
using testing::resources;

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

std::shared_ptr<const ReservationInfo> reservation(const std::string& uid, bool restricted) {
  auto object = std::make_shared<apis::Reservation>();
  object->uid = uid;
  if (restricted)
    object->allocate_policy = apis::ReservationAllocatePolicy::kRestricted;
  auto r = std::make_shared<ReservationInfo>();
  r->object = object;
  r->uid = uid;
  return r;
}

// The card the request was given; -1 when refused.
int placed(const NodeDeviceState& node, int ratio, const AllocateOptions& options) {
  apis::DeviceAllocations out;
  const auto request = podRequests({{"koordinator.sh/gpu-memory-ratio", std::to_string(ratio)}});
  if (!allocateDevices(node, request, options, out).ok())
    return -1;
  REQUIRE(out["gpu"].size() == 1);
  return out["gpu"][0].minor;
}

}  // namespace

TEST_CASE("reservation devices: its hold is freed for its owners, its card first",
          "[scheduler][deviceshare][reservation]") {
  // Two cards; the reservation holds card 1 whole and one owner took half of it.
  NodeDeviceState node = gpus(2);
  REQUIRE(node.addPod("uid-r1", gpuShare(1, "100", "16Gi")));
  REQUIRE(node.addPod("uid-owner", gpuShare(1, "50", "8Gi")));
  const ReservationMatches::List matched{reservation("uid-r1", false),
                                         reservation("uid-r2", false)};
  const auto reserved = reservedDevicesOf(matched, node);
  // r2 holds nothing here: it is left out.
  REQUIRE(reserved.size() == 1);
  CHECK(reserved[0].reservation == matched[0].get());
  CHECK(reserved[0].types == 1u << static_cast<unsigned>(DeviceType::kGPU));
  CHECK_FALSE(reserved[0].restricted);

  const AllocateOptions plain;
  std::vector<ReleasedDevice> released;
  const AllocateOptions within = withReservation(plain, reserved[0], released);
  // Without the reservation card 1 is full; with it half of card 1 is left, and taken first.
  CHECK(placed(node, 50, plain) == 0);
  CHECK(placed(node, 50, within) == 1);
  // More than is left of it: the other card.
  CHECK(placed(node, 100, within) == 0);
}

TEST_CASE("reservation devices: a Restricted reservation's types come from its hold alone",
          "[scheduler][deviceshare][reservation]") {
  NodeDeviceState node = gpus(2);
  REQUIRE(node.addPod("uid-r1", gpuShare(1, "100", "16Gi")));
  REQUIRE(node.addPod("uid-owner", gpuShare(1, "50", "8Gi")));
  const auto reserved = reservedDevicesOf({reservation("uid-r1", true)}, node);
  REQUIRE(reserved.size() == 1);
  CHECK(reserved[0].restricted);
  std::vector<ReleasedDevice> released;
  const AllocateOptions within = withReservation(AllocateOptions{}, reserved[0], released);
  CHECK(placed(node, 50, within) == 1);
  // Card 0 is empty, but not the reservation's.
  CHECK(placed(node, 100, within) == -1);
  CHECK_FALSE(
      checkDevices(node, podRequests({{"koordinator.sh/gpu-memory-ratio", "100"}}), within).ok());
}

}  // namespace koord::roles::scheduler::deviceshare
