// decodeDevice (the Device JSON -> Device projection) and the deprecated device resource names.
#include "koord/apis/device.h"

#include <boost/json.hpp>

#include <array>
#include <utility>

#include <fmt/format.h>

#include "crd_object.h"
#include "koord/apis/xpu_device_info.h"
#include "koord/kube/decode.h"
#include "koord/kube/json_fields.h"
#include "object_fields.h"

namespace koord::apis {

namespace json = boost::json;
namespace jf = kube::jsonfields;
using kube::Expected;
using kube::makeKubeError;

namespace {

struct Rename {
  std::string_view from;
  std::string_view to;
};
// apis/extension/deprecated.go's DeprecatedDeviceResourcesMapper.
constexpr std::array<Rename, 6> kDeprecatedDeviceResources{{
    {"kubernetes.io/rdma", kResourceRDMA},
    {"kubernetes.io/fpga", kResourceFPGA},
    {"kubernetes.io/gpu", kResourceGPU},
    {"kubernetes.io/gpu-core", kResourceGPUCore},
    {"kubernetes.io/gpu-memory", kResourceGPUMemory},
    {"kubernetes.io/gpu-memory-ratio", kResourceGPUMemoryRatio},
}};

Expected<kube::Labels> boundedLabels(const json::object& o, std::string_view name,
                                     std::string_view path) {
  const json::value* v = jf::field(o, name);
  if (v == nullptr)
    return kube::Labels();
  const std::string member = jf::childPath(path, name);
  if (v->is_object() && v->get_object().size() > kMaxDeviceLabels) {
    return makeKubeError(fmt::format("{}: {} labels, more than the {} allowed", member,
                                     v->get_object().size(), kMaxDeviceLabels));
  }
  return kube::decodeStringMap(*v, member);
}

Expected<std::optional<std::int32_t>> optionalInt32(const json::object& o, std::string_view name,
                                                    std::string_view path) {
  const json::value* v = jf::field(o, name);
  if (v == nullptr)
    return std::optional<std::int32_t>();
  auto n = jf::int32Value(*v, jf::childPath(path, name));
  if (!n)
    return n.error();
  return std::optional<std::int32_t>(*n);
}

Expected<std::int32_t> int32Member(const json::object& o, std::string_view name,
                                   std::string_view path) {
  auto n = optionalInt32(o, name, path);
  if (!n)
    return n.error();
  return n->value_or(0);
}

Expected<DeviceTopology> decodeTopology(const json::object& o, std::string_view path) {
  DeviceTopology t;
  auto socket = int32Member(o, "socketID", path);
  if (!socket)
    return socket.error();
  t.socket_id = *socket;
  auto node = int32Member(o, "nodeID", path);
  if (!node)
    return node.error();
  t.node_id = *node;
  if (auto ok = detail::readStrings(o, path, {{"pcieID", &t.pcie_id}, {"busID", &t.bus_id}}); !ok)
    return ok.error();
  return t;
}

Expected<DeviceVirtualFunction> decodeVF(const json::object& o, std::string_view path) {
  DeviceVirtualFunction vf;
  auto minor = int32Member(o, "minor", path);
  if (!minor)
    return minor.error();
  vf.minor = *minor;
  if (auto ok = detail::readStrings(o, path, {{"busID", &vf.bus_id}}); !ok)
    return ok.error();
  return vf;
}

Expected<DeviceVFGroup> decodeVFGroup(const json::object& o, std::string_view path) {
  DeviceVFGroup g;
  auto labels = boundedLabels(o, "labels", path);
  if (!labels)
    return labels.error();
  g.labels = std::move(*labels);
  auto vfs =
      detail::objectsOf<DeviceVirtualFunction>(o, "vfs", path, kMaxDeviceVFsPerGroup, decodeVF);
  if (!vfs)
    return vfs.error();
  g.vfs = std::move(*vfs);
  return g;
}

Expected<DeviceInfo> decodeDeviceInfo(const json::object& o, std::string_view path) {
  DeviceInfo d;
  if (auto ok = detail::readStrings(o, path, {{"type", &d.type}, {"id", &d.uuid}}); !ok)
    return ok.error();
  auto labels = boundedLabels(o, "labels", path);
  if (!labels)
    return labels.error();
  d.labels = std::move(*labels);
  auto minor = optionalInt32(o, "minor", path);
  if (!minor)
    return minor.error();
  d.minor = *minor;
  auto module = optionalInt32(o, "moduleID", path);
  if (!module)
    return module.error();
  d.module_id = *module;
  auto health = jf::boolField(o, "health", path);
  if (!health)
    return health.error();
  d.health = *health;
  auto resources = detail::boundedResourceList(o, "resources", path, kMaxDeviceResourceNames);
  if (!resources)
    return resources.error();
  if (*resources) {
    d.resources = std::move(**resources);
    replaceDeprecatedDeviceResources(d.resources);
  }
  auto topology = detail::optionalObject<DeviceTopology>(o, "topology", path, decodeTopology);
  if (!topology)
    return topology.error();
  d.topology = std::move(*topology);
  auto groups =
      detail::objectsOf<DeviceVFGroup>(o, "vfGroups", path, kMaxDeviceVFGroups, decodeVFGroup);
  if (!groups)
    return groups.error();
  d.vf_groups = std::move(*groups);
  return d;
}

Expected<void> decodeSpec(const json::object& spec, Device& out) {
  auto devices =
      detail::objectsOf<DeviceInfo>(spec, "devices", "spec", kMaxDevicesPerNode, decodeDeviceInfo);
  if (!devices)
    return devices.error();
  out.devices = std::move(*devices);
  return {};
}

Expected<void> ignoreStatus(const json::object&, Device&) {
  return {};
}

}  // namespace

Expected<Device> decodeDevice(const json::value& v) {
  return detail::decodeCrd<Device>(v, kDeviceKind, decodeSpec, ignoreStatus);
}

std::string_view deprecatedDeviceResourceReplacement(std::string_view name) {
  for (const Rename& r : kDeprecatedDeviceResources) {
    if (r.from == name)
      return r.to;
  }
  return {};
}

bool replaceDeprecatedDeviceResources(kube::ResourceList& resources) {
  bool moved = false;
  for (const Rename& r : kDeprecatedDeviceResources) {
    auto from = resources.find(r.from);
    if (from == resources.end() || resources.contains(r.to))
      continue;
    kube::Quantity q = from->second;
    resources.erase(from);
    resources.emplace(std::string(r.to), q);
    moved = true;
  }
  return moved;
}

}  // namespace koord::apis
