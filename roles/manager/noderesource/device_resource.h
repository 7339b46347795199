// Koordinator's GPUDeviceResource and RDMADeviceResource noderesource plugins as pure functions:
// the node's koordinator.sh/gpu* and koordinator.sh/rdma resources and GPU labels from its Device.
#pragma once

#include <boost/json/fwd.hpp>

#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "koord/apis/slo_config.h"
#include "koord/kube/labels.h"
#include "koord/kube/quantity.h"
#include "noderesource/device_resource_view.h"
#include "noderesource/node_view.h"

namespace koord::roles::manager::noderesource {

inline constexpr std::string_view kGPUDeviceResourcePlugin = "GPUDeviceResource";
inline constexpr std::string_view kRDMADeviceResourcePlugin = "RDMADeviceResource";

/// Which device plugins --noderesource-plugins turns on.
/// The noderesource plugins beside BatchResource that --noderesource-plugins turns on or off:
/// GPUDeviceResource, RDMADeviceResource (here) and MidResource (mid_resource.h).
struct NodeResourcePlugins {
  bool gpu = true;
  bool rdma = true;
  bool mid = true;
};

/// Koordinator's isPluginEnabled over the flag's list: the plugin's own name turns it on, "-name"
/// off, the first of the two that appears wins; otherwise "*" turns it on.
bool nodeResourcePluginEnabled(std::span<const std::string> plugins, std::string_view name);
NodeResourcePlugins enabledNodeResourcePlugins(std::span<const std::string> plugins);

/// What one plugin asks of the node. A resource in `resources` is set to its value, or removed
/// where the value is nullopt; a resource the plugin owns but leaves out keeps the node's
/// value. `labels` are set on the node (never removed).
struct DeviceResourceItems {
  std::map<std::string, std::optional<kube::Quantity>, std::less<>> resources;
  kube::Labels labels;
  /// Koordinator's message for the log ("node gpu resources from device", ...).
  std::string message;
};

/// GPUDeviceResource. `device` is the node's Device, nullptr when there is none.
/// - No Device: every GPU resource (koordinator.sh/gpu, gpu-core, gpu-memory, gpu-memory-ratio,
///   gpu.shared) is removed.
/// - Otherwise the resources of the healthy "gpu" entries are summed; koordinator.sh/gpu is the
///   sum of their gpu-core (0 without a healthy GPU). Only those five names are written; one no
///   healthy GPU reports keeps the node's value, as Koordinator leaves it.
/// - The Device's gpu-model and gpu-driver-version labels are set on the node.
DeviceResourceItems calculateGPUDeviceResource(const DeviceView* device);

/// RDMADeviceResource: koordinator.sh/rdma = 100 per healthy "rdma" entry; removed when there is
/// no Device or no healthy RDMA device.
DeviceResourceItems calculateRDMADeviceResource(const DeviceView* device);

/// The device plugins' outcome for one node.
struct DeviceResourceSync {
  /// Every plugin's resources together, to be written with the node's status.
  std::map<std::string, std::optional<kube::Quantity>, std::less<>> resources;
  /// Whether a resource moved past resourceDiffThreshold (or appears or goes): the status is
  /// written for that alone.
  bool need_status = false;
  std::string status_reason;
  /// Labels whose value on the node differs from the Device's: a metadata patch is needed.
  kube::Labels changed_labels;
  /// The plugins' messages, for the log.
  std::string message;
};

/// Runs the enabled plugins against `node`. `device`: the node's Device (nullptr: none). A
/// Device that could not be read (DeviceView::error) changes nothing, as a plugin that fails
/// to calculate changes nothing in Koordinator.
DeviceResourceSync syncDeviceResources(const NodeView& node, const DeviceView* device,
                                       const NodeResourcePlugins& plugins,
                                       const apis::ColocationStrategy& strategy);

/// Adds `sync.resources` to a status merge patch from buildNodeStatusPatch (both capacity and
/// allocatable; a removed resource becomes null).
void addDeviceResourcesToPatch(boost::json::value& status_patch, const DeviceResourceSync& sync);

/// {"metadata":{"labels":{...changed_labels...}}} for a merge patch of the Node itself.
boost::json::value buildNodeLabelsPatch(const kube::Labels& changed_labels);

}  // namespace koord::roles::manager::noderesource
