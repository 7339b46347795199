#include "plugins/deviceshare/reservation_devices.h"

#include <algorithm>

#include "koord/apis/reservation.h"

namespace koord::roles::scheduler::deviceshare {

void moveReleased(std::vector<ReleasedDevice>& released, const apis::DeviceAllocations& held,
                  bool give_back) {
  for (const auto& [type_name, items] : held) {
    const std::optional<DeviceType> type = parseDeviceType(type_name);
    if (!type)
      continue;
    for (const apis::DeviceAllocation& a : items) {
      kube::ResourceList list = a.resources;
      apis::replaceDeprecatedDeviceResources(list);
      const DeviceResources amount = DeviceResources::fromList(list);
      auto it = std::find_if(released.begin(), released.end(), [&](const ReleasedDevice& r) {
        return r.type == *type && r.minor == a.minor;
      });
      if (give_back) {
        if (it == released.end())
          released.push_back({.type = *type, .minor = a.minor, .resources = amount});
        else
          it->resources.add(amount);
      } else if (it != released.end()) {
        it->resources.subtractNonNegative(amount);
        if (it->resources.isZero())
          released.erase(it);
      }
    }
  }
}

std::vector<ReservedDevices> reservedDevicesOf(const ReservationMatches::List& matched,
                                               const NodeDeviceState& node) {
  std::vector<ReservedDevices> out;
  for (const auto& r : matched) {
    const apis::DeviceAllocations* held = node.podAllocations(r->uid);
    if (held == nullptr || held->empty())
      continue;
    ReservedDevices entry;
    entry.reservation = r.get();
    moveReleased(entry.held, *held, true);
    for (const ReleasedDevice& d : entry.held)
      entry.types |= static_cast<std::uint8_t>(1u << static_cast<unsigned>(d.type));
    entry.restricted = r->object != nullptr &&
                       r->object->allocate_policy == apis::ReservationAllocatePolicy::kRestricted;
    out.push_back(std::move(entry));
  }
  return out;
}

AllocateOptions withReservation(const AllocateOptions& base, const ReservedDevices& reserved,
                                std::vector<ReleasedDevice>& released) {
  released.assign(base.released.begin(), base.released.end());
  for (const ReleasedDevice& d : reserved.held) {
    auto it = std::find_if(released.begin(), released.end(), [&](const ReleasedDevice& r) {
      return r.type == d.type && r.minor == d.minor;
    });
    if (it == released.end())
      released.push_back(d);
    else
      it->resources.add(d.resources);
  }
  AllocateOptions out = base;
  out.released = released;
  out.preferred_devices = reserved.held;
  if (reserved.restricted)
    out.only_released_types = reserved.types;
  return out;
}

}  // namespace koord::roles::scheduler::deviceshare
