#include "profile_plugins.h"

#include <boost/json.hpp>

#include <fmt/format.h>

#include <memory>
#include <string>
#include <utility>

#include "default_plugins.h"
#include "koord/kube/json_fields.h"
#include "koord/kube/strict_fields.h"

namespace koord::roles::scheduler::config {

// The strict field reads moved to koord_kube when the descheduler needed them too.
using namespace kube::strict;
namespace {

namespace json = boost::json;
namespace jf = kube::jsonfields;
using kube::Expected;

kube::Error unknownPlugin(std::string_view path, std::string_view name) {
  if (isUpstreamPluginName(name)) {
    return fieldError(path,
                      fmt::format("unknown plugin {:?} (a kube-scheduler plugin this build does "
                                  "not have)",
                                  name));
  }
  return fieldError(path, fmt::format("unknown plugin {:?}", name));
}

Expected<std::string> pluginName(const json::object& o, std::string_view path) {
  auto name = stringField(o, "name", path);
  if (!name)
    return name.error();
  if (!*name || (*name)->empty())
    return fieldError(jf::childPath(path, "name"), "required");
  return **name;
}

Expected<PluginSet> parsePluginSet(const json::value& v, std::string_view path,
                                   const PluginRegistry& registry) {
  PluginSet out;
  if (v.is_null())
    return out;
  auto obj = asObject(v, path);
  if (!obj)
    return obj.error();
  const json::object& o = **obj;
  if (auto r = rejectUnknownFields(o, {"enabled", "disabled"}, path); !r)
    return r.error();
  auto enabled = arrayField(o, "enabled", path);
  if (!enabled)
    return enabled.error();
  if (*enabled != nullptr) {
    const std::string list_path = jf::childPath(path, "enabled");
    for (std::size_t i = 0; i < (*enabled)->size(); ++i) {
      const std::string item_path = jf::indexPath(list_path, i);
      auto item = asObject((**enabled)[i], item_path);
      if (!item)
        return item.error();
      if (auto r = rejectUnknownFields(**item, {"name", "weight"}, item_path); !r)
        return r.error();
      auto name = pluginName(**item, item_path);
      if (!name)
        return name.error();
      if (registry.find(*name) == nullptr)
        return unknownPlugin(jf::childPath(item_path, "name"), *name);
      if (const PluginRef* first = out.findEnabled(*name)) {
        return fieldError(
            jf::childPath(item_path, "name"),
            fmt::format("plugin {:?} is already enabled at {}", *name, first->origin));
      }
      auto weight = int32Field(**item, "weight", item_path);
      if (!weight)
        return weight.error();
      if (*weight && **weight < 0) {
        return fieldError(jf::childPath(item_path, "weight"),
                          fmt::format("must not be negative, got {}", **weight));
      }
      out.enabled.push_back(PluginRef{*name, weight->value_or(0), item_path});
    }
  }
  auto disabled = arrayField(o, "disabled", path);
  if (!disabled)
    return disabled.error();
  if (*disabled != nullptr) {
    const std::string list_path = jf::childPath(path, "disabled");
    for (std::size_t i = 0; i < (*disabled)->size(); ++i) {
      const std::string item_path = jf::indexPath(list_path, i);
      auto item = asObject((**disabled)[i], item_path);
      if (!item)
        return item.error();
      // Upstream's disabled entries are Plugin too; a weight there means nothing.
      if (auto r = rejectUnknownFields(**item, {"name", "weight"}, item_path); !r)
        return r.error();
      if (auto weight = int32Field(**item, "weight", item_path); !weight)
        return weight.error();
      auto name = pluginName(**item, item_path);
      if (!name)
        return name.error();
      if (*name != "*" && registry.find(*name) == nullptr && !isUpstreamPluginName(*name))
        return unknownPlugin(jf::childPath(item_path, "name"), *name);
      out.disabled.push_back(*name);
    }
  }
  return out;
}

Expected<std::shared_ptr<const PluginArgs>> decode(const PluginFactory& factory,
                                                   const json::value* args,
                                                   std::string_view api_version) {
  if (!factory.decode_args) {
    // A plugin without a decoder takes no args.
    if (args != nullptr && !(args->is_object() && args->get_object().empty()))
      return kube::makeKubeError("the plugin takes no args");
    return std::shared_ptr<const PluginArgs>();
  }
  return factory.decode_args(args, api_version);
}

// The args without their TypeMeta, and the apiVersion they are in.
Expected<std::pair<json::value, std::string>> argsBody(const PluginConfigEntry& entry,
                                                       std::string_view file_version,
                                                       std::string_view path) {
  auto obj = asObject(entry.args, path);
  if (!obj)
    return obj.error();
  json::object body = **obj;
  std::string version(file_version);
  auto api_version = stringField(body, "apiVersion", path);
  if (!api_version)
    return api_version.error();
  if (*api_version) {
    if (!apiVersionByName(**api_version)) {
      return fieldError(jf::childPath(path, "apiVersion"),
                        fmt::format("unsupported {:?} (want {}/v1beta1, v1beta2, v1beta3 or v1)",
                                    **api_version, kConfigGroup));
    }
    version = **api_version;
  }
  auto kind = stringField(body, "kind", path);
  if (!kind)
    return kind.error();
  const std::string want_kind = entry.name + "Args";
  if (*kind && **kind != want_kind) {
    return fieldError(jf::childPath(path, "kind"),
                      fmt::format("must be {:?}, got {:?}", want_kind, **kind));
  }
  body.erase("apiVersion");
  body.erase("kind");
  return std::pair{json::value(std::move(body)), std::move(version)};
}

}  // namespace

Expected<Plugins> parsePlugins(const json::object& profile, std::string_view profile_path,
                               ApiVersion version, const PluginRegistry& registry) {
  Plugins out;
  auto obj = objectField(profile, "plugins", profile_path);
  if (!obj)
    return obj.error();
  if (*obj == nullptr)
    return out;
  const std::string path = jf::childPath(profile_path, "plugins");
  for (const auto& member : **obj) {
    const std::string_view key(member.key().data(), member.key().size());
    const auto point = extensionPointByKey(key);
    if (!point) {
      return fieldError(path, fmt::format("unknown extension point {:?}", key));
    }
    if (!hasExtensionPoint(version, *point)) {
      return fieldError(path, fmt::format("unknown extension point {:?} (not in {})", key,
                                          apiVersionName(version)));
    }
    auto set = parsePluginSet(member.value(), jf::childPath(path, key), registry);
    if (!set)
      return set.error();
    out[*point] = std::move(*set);
  }
  return out;
}

Expected<std::vector<PluginConfigEntry>> parsePluginConfig(const json::object& profile,
                                                           std::string_view profile_path,
                                                           const PluginRegistry& registry) {
  std::vector<PluginConfigEntry> out;
  auto list = arrayField(profile, "pluginConfig", profile_path);
  if (!list)
    return list.error();
  if (*list == nullptr)
    return out;
  const std::string path = jf::childPath(profile_path, "pluginConfig");
  for (std::size_t j = 0; j < (*list)->size(); ++j) {
    const std::string item_path = jf::indexPath(path, j);
    auto item = asObject((**list)[j], item_path);
    if (!item)
      return item.error();
    if (auto r = rejectUnknownFields(**item, {"name", "args"}, item_path); !r)
      return r.error();
    auto name = pluginName(**item, item_path);
    if (!name)
      return name.error();
    if (registry.find(*name) == nullptr)
      return unknownPlugin(jf::childPath(item_path, "name"), *name);
    for (std::size_t k = 0; k < out.size(); ++k) {
      if (out[k].name == *name) {
        return fieldError(jf::childPath(item_path, "name"),
                          fmt::format("duplicate pluginConfig for {:?} (first at {})", *name,
                                      jf::indexPath(path, k)));
      }
    }
    const json::value* args = jf::field(**item, "args");
    out.push_back(PluginConfigEntry{*name, args != nullptr ? *args : json::value(nullptr)});
  }
  return out;
}

Expected<void> decodeProfileArgs(Profile& profile, std::string_view file_version,
                                 const PluginRegistry& registry) {
  const std::string profile_path = fmt::format("profiles[{}]", profile.index);
  for (std::size_t j = 0; j < profile.plugin_config.size(); ++j) {
    const PluginConfigEntry& entry = profile.plugin_config[j];
    const std::string args_path = fmt::format("{}.pluginConfig[{}].args", profile_path, j);
    const PluginFactory* factory = registry.find(entry.name);
    Expected<std::shared_ptr<const PluginArgs>> decoded = std::shared_ptr<const PluginArgs>();
    if (entry.args.is_null()) {
      decoded = decode(*factory, nullptr, file_version);
    } else {
      auto body = argsBody(entry, file_version, args_path);
      if (!body)
        return body.error();
      decoded = decode(*factory, &body->first, body->second);
    }
    if (!decoded)
      return fieldError(args_path, decoded.error().message);
    profile.args[entry.name] = std::move(*decoded);
  }
  for (const PluginSet& set : profile.merged.sets) {
    for (const PluginRef& p : set.enabled) {
      if (profile.args.contains(p.name))
        continue;
      auto decoded = decode(*registry.find(p.name), nullptr, file_version);
      if (!decoded) {
        return fieldError(
            jf::childPath(profile_path, "plugins"),
            fmt::format("default args of plugin {:?}: {}", p.name, decoded.error().message));
      }
      profile.args[p.name] = std::move(*decoded);
    }
  }
  return {};
}

}  // namespace koord::roles::scheduler::config
