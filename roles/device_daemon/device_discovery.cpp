#include "device_discovery.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "koord/core/log.h"

namespace koord::roles::device_daemon {

namespace {

constexpr uint64_t kMiB = 1024 * 1024;

// A whole device's share, as Koordinator's device-daemon writes it for every accelerator.
constexpr std::string_view kFullDevice = "100";

apis::XpuDeviceTopology topologyOf(const PciDevice& d) {
  apis::XpuDeviceTopology t;
  t.socket_id = std::to_string(d.socket_id);
  t.node_id = std::to_string(d.numa_node);
  t.pcie_id = d.pcie_root;
  t.bus_id = d.bus_id;
  return t;
}

// Without a vendor tool, what sysfs alone can say: the PCI ids, the bus ID as identity.
apis::XpuDeviceInfo fromSysfs(const PciDevice& d, int minor) {
  apis::XpuDeviceInfo info;
  info.vendor = d.vendor;
  info.model = fmt::format("{:#06x}", d.device_id);
  info.uuid = d.bus_id;
  info.minor = std::to_string(minor);
  info.resources[std::string(d.kind == PciDeviceKind::kRdmaNic ? apis::kResourceRDMA
                                                               : apis::kResourceGPUCore)] =
      std::string(kFullDevice);
  info.topology = topologyOf(d);
  info.status = apis::XpuDeviceStatus{.healthy = true, .err_code = "", .err_message = ""};
  return info;
}

// Koordinator's model names are label values: no spaces ("NVIDIA A100-SXM4-80GB" would not do).
std::string modelName(std::string name) {
  std::replace(name.begin(), name.end(), ' ', '-');
  return name;
}

void applyNvml(apis::XpuDeviceInfo& info, const GpuDetails& gpu) {
  if (!gpu.name.empty())
    info.model = modelName(gpu.name);
  if (!gpu.uuid.empty())
    info.uuid = gpu.uuid;
  if (gpu.minor >= 0)
    info.minor = std::to_string(gpu.minor);
  if (gpu.memory_total_bytes > 0) {
    info.resources[std::string(apis::kResourceGPUMemory)] =
        fmt::format("{}Mi", gpu.memory_total_bytes / kMiB);
  }
  for (int peer : gpu.nvlink_peers)
    info.topology->p2p_links.push_back(
        apis::XpuP2PLink{.peer_minor = std::to_string(peer), .type = "NVLink"});
  if (!gpu.error.empty()) {
    info.status->healthy = false;
    info.status->err_message = "NVML: " + gpu.error;
  }
}

}  // namespace

std::vector<apis::XpuDeviceInfo> describeDevices(
    std::span<const PciDevice> devices, const kube::Expected<std::vector<GpuDetails>>* gpus) {
  std::map<std::string, const GpuDetails*> nvml_by_bus;
  const bool nvml_answered = gpus != nullptr && gpus->has_value();
  if (nvml_answered) {
    for (const auto& g : **gpus) {
      if (g.bus_id.empty()) {
        // Not matched to any PCI device, so it is in no report: say so here, once.
        KOORD_LOG_WARNING("device-daemon: an NVIDIA GPU NVML cannot describe is not reported: {}",
                          g.error);
        continue;
      }
      nvml_by_bus.emplace(g.bus_id, &g);
    }
  }

  std::map<std::string, int> next_minor;  // per vendor; RDMA NICs count apart
  std::vector<apis::XpuDeviceInfo> out;
  out.reserve(devices.size());
  for (const auto& d : devices) {
    std::string counter = d.kind == PciDeviceKind::kRdmaNic ? "rdma" : d.vendor;
    apis::XpuDeviceInfo info = fromSysfs(d, next_minor[counter]++);
    if (d.kind == PciDeviceKind::kAccelerator && d.vendor == apis::kVendorNVIDIA && nvml_answered) {
      auto it = nvml_by_bus.find(d.bus_id);
      if (it != nvml_by_bus.end()) {
        applyNvml(info, *it->second);
        nvml_by_bus.erase(it);
      } else {
        // The driver works but does not see this GPU (fallen off the bus, bound to vfio for a
        // VM): no container could use it.
        info.status->healthy = false;
        info.status->err_message = "NVML: not among the GPUs the driver sees";
      }
    }
    out.push_back(std::move(info));
  }
  // GPUs the driver sees that sysfs does not show (a container or sandbox whose /sys hides the
  // PCI bus): NVML alone describes them, as Koordinator's device-daemon always does for NVIDIA.
  for (const auto& [bus_id, gpu] : nvml_by_bus) {
    PciDevice d;
    d.bus_id = bus_id;
    d.vendor = std::string(apis::kVendorNVIDIA);
    d.kind = PciDeviceKind::kAccelerator;
    apis::XpuDeviceInfo info = fromSysfs(d, next_minor[d.vendor]++);
    info.model.clear();  // no PCI device id to fall back on
    applyNvml(info, *gpu);
    KOORD_LOG_INFO(
        "device-daemon: NVIDIA GPU {} ({}) has no PCI device under the sysfs root; "
        "reported from NVML alone",
        bus_id, gpu->uuid);
    out.push_back(std::move(info));
  }
  return out;
}

kube::Expected<std::vector<apis::XpuDeviceInfo>> discoverDevices(
    const std::filesystem::path& sysfs_root, GpuInfoSource* gpus) {
  auto devices = scanPciDevices(sysfs_root);
  if (!devices)
    return devices.error();
  if (gpus == nullptr)
    return describeDevices(*devices, nullptr);
  // Asked even when sysfs shows no NVIDIA GPU: the library loads only where the driver is
  // installed, and there the driver's view is the one that counts.
  const bool any_nvidia = std::any_of(devices->begin(), devices->end(), [](const PciDevice& d) {
    return d.kind == PciDeviceKind::kAccelerator && d.vendor == apis::kVendorNVIDIA;
  });
  auto listed = gpus->listGpus();
  if (!listed && any_nvidia) {
    KOORD_LOG_WARNING(
        "device-daemon: NVML cannot list GPUs ({}); NVIDIA GPUs are reported from "
        "sysfs only",
        listed.error().message);
  } else if (!listed) {
    KOORD_LOG_INFO("device-daemon: NVML cannot list GPUs ({}) and sysfs shows none",
                   listed.error().message);
  }
  return describeDevices(*devices, &listed);
}

}  // namespace koord::roles::device_daemon
