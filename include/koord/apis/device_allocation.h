// The scheduling.koordinator.sh/device-allocated pod annotation: which devices (by type and minor)
// and how much of each the scheduler gave a pod, read by the koordlet to set up its containers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "koord/apis/extension.h"
#include "koord/kube/error.h"
#include "koord/kube/labels.h"
#include "koord/kube/quantity.h"

namespace koord::apis {

// kAnnotationDeviceAllocated is extension.h's, with the other scheduler-owned pod annotations.

/// Device types as the Device object and the annotation spell them (schedulingv1alpha1.DeviceType).
inline constexpr std::string_view kDeviceTypeGPU = "gpu";
inline constexpr std::string_view kDeviceTypeRDMA = "rdma";
inline constexpr std::string_view kDeviceTypeFPGA = "fpga";

/// Bounds on the annotation: a node carries tens of devices, an RDMA device a few hundred VFs.
inline constexpr std::size_t kMaxDeviceAllocationTypes = 16;
inline constexpr std::size_t kMaxDeviceAllocationsPerType = 256;
inline constexpr std::size_t kMaxDeviceAllocationResources = 32;
inline constexpr std::size_t kMaxDeviceAllocationVFs = 1024;

/// One virtual function of an SR-IOV device given to the pod.
struct VirtualFunction {
  int minor = 0;
  std::string bus_id;

  friend bool operator==(const VirtualFunction&, const VirtualFunction&) = default;
};

/// What the pod got of one device.
struct DeviceAllocation {
  std::int32_t minor = 0;
  kube::ResourceList resources;
  std::vector<VirtualFunction> vfs;  // extension.vfs
  /// extension.gpuSharedResourceTemplate (Koordinator v1.8): the template the slice matched.
  std::string gpu_shared_resource_template;

  friend bool operator==(const DeviceAllocation&, const DeviceAllocation&) = default;
};

/// By device type ("gpu", "rdma", "fpga"), in Go's map order when formatted.
using DeviceAllocations = std::map<std::string, std::vector<DeviceAllocation>, std::less<>>;

/// Reads the annotation's value as Go's json.Unmarshal would (quantities as strings or numbers,
/// null members as absent); refused, with an error naming the member ("gpu[1].minor: ..."): text
/// over kMaxAnnotationValueBytes, malformed JSON, a wrong type, a null allocation, or a list
/// over its bound above.
kube::Expected<DeviceAllocations> parseDeviceAllocations(std::string_view json);

/// A pod's annotation read with parseDeviceAllocations; nullopt when the pod has none. Errors
/// name the annotation.
kube::Expected<std::optional<DeviceAllocations>> podDeviceAllocations(
    const kube::Labels& annotations);

/// The annotation's value as Go's json.Marshal writes it: types and resource names sorted,
/// quantities as canonical strings, extension only when there are VFs or a template, a VF's zero
/// minor and empty busID left out.
std::string formatDeviceAllocations(const DeviceAllocations& allocations);

}  // namespace koord::apis
