#include "plugins/deviceshare/device_cache.h"

#include <algorithm>
#include <mutex>

namespace koord::roles::scheduler::deviceshare {

NodeDeviceEntry* DeviceCache::getOrCreate(std::string_view node) {
  const std::uint32_t slot = nodeSlotOf(node);
  if (NodeDeviceEntry* e = find(slot))
    return e;
  NodeDeviceEntry* e = entries_.getOrCreate(slot);
  if (e == nullptr)
    return nullptr;
  std::unique_lock lock(e->mu);
  if (e->name.empty()) {
    e->name = std::string(node);
    e->slot = slot;
  }
  e->present.store(true, std::memory_order_release);
  return e;
}

NodeDeviceEntry* DeviceCache::remove(std::string_view node) {
  NodeDeviceEntry* e = find(node);
  if (e == nullptr)
    return nullptr;
  return e->present.exchange(false, std::memory_order_acq_rel) ? e : nullptr;
}

void DeviceCache::publishView(const NodeDeviceEntry& entry) {
  if (GpuFastView* view = views_.getOrCreate(entry.slot))
    view->publish(entry.state, entry.present.load(std::memory_order_acquire));
}

std::vector<std::string> DeviceCache::nodes() const {
  std::vector<std::string> out;
  entries_.forEach([&](std::uint32_t, const NodeDeviceEntry& e) {
    if (e.present.load(std::memory_order_acquire))
      out.push_back(e.name);
  });
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace koord::roles::scheduler::deviceshare
