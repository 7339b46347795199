#include "noderesource/device_resource.h"

#include <boost/json.hpp>

#include <array>
#include <utility>

#include <fmt/format.h>

#include "koord/apis/xpu_device_info.h"
#include "noderesource/mid_resource.h"
#include "noderesource/need_sync.h"
#include "noderesource/quantity_math.h"

namespace koord::roles::manager::noderesource {
namespace {

namespace json = boost::json;

constexpr std::string_view kDeviceTypeGPU = "gpu";
constexpr std::string_view kDeviceTypeRDMA = "rdma";

// The resources each plugin reconciles onto the node; any other resource a device reports is
// not the plugin's to write.
constexpr std::array<std::string_view, 5> kGPUResourceNames = {
    apis::kResourceGPU, apis::kResourceGPUCore, apis::kResourceGPUMemory,
    apis::kResourceGPUMemoryRatio, apis::kResourceGPUShared};
constexpr std::array<std::string_view, 1> kRDMAResourceNames = {apis::kResourceRDMA};

// Koordinator's messages.
constexpr std::string_view kGPUResetMessage = "reset node gpu resources";
constexpr std::string_view kGPUUpdateMessage = "node gpu resources from device";
constexpr std::string_view kGPUNeedSyncMessage = "gpu resource diff is big than threshold";
constexpr std::string_view kRDMAResetMessage = "reset node rdma resources";
constexpr std::string_view kRDMAUpdateMessage = "node rdma resources from device";
constexpr std::string_view kRDMANeedSyncMessage = "rdma resource diff is big than threshold";

template <std::size_t N>
DeviceResourceItems resetItems(const std::array<std::string_view, N>& names,
                               std::string_view message) {
  DeviceResourceItems items;
  for (auto name : names)
    items.resources.emplace(std::string(name), std::nullopt);
  items.message = std::string(message);
  return items;
}

std::optional<kube::Quantity> lookup(const kube::ResourceList& list, std::string_view name) {
  auto it = list.find(name);
  if (it == list.end())
    return std::nullopt;
  return it->second;
}

// Checks one plugin's resources as Koordinator's NeedSync does: the node's allocatable now
// against the allocatable once the plugin's items are applied.
template <std::size_t N>
bool resourcesDiffer(const NodeView& node, const DeviceResourceItems& items,
                     const std::array<std::string_view, N>& names, double threshold) {
  for (auto name : names) {
    auto current = lookup(node.allocatable, name);
    auto desired = current;
    if (auto it = items.resources.find(name); it != items.resources.end())
      desired = it->second;
    if (isResourceDiff(current, desired, threshold))
      return true;
  }
  return false;
}

template <std::size_t N>
void applyPlugin(const NodeView& node, const DeviceResourceItems& items,
                 const std::array<std::string_view, N>& names, std::string_view need_sync_message,
                 const apis::ColocationStrategy& strategy, DeviceResourceSync& out) {
  for (const auto& [name, value] : items.resources)
    out.resources[name] = value;
  if (!out.need_status && resourcesDiffer(node, items, names, strategy.resource_diff_threshold)) {
    out.need_status = true;
    out.status_reason = std::string(need_sync_message);
  }
  for (const auto& [key, value] : items.labels) {
    auto it = node.labels.find(key);
    if (it == node.labels.end() || it->second != value)
      out.changed_labels[key] = value;
  }
  if (!items.message.empty()) {
    if (!out.message.empty())
      out.message += "; ";
    out.message += items.message;
  }
}

}  // namespace

bool nodeResourcePluginEnabled(std::span<const std::string> plugins, std::string_view name) {
  bool star = false;
  for (const auto& p : plugins) {
    if (p == name)
      return true;
    if (p.size() == name.size() + 1 && p.front() == '-' && std::string_view(p).substr(1) == name)
      return false;
    if (p == "*")
      star = true;
  }
  return star;
}

NodeResourcePlugins enabledNodeResourcePlugins(std::span<const std::string> plugins) {
  return {nodeResourcePluginEnabled(plugins, kGPUDeviceResourcePlugin),
          nodeResourcePluginEnabled(plugins, kRDMADeviceResourcePlugin),
          nodeResourcePluginEnabled(plugins, kMidResourcePlugin)};
}

DeviceResourceItems calculateGPUDeviceResource(const DeviceView* device) {
  if (device == nullptr)
    return resetItems(kGPUResourceNames, kGPUResetMessage);
  kube::ResourceList sum;
  kube::Quantity total_gpu;  // 0, DecimalSI
  for (const auto& d : device->devices) {
    if (d.type != kDeviceTypeGPU || !d.health)
      continue;
    for (const auto& [name, q] : d.resources) {
      auto [it, inserted] = sum.emplace(name, q);
      if (!inserted)
        addSat(it->second, q);
    }
    if (auto core = lookup(d.resources, apis::kResourceGPUCore))
      addSat(total_gpu, *core);
  }
  sum.insert_or_assign(std::string(apis::kResourceGPU), total_gpu);

  DeviceResourceItems items;
  for (auto name : kGPUResourceNames) {
    if (auto q = lookup(sum, name))
      items.resources.emplace(std::string(name), *q);
  }
  items.labels = device->labels;
  items.message = std::string(kGPUUpdateMessage);
  return items;
}

DeviceResourceItems calculateRDMADeviceResource(const DeviceView* device) {
  if (device == nullptr)
    return resetItems(kRDMAResourceNames, kRDMAResetMessage);
  std::int64_t healthy = 0;
  for (const auto& d : device->devices) {
    if (d.type == kDeviceTypeRDMA && d.health)
      ++healthy;
  }
  if (healthy == 0)
    return resetItems(kRDMAResourceNames, kRDMAResetMessage);
  DeviceResourceItems items;
  // At most kMaxDeviceEntries entries, so the product cannot overflow.
  items.resources.emplace(std::string(apis::kResourceRDMA), kube::Quantity::fromInt(healthy * 100));
  items.message = std::string(kRDMAUpdateMessage);
  return items;
}

DeviceResourceSync syncDeviceResources(const NodeView& node, const DeviceView* device,
                                       const NodeResourcePlugins& plugins,
                                       const apis::ColocationStrategy& strategy) {
  DeviceResourceSync out;
  if (device != nullptr && !device->error.empty()) {
    out.message = fmt::format("Device {} ignored: {}", device->name, device->error);
    return out;
  }
  if (plugins.gpu)
    applyPlugin(node, calculateGPUDeviceResource(device), kGPUResourceNames, kGPUNeedSyncMessage,
                strategy, out);
  if (plugins.rdma)
    applyPlugin(node, calculateRDMADeviceResource(device), kRDMAResourceNames, kRDMANeedSyncMessage,
                strategy, out);
  return out;
}

void addDeviceResourcesToPatch(json::value& status_patch, const DeviceResourceSync& sync) {
  if (sync.resources.empty())
    return;
  if (!status_patch.is_object())
    status_patch.emplace_object();
  json::value& status = status_patch.as_object()["status"];
  if (!status.is_object())
    status.emplace_object();
  json::object& s = status.as_object();
  for (const char* list : {"capacity", "allocatable"}) {
    json::value& target = s[list];
    if (!target.is_object())
      target.emplace_object();
    json::object& resources = target.as_object();
    for (const auto& [name, value] : sync.resources) {
      if (value)
        resources[name] = value->toString();
      else
        resources[name] = nullptr;
    }
  }
}

json::value buildNodeLabelsPatch(const kube::Labels& changed_labels) {
  json::object labels;
  for (const auto& [k, v] : changed_labels)
    labels[k] = v;
  return json::object{{"metadata", json::object{{"labels", std::move(labels)}}}};
}

}  // namespace koord::roles::manager::noderesource
