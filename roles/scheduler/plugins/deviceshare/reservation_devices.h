// The devices reservations hold on a node, as a pod matched to them may take them: Koordinator's
// DeviceShare reservation restore (what is left of each, and Restricted's bound).
#pragma once

#include <cstdint>
#include <vector>

#include "framework/reservation_info.h"
#include "framework/reservation_nomination.h"
#include "koord/apis/device_allocation.h"
#include "plugins/deviceshare/allocator.h"
#include "plugins/deviceshare/node_device_state.h"

namespace koord::roles::scheduler::deviceshare {

/// Adds what `held` lists to `released` (give_back) or takes it out of it (never below zero; a
/// device with nothing left drops out).
void moveReleased(std::vector<ReleasedDevice>& released, const apis::DeviceAllocations& held,
                  bool give_back);

/// One matched reservation holding devices on the node.
struct ReservedDevices {
  const ReservationInfo* reservation = nullptr;
  /// What it holds per device. Its owner pods' devices are counted on the devices besides, so
  /// freeing the whole hold leaves free exactly what no owner took of it.
  std::vector<ReleasedDevice> held;
  /// The device types it holds (bit per DeviceType).
  std::uint8_t types = 0;
  /// allocatePolicy Restricted: those types come from `held` alone.
  bool restricted = false;
};

/// Of `matched`, those holding devices in `node` (counted under the reservation's UID), in the
/// same order. Called under the node's lock.
std::vector<ReservedDevices> reservedDevicesOf(const ReservationMatches::List& matched,
                                               const NodeDeviceState& node);

/// `base` (preemption's released devices) with the reservation's hold free too and, for a
/// Restricted one, its types limited to it. `released` keeps the merged list alive.
AllocateOptions withReservation(const AllocateOptions& base, const ReservedDevices& reserved,
                                std::vector<ReleasedDevice>& released);

}  // namespace koord::roles::scheduler::deviceshare
