#include "webhook/configmap_validating.h"

#include <boost/json.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "koord/apis/slo_config.h"
#include "koord/kube/decode.h"

namespace koord::manager::webhook {
namespace {

namespace json = boost::json;
using Data = std::map<std::string, std::string, std::less<>>;

const json::object* metadataOf(const json::object& o) {
  const json::value* m = o.if_contains("metadata");
  return m == nullptr ? nullptr : m->if_object();
}

std::string stringAt(const json::object* o, std::string_view key) {
  if (o == nullptr)
    return {};
  const json::value* v = o->if_contains(key);
  return v != nullptr && v->is_string() ? std::string(v->get_string()) : std::string();
}

kube::Expected<Data> dataOf(const json::object& config) {
  const json::value* v = config.if_contains("data");
  if (v == nullptr)
    return Data();
  return kube::decodeStringMap(*v, "data");
}

// The profiles of one key's nodeConfigs / nodeStrategies, when that key was checked.
std::vector<const apis::NodeCfgProfile*> profilesOf(
    const std::vector<std::pair<apis::NodeCfgProfile, json::object>>& entries) {
  std::vector<const apis::NodeCfgProfile*> out;
  for (const auto& e : entries)
    out.push_back(&e.first);
  return out;
}

// Koordinator's ExistNodeConflict: two strategies of one key must not both select a node, or
// which one applies would depend on their order.
std::optional<std::string> nodeConflict(
    std::string_view key, const std::vector<const apis::NodeCfgProfile*>& profiles,
    const std::vector<std::pair<std::string, kube::Labels>>& nodes) {
  if (profiles.size() < 2)
    return std::nullopt;
  std::vector<kube::Selector> selectors;
  for (const auto* p : profiles) {
    auto s = kube::toSelector(p->node_selector);
    if (!s)
      return fmt::format("{}: nodeStrategy \"{}\": {}", key, p->name, s.error().message);
    selectors.push_back(std::move(*s));
  }
  for (const auto& [node, labels] : nodes) {
    std::vector<std::string_view> matched;
    for (std::size_t i = 0; i < selectors.size(); ++i) {
      if (selectors[i].matches(labels))
        matched.push_back(profiles[i]->name);
    }
    if (matched.size() > 1) {
      return fmt::format("{}: node \"{}\" is selected by more than one node strategy: \"{}\"", key,
                         node, fmt::join(matched, "\", \""));
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> validateSloConfigMap(const boost::json::object& config,
                                                const boost::json::object* old_config,
                                                const ConfigMapValidatingOptions& options) {
  auto data = dataOf(config);
  if (!data)
    return data.error().message;
  Data old_data;
  if (old_config != nullptr) {
    auto old = dataOf(*old_config);
    // An old object the API server stored cannot be malformed; if it is, check every key.
    if (old)
      old_data = std::move(*old);
  }
  Data changed;
  for (const auto& [key, text] : *data) {
    if (text.empty())
      continue;
    auto it = old_data.find(key);
    if (old_config != nullptr && it != old_data.end() && it->second == text)
      continue;
    changed.emplace(key, text);
  }
  if (changed.empty())
    return std::nullopt;
  auto parsed = apis::parseSloControllerConfig(changed);
  if (!parsed)
    return parsed.error().message;
  if (!options.nodes)
    return std::nullopt;

  struct KeyProfiles {
    std::string_view key;
    std::vector<const apis::NodeCfgProfile*> profiles;
  };
  std::vector<KeyProfiles> keys{
      {apis::kColocationConfigKey, profilesOf(parsed->colocation.node_configs)},
      {apis::kResourceThresholdConfigKey, profilesOf(parsed->resource_threshold.node_strategies)},
      {apis::kResourceQOSConfigKey, profilesOf(parsed->resource_qos.node_strategies)},
      {apis::kCPUBurstConfigKey, profilesOf(parsed->cpu_burst.node_strategies)},
      {apis::kSystemConfigKey, profilesOf(parsed->system.node_strategies)},
  };
  std::vector<std::pair<std::string, kube::Labels>> nodes;
  for (const auto& k : keys) {
    if (k.profiles.size() < 2 || changed.find(k.key) == changed.end())
      continue;
    if (nodes.empty())
      nodes = options.nodes();
    if (auto conflict = nodeConflict(k.key, k.profiles, nodes))
      return conflict;
  }
  return std::nullopt;
}

Handler configMapValidatingHandler(ConfigMapValidatingOptions options) {
  Handler h;
  h.resource = "configmaps";
  h.kind = "ConfigMap";
  h.admit = [options = std::move(options)](const AdmissionRequest& request) {
    if (request.operation != Operation::kCreate && request.operation != Operation::kUpdate)
      return AdmissionResponse::allow();
    const json::object* meta = metadataOf(request.object);
    std::string ns = stringAt(meta, "namespace");
    if (ns.empty())
      ns = request.namespace_name;
    std::string name = stringAt(meta, "name");
    if (name.empty())
      name = request.name;
    if (ns != options.namespace_name || name != options.name)
      return AdmissionResponse::allow();
    const json::object* old = request.operation == Operation::kUpdate && request.old_object
                                  ? &*request.old_object
                                  : nullptr;
    if (auto refused = validateSloConfigMap(request.object, old, options))
      return AdmissionResponse::errored(400, *refused);
    return AdmissionResponse::allow();
  };
  return h;
}

}  // namespace koord::manager::webhook
