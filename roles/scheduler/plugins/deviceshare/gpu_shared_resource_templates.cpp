#include "plugins/deviceshare/gpu_shared_resource_templates.h"

#include <boost/json.hpp>

#include <algorithm>

#include <fmt/format.h>

#include "koord/kube/decode.h"
#include "koord/kube/json_fields.h"
#include "koord/kube/yaml_json.h"

namespace koord::roles::scheduler::deviceshare {

namespace json = boost::json;
namespace jf = kube::jsonfields;

std::string templatesKey(std::string_view vendor, std::string_view model) {
  return fmt::format("{}-{}", vendor, model);
}

const std::vector<std::string>* TemplateCandidates::find(std::string_view key) const {
  auto it = std::lower_bound(by_model.begin(), by_model.end(), key,
                             [](const auto& entry, std::string_view k) { return entry.first < k; });
  return it != by_model.end() && it->first == key ? &it->second : nullptr;
}

kube::Expected<GpuSharedResourceTemplates> GpuSharedResourceTemplates::parse(
    std::string_view data_yaml) {
  if (data_yaml.size() > kMaxTemplatesDataBytes)
    return kube::makeKubeError(
        fmt::format("{}: more than {} bytes", kTemplatesDataKey, kMaxTemplatesDataBytes));
  auto doc = kube::yamlToJson(data_yaml);
  if (!doc)
    return kube::makeKubeError(fmt::format("{}: {}", kTemplatesDataKey, doc.error().message));
  GpuSharedResourceTemplates out;
  if (doc->is_null())
    return out;
  const json::object* models = doc->if_object();
  if (models == nullptr)
    return jf::typeError(kTemplatesDataKey, "object", *doc);
  if (models->size() > kMaxTemplateModels)
    return kube::makeKubeError(
        fmt::format("{}: more than {} models", kTemplatesDataKey, kMaxTemplateModels));
  for (const auto& [key, value] : *models) {
    const std::string model_path = jf::childPath(kTemplatesDataKey, key);
    Model model{std::string(key), {}};
    if (value.is_null()) {
      out.models_.push_back(std::move(model));
      continue;
    }
    const json::object* templates = value.if_object();
    if (templates == nullptr)
      return jf::typeError(model_path, "object", value);
    if (templates->size() > kMaxTemplatesPerModel)
      return kube::makeKubeError(
          fmt::format("{}: more than {} templates", model_path, kMaxTemplatesPerModel));
    for (const auto& [name, resources] : *templates) {
      auto list = kube::decodeResourceList(resources, jf::childPath(model_path, name));
      if (!list)
        return list.error();
      Template t{std::string(name), DeviceResources::fromList(*list), true};
      // A name DeviceShare does not count, or an amount it would read differently (negative),
      // makes the template unequal to every request, as quotav1.Equals would find it.
      for (const auto& [resource, quantity] : *list) {
        if (!parseDeviceResource(resource) || quantity.value() < 0)
          t.matchable = false;
      }
      model.templates.push_back(std::move(t));
    }
    std::sort(model.templates.begin(), model.templates.end(),
              [](const Template& a, const Template& b) { return a.name < b.name; });
    out.models_.push_back(std::move(model));
  }
  std::sort(out.models_.begin(), out.models_.end(),
            [](const Model& a, const Model& b) { return a.key < b.key; });
  return out;
}

TemplateCandidates GpuSharedResourceTemplates::match(const DeviceResources& per_gpu) const {
  TemplateCandidates out;
  for (const Model& model : models_) {
    std::vector<std::string> names;
    for (const Template& t : model.templates) {
      if (t.matchable && t.resources == per_gpu)
        names.push_back(t.name);
    }
    if (!names.empty())
      out.by_model.emplace_back(model.key, std::move(names));
  }
  return out;
}

void GpuSharedResourceTemplatesCache::set(
    std::shared_ptr<const GpuSharedResourceTemplates> templates) {
  std::lock_guard lock(mu_);
  templates_ = std::move(templates);
}

std::shared_ptr<const GpuSharedResourceTemplates> GpuSharedResourceTemplatesCache::get() const {
  std::lock_guard lock(mu_);
  return templates_;
}

kube::Expected<TemplatesConfigMap> decodeTemplatesConfigMap(const json::value& v) {
  const json::object* o = v.if_object();
  if (o == nullptr)
    return jf::typeError("", "object", v);
  TemplatesConfigMap out;
  auto meta = jf::objectField(*o, "metadata", "");
  if (!meta)
    return meta.error();
  if (*meta != nullptr) {
    auto ns = jf::stringField(**meta, "namespace", "metadata");
    if (!ns)
      return ns.error();
    out.namespace_ = std::move(*ns);
    auto name = jf::stringField(**meta, "name", "metadata");
    if (!name)
      return name.error();
    out.name = std::move(*name);
  }
  auto data = jf::objectField(*o, "data", "");
  if (!data)
    return data.error();
  if (*data != nullptr) {
    if (const json::value* text = jf::field(**data, kTemplatesDataKey)) {
      const json::string* s = text->if_string();
      if (s == nullptr)
        return jf::typeError(jf::childPath("data", kTemplatesDataKey), "string", *text);
      if (s->size() > kMaxTemplatesDataBytes)
        return kube::makeKubeError(
            fmt::format("data[{}]: more than {} bytes", kTemplatesDataKey, kMaxTemplatesDataBytes));
      out.data_yaml = std::string(*s);
    }
  }
  return out;
}

}  // namespace koord::roles::scheduler::deviceshare
