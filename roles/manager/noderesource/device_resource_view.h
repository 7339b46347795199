// The manager's compact projection of a node's Device object (scheduling.koordinator.sh/v1alpha1):
// only what the GPUDeviceResource and RDMADeviceResource plugins read.
#pragma once

#include <boost/json/fwd.hpp>

#include <cstddef>
#include <string>
#include <vector>

#include "koord/kube/error.h"
#include "koord/kube/labels.h"
#include "koord/kube/quantity.h"

namespace koord::roles::manager::noderesource {

/// Bounds on what a Device object may hold before it is refused: a node has tens of devices,
/// each with a handful of resources (SR-IOV VFs are not entries of their own).
inline constexpr std::size_t kMaxDeviceEntries = 1024;
inline constexpr std::size_t kMaxDeviceEntryResources = 64;

/// One entry of spec.devices.
struct DeviceEntryView {
  std::string type;  // "gpu", "rdma", "fpga", ...
  bool health = false;
  kube::ResourceList resources;

  friend bool operator==(const DeviceEntryView&, const DeviceEntryView&) = default;
};

struct DeviceView {
  std::string name;
  /// Only the GPU labels the manager copies onto the Node (model and driver version).
  kube::Labels labels;
  std::vector<DeviceEntryView> devices;
  /// Why the object could not be read ("spec.devices[2].resources[...]: ..."); empty when it
  /// was. A Device that cannot be read is kept in the store with this set, so that the plugins
  /// leave the node alone instead of taking a malformed Device for a missing one.
  std::string error;

  friend bool operator==(const DeviceView&, const DeviceView&) = default;
};

/// Reads a Device as Go's decoder would (a missing health is false); refused, with an error
/// naming the member: a wrong type, a bad quantity, more entries or resources than the bounds.
kube::Expected<DeviceView> decodeDeviceView(const boost::json::value& v);

/// The informer's projection: decodeDeviceView, or on error a view holding only the name and
/// the error (never refused, see DeviceView::error).
kube::Expected<DeviceView> projectDeviceView(const boost::json::value& v);

}  // namespace koord::roles::manager::noderesource
