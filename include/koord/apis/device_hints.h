// The pod annotations that steer DeviceShare's choice of devices: device-allocate-hint (which
// devices and VFs, how many, how exclusive) and device-joint-allocate (types placed together).
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "koord/kube/error.h"
#include "koord/kube/labels.h"

namespace koord::apis {

inline constexpr std::string_view kAnnotationDeviceAllocateHint =
    "scheduling.koordinator.sh/device-allocate-hint";
inline constexpr std::string_view kAnnotationDeviceJointAllocate =
    "scheduling.koordinator.sh/device-joint-allocate";

/// Bounds on both annotations: a pod names a handful of device types.
inline constexpr std::size_t kMaxDeviceHintTypes = 16;
inline constexpr std::size_t kMaxDeviceHintBytes = 16 * 1024;

/// DeviceHint.allocateStrategy: ApplyForAll takes every device of the type (that the selector
/// matches), RequestsAsCount reads the request as a number of devices.
enum class DeviceAllocateStrategy { kUnset, kApplyForAll, kRequestsAsCount };
/// DeviceHint.exclusivePolicy: DeviceLevel takes whole devices under RequestsAsCount; PCIeLevel
/// takes devices only from PCIe switches none of whose devices of the type is in use.
enum class DeviceExclusivePolicy { kUnset, kDeviceLevel, kPCIeLevel };

struct DeviceHint {
  /// Devices whose labels match; absent: all.
  std::optional<kube::LabelSelector> selector;
  /// Set: each device given comes with a virtual function from a VF group whose labels match.
  std::optional<kube::LabelSelector> vf_selector;
  DeviceAllocateStrategy allocate_strategy = DeviceAllocateStrategy::kUnset;
  DeviceExclusivePolicy exclusive_policy = DeviceExclusivePolicy::kUnset;

  friend bool operator==(const DeviceHint&, const DeviceHint&) = default;
};

/// By device type as written ("gpu", "rdma", "fpga"); a null hint is left out.
using DeviceAllocateHints = std::map<std::string, DeviceHint, std::less<>>;

/// DeviceJointAllocate: the types (the first is the primary) placed close together; with
/// requiredScope SamePCIe, the other types must sit on exactly the PCIe switches of the
/// primary's devices.
struct DeviceJointAllocate {
  std::vector<std::string> device_types;
  bool same_pcie = false;

  friend bool operator==(const DeviceJointAllocate&, const DeviceJointAllocate&) = default;
};

/// The annotations' values as Koordinator's GetDeviceAllocateHints and GetDeviceJointAllocate
/// read them, refused with an error naming the member: text over kMaxDeviceHintBytes, malformed
/// JSON, a wrong type, more than kMaxDeviceHintTypes types, a selector LabelSelectorAsSelector
/// would refuse, and an allocateStrategy, exclusivePolicy or requiredScope other than the values
/// above (Koordinator ignores those; a typo here would silently change nothing).
kube::Expected<DeviceAllocateHints> parseDeviceAllocateHints(std::string_view json);
kube::Expected<DeviceJointAllocate> parseDeviceJointAllocate(std::string_view json);

/// The pod's annotations read with the parsers above; nullopt when the pod has none.
kube::Expected<std::optional<DeviceAllocateHints>> podDeviceAllocateHints(
    const kube::Labels& annotations);
kube::Expected<std::optional<DeviceJointAllocate>> podDeviceJointAllocate(
    const kube::Labels& annotations);

}  // namespace koord::apis
