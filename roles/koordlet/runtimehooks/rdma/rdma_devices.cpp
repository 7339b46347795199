#include "runtimehooks/rdma/rdma_devices.h"

#include <algorithm>
#include <cctype>
#include <system_error>

#include <fmt/format.h>

#include "koord/apis/device_allocation.h"

namespace koord::roles::koordlet {

namespace fs = std::filesystem;

namespace {

// A PCI address as sysfs names it ("0000:1f:00.2"): hex digits, colons and a dot. Anything
// else could walk out of the sysfs directory.
bool isPciAddress(std::string_view s) {
  if (s.empty() || s.size() > 32)
    return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isxdigit(static_cast<unsigned char>(c)) != 0 || c == ':' || c == '.';
  });
}

// The name of the function's first uverbs device, as Koordinator takes the first entry of the
// directory in name order.
kube::Expected<std::string> uverbsOf(const fs::path& pci_devices, std::string_view bus_id) {
  const fs::path dir = pci_devices / std::string(bus_id) / "infiniband_verbs";
  std::error_code ec;
  std::vector<std::string> names;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (names.size() >= 64)
      break;
    names.push_back(it->path().filename().string());
  }
  if (ec)
    return kube::makeKubeError(fmt::format("{}: {}", dir.string(), ec.message()));
  if (names.empty())
    return kube::makeKubeError(fmt::format("{}: no uverbs device", dir.string()));
  return *std::min_element(names.begin(), names.end());
}

}  // namespace

kube::Expected<std::vector<RdmaHostDevice>> rdmaContainerDevices(
    const kube::Annotations& pod_annotations, const RdmaHostPaths& paths) {
  std::vector<RdmaHostDevice> out;
  auto annotation = pod_annotations.find(apis::kAnnotationDeviceAllocated);
  if (annotation == pod_annotations.end())
    return out;
  auto allocations = apis::parseDeviceAllocations(annotation->second);
  if (!allocations) {
    // The parser names the annotation in some messages and only the member in others.
    const std::string& message = allocations.error().message;
    if (message.starts_with(apis::kAnnotationDeviceAllocated))
      return allocations.error();
    return kube::makeKubeError(
        fmt::format("annotation {}: {}", apis::kAnnotationDeviceAllocated, message));
  }
  auto rdma = allocations->find(apis::kDeviceTypeRDMA);
  if (rdma == allocations->end() || rdma->second.empty())
    return out;

  // Checked in the koordlet's view, handed to the runtime as the host's path.
  auto add = [&](const std::string& name) -> kube::Expected<void> {
    std::error_code ec;
    if (!fs::exists(paths.infiniband / name, ec))
      return kube::makeKubeError(
          fmt::format("{}: no such device", (paths.infiniband / name).string()));
    std::string path = fmt::format("{}/{}", kInfinibandDevDir, name);
    for (const auto& d : out) {
      if (d.path == path)
        return {};
    }
    if (out.size() >= kMaxRdmaContainerDevices)
      return kube::makeKubeError(
          fmt::format("rdma: more than {} devices for one container", kMaxRdmaContainerDevices));
    out.push_back({std::move(path)});
    return {};
  };

  if (auto ok = add(std::string(kRdmaCmDevice)); !ok)
    return ok.error();
  for (std::size_t i = 0; i < rdma->second.size(); ++i) {
    const auto& device = rdma->second[i];
    if (device.vfs.empty())
      return kube::makeKubeError(fmt::format(
          "rdma[{}] (minor {}): no virtual functions, and the annotation names no PCI address "
          "for a whole device",
          i, device.minor));
    for (std::size_t j = 0; j < device.vfs.size(); ++j) {
      const auto& bus_id = device.vfs[j].bus_id;
      if (!isPciAddress(bus_id))
        return kube::makeKubeError(
            fmt::format("rdma[{}].vfs[{}].busID {:?}: not a PCI address", i, j, bus_id));
      auto uverbs = uverbsOf(paths.pci_devices, bus_id);
      if (!uverbs)
        return kube::makeKubeError(
            fmt::format("rdma[{}].vfs[{}]: {}", i, j, uverbs.error().message));
      if (auto ok = add(*uverbs); !ok)
        return kube::makeKubeError(fmt::format("rdma[{}].vfs[{}]: {}", i, j, ok.error().message));
    }
  }
  return out;
}

}  // namespace koord::roles::koordlet
