#include "plugins/deviceshare/device.h"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

namespace koord::roles::scheduler::deviceshare {

NodeDevices readNodeDevices(const apis::Device& device) {
  NodeDevices out;
  for (std::size_t i = 0; i < device.devices.size(); ++i) {
    const apis::DeviceInfo& d = device.devices[i];
    const std::optional<DeviceType> type = parseDeviceType(d.type);
    if (!type) {
      out.skipped.push_back(
          fmt::format("spec.devices[{}]: type \"{}\" is not scheduled", i, d.type));
      continue;
    }
    if (!d.minor) {
      out.skipped.push_back(fmt::format("spec.devices[{}]: no minor", i));
      continue;
    }
    NodeDeviceInfo info;
    info.minor = *d.minor;
    info.healthy = d.health;
    if (d.health)
      info.total = DeviceResources::fromList(d.resources);
    if (d.topology) {
      if (d.topology->node_id >= 0 && d.topology->node_id <= kMaxDeviceNumaNode)
        info.numa_node = d.topology->node_id;
      info.socket = d.topology->socket_id;
      info.pcie_id = d.topology->pcie_id;
      info.bus_id = d.topology->bus_id;
    }
    info.labels = d.labels;
    for (const apis::DeviceVFGroup& group : d.vf_groups) {
      const auto index = static_cast<std::uint32_t>(info.vf_group_labels.size());
      info.vf_group_labels.push_back(group.labels);
      for (const apis::DeviceVirtualFunction& vf : group.vfs)
        info.vfs.push_back(DeviceVF{.minor = vf.minor, .bus_id = vf.bus_id, .group = index});
    }
    std::sort(info.vfs.begin(), info.vfs.end(),
              [](const DeviceVF& a, const DeviceVF& b) { return a.bus_id < b.bus_id; });

    auto& list = out.by_type[static_cast<std::size_t>(*type)];
    auto at = std::lower_bound(
        list.begin(), list.end(), info.minor,
        [](const NodeDeviceInfo& e, std::int32_t minor) { return e.minor < minor; });
    if (at != list.end() && at->minor == info.minor) {
      out.skipped.push_back(
          fmt::format("spec.devices[{}]: {} minor {} named again; the later one counts", i, d.type,
                      info.minor));
      *at = std::move(info);
    } else {
      list.insert(at, std::move(info));
    }
  }
  return out;
}

}  // namespace koord::roles::scheduler::deviceshare
