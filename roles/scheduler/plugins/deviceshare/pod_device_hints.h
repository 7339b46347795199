// A pod's device-allocate-hint and device-joint-allocate annotations, compiled once at PreFilter
// for the allocator: selectors ready to match, joint types narrowed to what the pod asks for.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <vector>

#include "koord/apis/device_hints.h"
#include "koord/kube/error.h"
#include "koord/kube/labels.h"
#include "plugins/deviceshare/device_resources.h"
#include "plugins/deviceshare/pod_device_request.h"

namespace koord::roles::scheduler::deviceshare {

struct DeviceTypeHint {
  /// Only devices whose labels match (Koordinator's hint selector).
  std::optional<kube::Selector> selector;
  /// Each device given comes with a free VF of a group whose labels match.
  std::optional<kube::Selector> vf_selector;
  apis::DeviceAllocateStrategy allocate_strategy = apis::DeviceAllocateStrategy::kUnset;
  apis::DeviceExclusivePolicy exclusive_policy = apis::DeviceExclusivePolicy::kUnset;
};

struct PodDeviceHints {
  std::array<std::optional<DeviceTypeHint>, kDeviceTypeCount> by_type{};
  /// The joint allocation's types, the primary first: those of the annotation the pod asks for
  /// and takes without ApplyForAll, as Koordinator narrows them. Empty: none.
  std::vector<DeviceType> joint_types;
  /// The other joint types must sit on exactly the PCIe switches of the primary's devices.
  bool joint_same_pcie = false;

  const DeviceTypeHint* of(DeviceType type) const {
    const auto& h = by_type[static_cast<std::size_t>(type)];
    return h ? &*h : nullptr;
  }
};

/// The pod's hints (nullopt when it carries neither annotation). Types the plugin does not
/// schedule are left out. Errors as Koordinator's PreFilter words them, with the parser's
/// reason: "invalid DeviceAllocateHint annotation, err: ...", "invalid DeviceJointAllocate
/// annotation, err: ...".
kube::Expected<std::optional<PodDeviceHints>> podDeviceHints(const kube::Labels& annotations,
                                                             const PodDeviceRequests& requests);

}  // namespace koord::roles::scheduler::deviceshare
