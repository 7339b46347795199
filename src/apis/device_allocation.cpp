#include "koord/apis/device_allocation.h"

#include <boost/json.hpp>

#include <limits>
#include <utility>

#include <fmt/format.h>

#include "koord/apis/input_limits.h"
#include "koord/kube/json_fields.h"
#include "object_fields.h"

namespace koord::apis {

namespace json = boost::json;
namespace jf = kube::jsonfields;
using kube::Expected;
using kube::makeKubeError;

namespace {

// object > array > object > extension > vfs > object: anything deeper is not an annotation
// Koordinator writes.
constexpr std::size_t kMaxDepth = 8;

Expected<const json::array*> boundedList(const json::value& v, std::string_view path,
                                         std::size_t limit) {
  if (v.is_null())
    return static_cast<const json::array*>(nullptr);
  if (!v.is_array())
    return jf::typeError(path, "array", v);
  if (v.get_array().size() > limit) {
    return makeKubeError(
        fmt::format("{}: {} items, more than the {} allowed", path, v.get_array().size(), limit));
  }
  return &v.get_array();
}

Expected<VirtualFunction> decodeVF(const json::value& v, std::string_view path) {
  if (!v.is_object())
    return jf::typeError(path, "object", v);
  const json::object& o = v.get_object();
  VirtualFunction vf;
  if (const json::value* m = jf::field(o, "minor")) {
    auto minor = jf::intValue(*m, jf::childPath(path, "minor"));
    if (!minor)
      return minor.error();
    if (*minor < std::numeric_limits<int>::min() || *minor > std::numeric_limits<int>::max())
      return makeKubeError(fmt::format("{}.minor: {} out of range", path, *minor));
    vf.minor = static_cast<int>(*minor);
  }
  auto bus = jf::stringField(o, "busID", path);
  if (!bus)
    return bus.error();
  vf.bus_id = std::move(*bus);
  return vf;
}

Expected<DeviceAllocation> decodeAllocation(const json::value& v, std::string_view path) {
  // A null item would be a nil pointer in Koordinator's slice, which its readers dereference.
  if (!v.is_object())
    return jf::typeError(path, "object", v);
  const json::object& o = v.get_object();
  DeviceAllocation out;
  if (const json::value* m = jf::field(o, "minor")) {
    auto minor = jf::int32Value(*m, jf::childPath(path, "minor"));
    if (!minor)
      return minor.error();
    out.minor = *minor;
  }
  auto resources = detail::boundedResourceList(o, "resources", path, kMaxDeviceAllocationResources);
  if (!resources)
    return resources.error();
  if (*resources)
    out.resources = std::move(**resources);
  auto ext = jf::objectField(o, "extension", path);
  if (!ext)
    return ext.error();
  if (*ext != nullptr) {
    const std::string ext_path = jf::childPath(path, "extension");
    if (const json::value* vfs = jf::field(**ext, "vfs")) {
      const std::string vfs_path = jf::childPath(ext_path, "vfs");
      auto list = boundedList(*vfs, vfs_path, kMaxDeviceAllocationVFs);
      if (!list)
        return list.error();
      if (*list != nullptr) {
        out.vfs.reserve((*list)->size());
        for (std::size_t i = 0; i < (*list)->size(); ++i) {
          auto vf = decodeVF((**list)[i], jf::indexPath(vfs_path, i));
          if (!vf)
            return vf.error();
          out.vfs.push_back(std::move(*vf));
        }
      }
    }
    auto name = jf::stringField(**ext, "gpuSharedResourceTemplate", ext_path);
    if (!name)
      return name.error();
    out.gpu_shared_resource_template = std::move(*name);
  }
  return out;
}

}  // namespace

Expected<DeviceAllocations> parseDeviceAllocations(std::string_view text) {
  if (auto size = checkValueSize(kAnnotationDeviceAllocated, text, kMaxAnnotationValueBytes); !size)
    return size.error();
  json::parse_options opts;
  opts.max_depth = kMaxDepth;
  boost::system::error_code ec;
  json::value v = json::parse(text, ec, {}, opts);
  if (ec)
    return makeKubeError(fmt::format("{}: not JSON: {}", kAnnotationDeviceAllocated, ec.message()));
  DeviceAllocations out;
  if (v.is_null())
    return out;
  if (!v.is_object())
    return jf::typeError(kAnnotationDeviceAllocated, "object", v);
  const json::object& o = v.get_object();
  if (o.size() > kMaxDeviceAllocationTypes) {
    return makeKubeError(fmt::format("{}: {} device types, more than the {} allowed",
                                     kAnnotationDeviceAllocated, o.size(),
                                     kMaxDeviceAllocationTypes));
  }
  for (const auto& kv : o) {
    const std::string type(kv.key());
    auto list = boundedList(kv.value(), type, kMaxDeviceAllocationsPerType);
    if (!list)
      return list.error();
    std::vector<DeviceAllocation>& items = out[type];
    items.clear();  // a repeated key: the last wins, as in Go
    if (*list == nullptr)
      continue;
    items.reserve((*list)->size());
    for (std::size_t i = 0; i < (*list)->size(); ++i) {
      auto item = decodeAllocation((**list)[i], jf::indexPath(type, i));
      if (!item)
        return item.error();
      items.push_back(std::move(*item));
    }
  }
  return out;
}

Expected<std::optional<DeviceAllocations>> podDeviceAllocations(const kube::Labels& annotations) {
  auto it = annotations.find(kAnnotationDeviceAllocated);
  if (it == annotations.end())
    return std::optional<DeviceAllocations>();
  auto parsed = parseDeviceAllocations(it->second);
  if (!parsed) {
    if (std::string_view(parsed.error().message).starts_with(kAnnotationDeviceAllocated))
      return parsed.error();
    return makeKubeError(fmt::format("{}: {}", kAnnotationDeviceAllocated, parsed.error().message));
  }
  return std::optional<DeviceAllocations>(std::move(*parsed));
}

std::string formatDeviceAllocations(const DeviceAllocations& allocations) {
  json::object root;
  for (const auto& [type, items] : allocations) {
    json::array list;
    list.reserve(items.size());
    for (const DeviceAllocation& a : items) {
      json::object item{{"minor", a.minor}, {"resources", detail::resourceListJson(a.resources)}};
      json::object extension;
      if (!a.vfs.empty()) {
        json::array vfs;
        for (const VirtualFunction& vf : a.vfs) {
          json::object f;
          if (vf.minor != 0)
            f["minor"] = vf.minor;
          if (!vf.bus_id.empty())
            f["busID"] = vf.bus_id;
          vfs.push_back(std::move(f));
        }
        extension["vfs"] = std::move(vfs);
      }
      if (!a.gpu_shared_resource_template.empty())
        extension["gpuSharedResourceTemplate"] = a.gpu_shared_resource_template;
      if (!extension.empty())
        item["extension"] = std::move(extension);
      list.push_back(std::move(item));
    }
    root[type] = std::move(list);
  }
  return json::serialize(root);
}

}  // namespace koord::apis
