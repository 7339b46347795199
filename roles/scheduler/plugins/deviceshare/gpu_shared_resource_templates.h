// GPU shared-resource templates (Koordinator v1.8): per GPU vendor and model, the named slices a
// shared request must equal (Huawei vNPUs), read from a ConfigMap's data.yaml.
#pragma once

#include <boost/json/fwd.hpp>

#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "koord/kube/error.h"
#include "plugins/deviceshare/device_resources.h"

namespace koord::roles::scheduler::deviceshare {

/// The informer DeviceShare declares: the ConfigMaps of the namespace the args name (the plugin
/// narrows it when built), projected to TemplatesConfigMap. Koordinator watches every ConfigMap
/// of the cluster; one namespace needs only a Role there.
inline constexpr std::string_view kTemplatesConfigMapSource =
    "configmaps (gpu shared-resource templates)";
/// The ConfigMap key holding the templates.
inline constexpr std::string_view kTemplatesDataKey = "data.yaml";
/// Bounds on what data.yaml may hold (a ConfigMap is at most 1 MiB).
inline constexpr std::size_t kMaxTemplatesDataBytes = 1 << 20;
inline constexpr std::size_t kMaxTemplateModels = 256;
inline constexpr std::size_t kMaxTemplatesPerModel = 256;

/// "<vendor>-<model>" from the node's gpu-vendor and gpu-model labels (Koordinator's
/// buildGPUSharedResourceTemplatesKey).
std::string templatesKey(std::string_view vendor, std::string_view model);

/// Per "<vendor>-<model>", the names of the templates a request equals.
struct TemplateCandidates {
  std::vector<std::pair<std::string, std::vector<std::string>>> by_model;  // sorted by key

  bool empty() const { return by_model.empty(); }
  /// The names for one model; nullptr when none of its templates matched.
  const std::vector<std::string>* find(std::string_view key) const;
};

class GpuSharedResourceTemplates {
 public:
  /// data.yaml: a map of "<vendor>-<model>" to a map of template name to resource list.
  /// Refused, with the path of the fault: malformed YAML, a wrong type, a bad quantity, more
  /// entries than the bounds above. A template naming a resource DeviceShare does not count is
  /// kept but matches nothing (no request can equal it).
  static kube::Expected<GpuSharedResourceTemplates> parse(std::string_view data_yaml);

  /// The templates whose resources equal `per_gpu` exactly: the same names, the same amounts
  /// (Koordinator's strict findMatchedTemplates).
  TemplateCandidates match(const DeviceResources& per_gpu) const;
  std::size_t modelCount() const { return models_.size(); }

 private:
  struct Template {
    std::string name;
    DeviceResources resources;
    bool matchable = true;
  };
  struct Model {
    std::string key;
    std::vector<Template> templates;  // sorted by name
  };
  std::vector<Model> models_;  // sorted by key
};

/// The plugin's current templates: replaced whole when the ConfigMap changes, read at each
/// PreFilter. Thread-safe.
class GpuSharedResourceTemplatesCache {
 public:
  void set(std::shared_ptr<const GpuSharedResourceTemplates> templates);
  std::shared_ptr<const GpuSharedResourceTemplates> get() const;

 private:
  mutable std::mutex mu_;
  std::shared_ptr<const GpuSharedResourceTemplates> templates_;
};

/// A ConfigMap as DeviceShare keeps it: its name and, when it has one, its data.yaml (other
/// keys are not kept, so that watching a namespace's ConfigMaps stays small).
struct TemplatesConfigMap {
  std::string namespace_;
  std::string name;
  std::optional<std::string> data_yaml;
};

/// The informer's projection. A data.yaml over kMaxTemplatesDataBytes is refused.
kube::Expected<TemplatesConfigMap> decodeTemplatesConfigMap(const boost::json::value& v);

}  // namespace koord::roles::scheduler::deviceshare
