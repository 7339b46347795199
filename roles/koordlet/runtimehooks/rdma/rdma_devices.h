// RDMADeviceInject's policy: the host devices (/dev/infiniband/rdma_cm and each allocated
// function's uverbs device) a container gets for the RDMA devices the scheduler gave its pod.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "koord/kube/error.h"
#include "koord/kube/labels.h"

namespace koord::roles::koordlet {

/// Where the RDMA character devices are on the host; the paths the runtime is given.
inline constexpr std::string_view kInfinibandDevDir = "/dev/infiniband";
inline constexpr std::string_view kRdmaCmDevice = "rdma_cm";
/// The most devices one container is given: an RDMA NIC has tens of VFs, and each costs a sysfs
/// lookup while the container is being created.
inline constexpr std::size_t kMaxRdmaContainerDevices = 256;

/// Where the koordlet looks: the host's PCI devices in sysfs and its /dev/infiniband (the
/// koordlet's own view of them; tests point these at a temporary tree).
struct RdmaHostPaths {
  std::filesystem::path pci_devices = "/sys/bus/pci/devices";
  std::filesystem::path infiniband = std::string(kInfinibandDevDir);
};

/// A host character device given to the container at the same path.
struct RdmaHostDevice {
  std::string path;  // "/dev/infiniband/uverbs3"
  friend bool operator==(const RdmaHostDevice&, const RdmaHostDevice&) = default;
};

/// From the pod's annotations: nothing without a device-allocated "rdma" entry; otherwise
/// /dev/infiniband/rdma_cm, then for each allocated virtual function (by its busID) the uverbs
/// device sysfs lists under <pci_devices>/<busID>/infiniband_verbs/ (the first by name), each
/// once. Errors, which set nothing: a malformed annotation, an allocation without virtual
/// functions (the annotation names no PCI address for a whole device), a busID that is no PCI
/// address, a function without a uverbs device, a device missing from /dev/infiniband, more
/// than kMaxRdmaContainerDevices devices.
kube::Expected<std::vector<RdmaHostDevice>> rdmaContainerDevices(
    const kube::Annotations& pod_annotations, const RdmaHostPaths& paths = {});

}  // namespace koord::roles::koordlet
