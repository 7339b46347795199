#include "noderesource/device_resource_view.h"

#include <boost/json.hpp>

#include <array>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "koord/apis/xpu_device_info.h"
#include "koord/kube/decode.h"
#include "koord/kube/json_fields.h"
#include "koord/kube/object_meta.h"

namespace koord::roles::manager::noderesource {
namespace {

using namespace koord::kube::jsonfields;
namespace json = boost::json;

constexpr std::array<std::string_view, 2> kCopiedLabels = {apis::kLabelGPUModel,
                                                           apis::kLabelGPUDriverVersion};

kube::Expected<DeviceEntryView> decodeEntry(const json::object& o, const std::string& path) {
  DeviceEntryView entry;
  auto type = stringField(o, "type", path);
  if (!type)
    return type.error();
  entry.type = std::move(*type);
  auto health = boolField(o, "health", path);
  if (!health)
    return health.error();
  entry.health = *health;
  if (const json::value* r = field(o, "resources")) {
    const std::string rpath = childPath(path, "resources");
    if (const json::object* ro = r->if_object();
        ro != nullptr && ro->size() > kMaxDeviceEntryResources)
      return kube::makeKubeError(fmt::format("{}: {} resources, more than {}", rpath, ro->size(),
                                             kMaxDeviceEntryResources));
    auto resources = kube::decodeResourceList(*r, rpath);
    if (!resources)
      return resources.error();
    entry.resources = std::move(*resources);
  }
  return entry;
}

}  // namespace

kube::Expected<DeviceView> decodeDeviceView(const json::value& v) {
  if (!v.is_object())
    return typeError("Device", "object", v);
  const json::object& root = v.get_object();
  DeviceView out;
  using F = kube::ObjectMetaFields;
  kube::ObjectMeta meta;
  if (auto ok = kube::decodeObjectMeta(root, {.members = F::kName}, meta); !ok)
    return ok.error();
  out.name = std::move(meta.name);
  if (const json::object* m =
          root.if_contains("metadata") ? root.at("metadata").if_object() : nullptr) {
    if (const json::value* labels = field(*m, "labels")) {
      auto copied = kube::decodeStringMapEntries(*labels, kCopiedLabels, "metadata.labels");
      if (!copied)
        return copied.error();
      out.labels = std::move(*copied);
    }
  }

  auto spec = objectField(root, "spec", "");
  if (!spec)
    return spec.error();
  if (*spec == nullptr)
    return out;
  const json::value* devices = field(**spec, "devices");
  if (devices == nullptr)
    return out;
  if (!devices->is_array())
    return typeError("spec.devices", "array", *devices);
  const json::array& items = devices->get_array();
  if (items.size() > kMaxDeviceEntries)
    return kube::makeKubeError(
        fmt::format("spec.devices: {} entries, more than {}", items.size(), kMaxDeviceEntries));
  out.devices.reserve(items.size());
  for (std::size_t i = 0; i < items.size(); ++i) {
    const std::string path = indexPath("spec.devices", i);
    if (items[i].is_null())
      continue;  // Go decodes a null element into a zero DeviceInfo: no type, unhealthy
    if (!items[i].is_object())
      return typeError(path, "object", items[i]);
    auto entry = decodeEntry(items[i].get_object(), path);
    if (!entry)
      return entry.error();
    out.devices.push_back(std::move(*entry));
  }
  return out;
}

kube::Expected<DeviceView> projectDeviceView(const json::value& v) {
  auto decoded = decodeDeviceView(v);
  if (decoded)
    return decoded;
  DeviceView kept;
  if (const json::object* root = v.if_object()) {
    kube::ObjectMeta meta;
    if (kube::decodeObjectMeta(*root, {.members = kube::ObjectMetaFields::kName}, meta))
      kept.name = std::move(meta.name);
  }
  kept.error = decoded.error().message;
  if (kept.error.empty())
    kept.error = "unreadable";
  return kept;
}

}  // namespace koord::roles::manager::noderesource
