#include "plugins/deviceshare/node_device_state.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "koord/apis/device.h"

namespace koord::roles::scheduler::deviceshare {

namespace {

std::uint64_t numaBit(std::int32_t numa_node) {
  return numa_node >= 0 ? std::uint64_t{1} << numa_node : 0;
}

void refreshFree(DeviceState& d) {
  d.free = d.info.total;
  d.free.subtractNonNegative(d.used);
  d.free_vfs = static_cast<std::uint32_t>(
      std::count(d.vf_holders.begin(), d.vf_holders.end(), std::uint16_t{0}));
}

}  // namespace

void NodeDeviceState::setDevices(NodeDevices devices) {
  has_device_object_ = true;
  for (DeviceType type : kDeviceTypes) {
    auto& states = devices_[static_cast<std::size_t>(type)];
    states.clear();
    for (NodeDeviceInfo& info : devices.by_type[static_cast<std::size_t>(type)]) {
      DeviceState d;
      d.vf_holders.assign(info.vfs.size(), 0);
      d.info = std::move(info);
      states.push_back(std::move(d));
    }
  }
  for (const auto& [key, allocations] : pods_)
    apply(allocations, true);
  refreshDerived();
}

void NodeDeviceState::markAllUnhealthy() {
  for (auto& states : devices_) {
    for (DeviceState& d : states) {
      d.info.healthy = false;
      d.info.total = DeviceResources{};
    }
  }
  refreshDerived();
}

bool NodeDeviceState::addPod(std::string_view pod_uid, const apis::DeviceAllocations& allocations) {
  if (pods_.find(pod_uid) != pods_.end())
    return false;
  auto it = pods_.emplace(std::string(pod_uid), allocations).first;
  apply(it->second, true);
  refreshDerived();
  return true;
}

bool NodeDeviceState::removePod(std::string_view pod_uid) {
  auto it = pods_.find(pod_uid);
  if (it == pods_.end())
    return false;
  apply(it->second, false);
  pods_.erase(it);
  refreshDerived();
  return true;
}

const apis::DeviceAllocations* NodeDeviceState::podAllocations(std::string_view pod_uid) const {
  auto it = pods_.find(pod_uid);
  return it == pods_.end() ? nullptr : &it->second;
}

const DeviceState* NodeDeviceState::device(DeviceType type, std::int32_t minor) const {
  return const_cast<NodeDeviceState*>(this)->findDevice(type, minor);
}

DeviceState* NodeDeviceState::findDevice(DeviceType type, std::int32_t minor) {
  auto& states = devices_[static_cast<std::size_t>(type)];
  auto it = std::lower_bound(states.begin(), states.end(), minor,
                             [](const DeviceState& d, std::int32_t m) { return d.info.minor < m; });
  return it != states.end() && it->info.minor == minor ? &*it : nullptr;
}

void NodeDeviceState::apply(const apis::DeviceAllocations& allocations, bool add) {
  for (const auto& [type_name, items] : allocations) {
    const std::optional<DeviceType> type = parseDeviceType(type_name);
    if (!type)
      continue;
    for (const apis::DeviceAllocation& a : items) {
      // A minor the node's Device does not list (yet) is counted when setDevices brings it.
      DeviceState* d = findDevice(*type, a.minor);
      if (d == nullptr)
        continue;
      kube::ResourceList resources = a.resources;
      apis::replaceDeprecatedDeviceResources(resources);
      const DeviceResources amount = DeviceResources::fromList(resources);
      if (add)
        d->used.add(amount);
      else
        d->used.subtractNonNegative(amount);
      for (const apis::VirtualFunction& vf : a.vfs) {
        auto at = std::lower_bound(
            d->info.vfs.begin(), d->info.vfs.end(), vf.bus_id,
            [](const DeviceVF& e, const std::string& bus) { return e.bus_id < bus; });
        if (at == d->info.vfs.end() || at->bus_id != vf.bus_id)
          continue;
        std::uint16_t& holders = d->vf_holders[static_cast<std::size_t>(at - d->info.vfs.begin())];
        if (add && holders < std::numeric_limits<std::uint16_t>::max())
          ++holders;
        else if (!add && holders > 0)
          --holders;
      }
    }
  }
}

void NodeDeviceState::refreshSummary(DeviceType type) {
  DeviceTypeSummary s;
  for (DeviceState& d : devices_[static_cast<std::size_t>(type)]) {
    refreshFree(d);
    s.numa_nodes |= numaBit(d.info.numa_node);
    s.total_sum.add(d.info.total);
    if (d.free.isZero())
      continue;
    ++s.devices_with_free;
    s.free_sum.add(d.free);
    s.max_free.setMax(d.free);
  }
  summaries_[static_cast<std::size_t>(type)] = s;
}

void NodeDeviceState::refreshDerived() {
  numa_nodes_ = 0;
  for (DeviceType type : kDeviceTypes) {
    refreshSummary(type);
    numa_nodes_ |= summaries_[static_cast<std::size_t>(type)].numa_nodes;
  }
  gpu_card_memory_.reset();
  for (const DeviceState& d : devices(DeviceType::kGPU)) {
    if (!d.info.total.isZero()) {
      gpu_card_memory_ = d.info.total.get(DeviceResource::kGPUMemory);
      break;
    }
  }
}

}  // namespace koord::roles::scheduler::deviceshare
