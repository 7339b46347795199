#include "config/descheduler_config.h"

#include <boost/json.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <set>

#include "koord/core/duration.h"
#include "koord/kube/config_file.h"
#include "koord/kube/decode.h"
#include "koord/kube/json_fields.h"
#include "koord/kube/strict_fields.h"
#include "koord/kube/yaml_json.h"

namespace koord::roles::descheduler::config {

namespace {

namespace json = boost::json;
namespace jf = kube::jsonfields;
using namespace kube::strict;

constexpr std::string_view kPointNames[kExtensionPoints] = {"deschedule", "balance", "evict",
                                                            "filter"};

// Koordinator's getDefaultPlugins: MigrationController evicts and filters in every profile.
constexpr std::string_view kMigrationController = "MigrationController";

Expected<std::optional<kube::LabelSelector>> selectorField(const json::object& o,
                                                           std::string_view name,
                                                           std::string_view path) {
  const json::value* v = jf::field(o, name);
  if (v == nullptr || v->is_null())
    return std::optional<kube::LabelSelector>();
  auto s = kube::decodeLabelSelector(*v, jf::childPath(path, name));
  if (!s)
    return s.error();
  // As metav1.LabelSelectorAsSelector will, so a bad operator or value fails at startup.
  if (auto compiled = kube::toSelector(*s); !compiled)
    return fieldError(jf::childPath(path, name), compiled.error().message);
  return std::optional<kube::LabelSelector>(std::move(*s));
}

Expected<std::optional<std::uint32_t>> uintField(const json::object& o, std::string_view name,
                                                 std::string_view path) {
  auto v = int64Field(o, name, path);
  if (!v)
    return v.error();
  if (!*v)
    return std::optional<std::uint32_t>();
  if (**v < 0 || **v > std::numeric_limits<std::uint32_t>::max())
    return fieldError(jf::childPath(path, name),
                      fmt::format("must be a non-negative integer, got {}", **v));
  return std::optional<std::uint32_t>(static_cast<std::uint32_t>(**v));
}

Expected<std::vector<std::string>> pluginNames(const json::object& set, std::string_view name,
                                               std::string_view path) {
  std::vector<std::string> out;
  auto list = arrayField(set, name, path);
  if (!list)
    return list.error();
  if (*list == nullptr)
    return out;
  for (std::size_t i = 0; i < (*list)->size(); ++i) {
    const std::string item_path = jf::indexPath(jf::childPath(path, name), i);
    auto o = asObject((**list)[i], item_path);
    if (!o)
      return o.error();
    if (auto known = rejectUnknownFields(**o, {"name"}, item_path); !known)
      return known.error();
    auto n = stringField(**o, "name", item_path);
    if (!n)
      return n.error();
    if (!*n || (*n)->empty())
      return fieldError(jf::childPath(item_path, "name"), "Required value");
    out.push_back(**n);
  }
  return out;
}

// Koordinator's mergePluginSet: the defaults not disabled (all of them when "*" is), a default
// enabled again in place taking the custom entry, then the custom ones in their order.
std::vector<std::string> merge(const std::vector<std::string>& defaults, const PluginSet& custom) {
  auto disabled = [&](const std::string& n) {
    return std::find(custom.disabled.begin(), custom.disabled.end(), n) != custom.disabled.end();
  };
  std::vector<std::string> out;
  std::set<std::string> taken;
  if (!disabled("*")) {
    for (const auto& d : defaults) {
      if (disabled(d))
        continue;
      out.push_back(d);
      taken.insert(d);
    }
  }
  for (const auto& n : custom.enabled) {
    if (!taken.contains(n))
      out.push_back(n);
  }
  return out;
}

Expected<Profile> parseProfile(const json::value& v, std::size_t index) {
  const std::string path = jf::indexPath("profiles", index);
  auto o = asObject(v, path);
  if (!o)
    return o.error();
  if (auto known =
          rejectUnknownFields(**o, {"name", "pluginConfig", "plugins", "nodeSelector"}, path);
      !known)
    return known.error();
  Profile p;
  auto name = stringField(**o, "name", path);
  if (!name)
    return name.error();
  p.name = name->value_or("");
  auto selector = selectorField(**o, "nodeSelector", path);
  if (!selector)
    return selector.error();
  p.node_selector = std::move(*selector);

  auto plugins = objectField(**o, "plugins", path);
  if (!plugins)
    return plugins.error();
  if (*plugins != nullptr) {
    const std::string plugins_path = jf::childPath(path, "plugins");
    if (auto known = rejectUnknownFields(**plugins, {"deschedule", "balance", "evict", "filter"},
                                         plugins_path);
        !known)
      return known.error();
    for (std::size_t k = 0; k < kExtensionPoints; ++k) {
      auto set = objectField(**plugins, kPointNames[k], plugins_path);
      if (!set)
        return set.error();
      if (*set == nullptr)
        continue;
      const std::string set_path = jf::childPath(plugins_path, kPointNames[k]);
      if (auto known = rejectUnknownFields(**set, {"enabled", "disabled"}, set_path); !known)
        return known.error();
      auto enabled = pluginNames(**set, "enabled", set_path);
      if (!enabled)
        return enabled.error();
      auto disabled = pluginNames(**set, "disabled", set_path);
      if (!disabled)
        return disabled.error();
      p.plugins[k] = {std::move(*enabled), std::move(*disabled)};
    }
  }

  auto configs = arrayField(**o, "pluginConfig", path);
  if (!configs)
    return configs.error();
  if (*configs != nullptr) {
    const std::string list_path = jf::childPath(path, "pluginConfig");
    for (std::size_t j = 0; j < (*configs)->size(); ++j) {
      const std::string item_path = jf::indexPath(list_path, j);
      auto c = asObject((**configs)[j], item_path);
      if (!c)
        return c.error();
      if (auto known = rejectUnknownFields(**c, {"name", "args"}, item_path); !known)
        return known.error();
      auto n = stringField(**c, "name", item_path);
      if (!n)
        return n.error();
      if (!*n || (*n)->empty())
        return fieldError(jf::childPath(item_path, "name"), "Required value");
      for (const auto& seen : p.plugin_config) {
        if (seen.name == **n)
          return fieldError(list_path, fmt::format("Duplicate value: {:?}", **n));
      }
      const json::value* args = jf::field(**c, "args");
      p.plugin_config.push_back({**n, args != nullptr ? *args : json::value(nullptr)});
    }
  }
  return p;
}

// The args body a plugin decodes: apiVersion and kind removed after checking them.
Expected<json::value> argsBody(const PluginConfigEntry& entry, std::string_view path) {
  if (!entry.args.is_object())
    return fieldError(path, fmt::format("must be an object, got {}", jf::kindName(entry.args)));
  json::object body = entry.args.get_object();
  if (const json::value* kind = body.if_contains("kind")) {
    const std::string want = entry.name + "Args";
    if (!kind->is_string() || kind->get_string() != want)
      return fieldError(jf::childPath(path, "kind"),
                        fmt::format("args for plugin {} were not of type {}", entry.name, want));
    body.erase("kind");
  }
  if (const json::value* version = body.if_contains("apiVersion")) {
    if (!version->is_string() || version->get_string() != kApiVersion)
      return fieldError(jf::childPath(path, "apiVersion"),
                        fmt::format("must be {:?}", kApiVersion));
    body.erase("apiVersion");
  }
  return json::value(std::move(body));
}

Expected<void> decodeArgs(Profile& p, std::size_t index, const PluginRegistry& registry) {
  const std::string path = jf::indexPath("profiles", index);
  for (std::size_t j = 0; j < p.plugin_config.size(); ++j) {
    const PluginConfigEntry& entry = p.plugin_config[j];
    const std::string args_path = fmt::format("{}.pluginConfig[{}].args", path, j);
    const PluginFactory* factory = registry.find(entry.name);
    if (factory == nullptr)
      return fieldError(jf::indexPath(jf::childPath(path, "pluginConfig"), j),
                        fmt::format("plugin {:?} is not in this build", entry.name));
    Expected<std::shared_ptr<const PluginArgs>> decoded = std::shared_ptr<const PluginArgs>();
    if (entry.args.is_null()) {
      decoded = factory->decode_args(nullptr, kApiVersion);
    } else {
      auto body = argsBody(entry, args_path);
      if (!body)
        return body.error();
      decoded = factory->decode_args(&*body, kApiVersion);
    }
    if (!decoded)
      return fieldError(args_path, decoded.error().message);
    p.args[entry.name] = std::move(*decoded);
  }
  for (const auto& list : p.enabled) {
    for (const auto& name : list) {
      if (p.args.contains(name))
        continue;
      auto decoded = registry.find(name)->decode_args(nullptr, kApiVersion);
      if (!decoded)
        return fieldError(
            jf::childPath(path, "plugins"),
            fmt::format("default args of plugin {:?}: {}", name, decoded.error().message));
      p.args[name] = std::move(*decoded);
    }
  }
  return {};
}

Expected<void> parseTopLevel(const json::object& o, DeschedulerConfig& out) {
  if (auto known =
          rejectUnknownFields(o,
                              {"apiVersion", "kind", "leaderElection", "clientConnection",
                               "enableProfiling", "enableContentionProfiling", "healthzBindAddress",
                               "metricsBindAddress", "deschedulingInterval", "dryRun", "profiles",
                               "nodeSelector", "maxNoOfPodsToEvictPerNode",
                               "maxNoOfPodsToEvictPerNamespace", "maxNoOfPodsToEvictTotal"},
                              "");
      !known)
    return known.error();
  // Koordinator's defaults for the Lease (koordinator-system/koord-descheduler).
  out.leader_election.resource_name = "koord-descheduler";
  out.leader_election.resource_namespace = "koordinator-system";
  if (auto r = kube::parseComponentBase(o, kube::BindAddresses::kV1beta1, out); !r)
    return r.error();
  auto interval = durationField(o, "deschedulingInterval", "");
  if (!interval)
    return interval.error();
  out.descheduling_interval = interval->value_or(std::chrono::nanoseconds(0));
  if (out.descheduling_interval.count() < 0)
    return fieldError("deschedulingInterval", "must not be negative");
  auto dry = boolField(o, "dryRun", "");
  if (!dry)
    return dry.error();
  out.dry_run = dry->value_or(false);
  auto selector = selectorField(o, "nodeSelector", "");
  if (!selector)
    return selector.error();
  out.node_selector = std::move(*selector);
  for (auto [name, field] :
       {std::pair{"maxNoOfPodsToEvictPerNode", &out.max_pods_to_evict_per_node},
        std::pair{"maxNoOfPodsToEvictPerNamespace", &out.max_pods_to_evict_per_namespace},
        std::pair{"maxNoOfPodsToEvictTotal", &out.max_pods_to_evict_total}}) {
    auto v = uintField(o, name, "");
    if (!v)
      return v.error();
    *field = *v;
  }
  return {};
}

}  // namespace

std::string_view pointName(ExtensionPoint p) {
  return kPointNames[static_cast<std::size_t>(p)];
}

Expected<DeschedulerConfig> parseDeschedulerConfig(const json::value& doc,
                                                   const PluginRegistry& registry) {
  const json::object empty;
  const json::object* o = &empty;
  if (!doc.is_null()) {
    if (!doc.is_object())
      return fieldError("", fmt::format("must be an object, got {}", jf::kindName(doc)));
    o = &doc.get_object();
  }
  if (const json::value* v = o->if_contains("apiVersion");
      v != nullptr && !(v->is_string() && v->get_string() == kApiVersion))
    return fieldError("apiVersion", fmt::format("must be {:?}", kApiVersion));
  if (const json::value* v = o->if_contains("kind");
      v != nullptr && !(v->is_string() && v->get_string() == kKind))
    return fieldError("kind", fmt::format("must be {:?}", kKind));

  DeschedulerConfig out;
  if (auto r = parseTopLevel(*o, out); !r)
    return r.error();

  auto profiles = arrayField(*o, "profiles", "");
  if (!profiles)
    return profiles.error();
  if (*profiles != nullptr) {
    for (std::size_t i = 0; i < (*profiles)->size(); ++i) {
      auto p = parseProfile((**profiles)[i], i);
      if (!p)
        return p.error();
      out.profiles.push_back(std::move(*p));
    }
  }
  if (out.profiles.empty())
    out.profiles.emplace_back();
  if (out.profiles.size() == 1 && out.profiles[0].name.empty())
    out.profiles[0].name = std::string(kDefaultProfileName);

  // The defaults, less what this build lacks.
  std::vector<std::string> defaults[kExtensionPoints];
  std::set<std::string> dropped;
  for (ExtensionPoint point : {ExtensionPoint::kEvict, ExtensionPoint::kFilter}) {
    if (registry.find(kMigrationController) != nullptr)
      defaults[static_cast<std::size_t>(point)].emplace_back(kMigrationController);
    else
      dropped.emplace(kMigrationController);
  }
  out.dropped_default_plugins.assign(dropped.begin(), dropped.end());

  std::set<std::string> names;
  for (std::size_t i = 0; i < out.profiles.size(); ++i) {
    Profile& p = out.profiles[i];
    const std::string path = jf::indexPath("profiles", i);
    if (p.name.empty())
      return fieldError(jf::childPath(path, "name"), "Required value");
    if (!names.insert(p.name).second)
      return fieldError(jf::childPath(path, "name"), fmt::format("Duplicate value: {:?}", p.name));
    for (std::size_t k = 0; k < kExtensionPoints; ++k) {
      const std::string set_path = fmt::format("{}.plugins.{}", path, kPointNames[k]);
      for (const auto& n : p.plugins[k].enabled) {
        if (registry.find(n) == nullptr)
          return fieldError(set_path + ".enabled",
                            fmt::format("plugin {:?} is not in this build", n));
      }
      for (const auto& n : p.plugins[k].disabled) {
        if (n != "*" && registry.find(n) == nullptr && !dropped.contains(n))
          return fieldError(set_path + ".disabled",
                            fmt::format("plugin {:?} is not in this build", n));
      }
      p.enabled[k] = merge(defaults[k], p.plugins[k]);
    }
    if (auto r = decodeArgs(p, i, registry); !r)
      return r.error();
  }
  return out;
}

Expected<DeschedulerConfig> parseDeschedulerConfigText(std::string_view text,
                                                       const PluginRegistry& registry) {
  auto doc = kube::yamlToJson(text);
  if (!doc)
    return doc.error();
  return parseDeschedulerConfig(*doc, registry);
}

Expected<DeschedulerConfig> loadDeschedulerConfig(const std::string& path,
                                                  const PluginRegistry& registry) {
  return kube::loadComponentConfig<DeschedulerConfig>(
      path, [&](std::string_view text) { return parseDeschedulerConfigText(text, registry); });
}

Expected<DeschedulerConfig> defaultDeschedulerConfig(const PluginRegistry& registry) {
  return parseDeschedulerConfig(json::value(nullptr), registry);
}

std::string encodeDeschedulerConfig(const DeschedulerConfig& c) {
  auto selector = [](const kube::LabelSelector& s) {
    json::object o;
    if (!s.match_labels.empty()) {
      json::object labels;
      for (const auto& [k, v] : s.match_labels)
        labels[k] = v;
      o["matchLabels"] = std::move(labels);
    }
    if (!s.match_expressions.empty()) {
      json::array exprs;
      for (const auto& e : s.match_expressions) {
        json::array values;
        for (const auto& v : e.values)
          values.emplace_back(v);
        exprs.push_back(json::object{
            {"key", e.key}, {"operator", kube::toString(e.op)}, {"values", std::move(values)}});
      }
      o["matchExpressions"] = std::move(exprs);
    }
    return o;
  };
  json::object root;
  root["apiVersion"] = kApiVersion;
  root["kind"] = kKind;
  root["leaderElection"] =
      json::object{{"leaderElect", c.leader_election.leader_elect},
                   {"leaseDuration", formatGoDuration(c.leader_election.lease_duration)},
                   {"renewDeadline", formatGoDuration(c.leader_election.renew_deadline)},
                   {"retryPeriod", formatGoDuration(c.leader_election.retry_period)},
                   {"resourceLock", c.leader_election.resource_lock},
                   {"resourceName", c.leader_election.resource_name},
                   {"resourceNamespace", c.leader_election.resource_namespace}};
  root["clientConnection"] = json::object{{"kubeconfig", c.client_connection.kubeconfig},
                                          {"contentType", c.client_connection.content_type},
                                          {"qps", c.client_connection.qps},
                                          {"burst", c.client_connection.burst}};
  root["healthzBindAddress"] = c.healthz_bind_address;
  root["metricsBindAddress"] = c.metrics_bind_address;
  root["enableProfiling"] = c.enable_profiling;
  root["enableContentionProfiling"] = c.enable_contention_profiling;
  root["deschedulingInterval"] = formatGoDuration(c.descheduling_interval);
  root["dryRun"] = c.dry_run;
  if (c.node_selector)
    root["nodeSelector"] = selector(*c.node_selector);
  if (c.max_pods_to_evict_per_node)
    root["maxNoOfPodsToEvictPerNode"] = *c.max_pods_to_evict_per_node;
  if (c.max_pods_to_evict_per_namespace)
    root["maxNoOfPodsToEvictPerNamespace"] = *c.max_pods_to_evict_per_namespace;
  if (c.max_pods_to_evict_total)
    root["maxNoOfPodsToEvictTotal"] = *c.max_pods_to_evict_total;
  json::array profiles;
  for (const Profile& p : c.profiles) {
    json::object prof;
    prof["name"] = p.name;
    json::object plugins;
    for (std::size_t k = 0; k < kExtensionPoints; ++k) {
      json::array enabled;
      for (const auto& n : p.enabled[k])
        enabled.push_back(json::object{{"name", n}});
      plugins[kPointNames[k]] = json::object{{"enabled", std::move(enabled)}};
    }
    prof["plugins"] = std::move(plugins);
    json::array configs;
    for (const auto& e : p.plugin_config)
      configs.push_back(json::object{{"name", e.name}, {"args", e.args}});
    prof["pluginConfig"] = std::move(configs);
    if (p.node_selector)
      prof["nodeSelector"] = selector(*p.node_selector);
    profiles.push_back(std::move(prof));
  }
  root["profiles"] = std::move(profiles);
  return json::serialize(root);
}

}  // namespace koord::roles::descheduler::config
