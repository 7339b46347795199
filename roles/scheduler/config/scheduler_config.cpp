#include "scheduler_config.h"

#include <boost/json.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <utility>

#include "default_plugins.h"
#include "koord/kube/config_file.h"
#include "koord/kube/json_fields.h"
#include "koord/kube/strict_fields.h"
#include "koord/kube/yaml_json.h"
#include "profile_plugins.h"

namespace koord::roles::scheduler::config {

// The strict field reads moved to koord_kube when the descheduler needed them too.
using namespace kube::strict;
using kube::yamlToJson;
namespace {

namespace json = boost::json;
namespace jf = kube::jsonfields;
using kube::Expected;

constexpr std::string_view kKind = "KubeSchedulerConfiguration";
constexpr std::string_view kDefaultSchedulerName = "default-scheduler";

// ---- profiles ----

Expected<Profile> parseProfile(const json::value& v, std::size_t index, std::size_t count,
                               ApiVersion version, const PluginRegistry& registry) {
  Profile out;
  out.index = index;
  const std::string path = fmt::format("profiles[{}]", index);
  auto obj = asObject(v, path);
  if (!obj)
    return obj.error();
  const json::object& o = **obj;
  const bool per_profile_percentage = version == ApiVersion::kV1beta3 || version == ApiVersion::kV1;
  auto known =
      per_profile_percentage
          ? rejectUnknownFields(
                o, {"schedulerName", "plugins", "pluginConfig", "percentageOfNodesToScore"}, path)
          : rejectUnknownFields(o, {"schedulerName", "plugins", "pluginConfig"}, path);
  if (!known)
    return known.error();
  auto name = stringField(o, "schedulerName", path);
  if (!name)
    return name.error();
  // Only a lone profile gets the default name; several must each say theirs.
  if (!*name && count == 1)
    out.scheduler_name = kDefaultSchedulerName;
  else
    out.scheduler_name = name->value_or("");
  if (out.scheduler_name.empty())
    return fieldError(jf::childPath(path, "schedulerName"), "required");
  if (per_profile_percentage) {
    auto pct = int32Field(o, "percentageOfNodesToScore", path);
    if (!pct)
      return pct.error();
    if (*pct && (**pct < 0 || **pct > 100)) {
      return fieldError(jf::childPath(path, "percentageOfNodesToScore"),
                        fmt::format("{} is not in the valid range [0-100]", **pct));
    }
    out.percentage_of_nodes_to_score = *pct;
  }
  auto plugins = parsePlugins(o, path, version, registry);
  if (!plugins)
    return plugins.error();
  out.plugins = std::move(*plugins);
  auto plugin_config = parsePluginConfig(o, path, registry);
  if (!plugin_config)
    return plugin_config.error();
  out.plugin_config = std::move(*plugin_config);
  return out;
}

bool samePluginSet(const PluginSet& a, const PluginSet& b) {
  if (a.enabled.size() != b.enabled.size() || a.disabled != b.disabled)
    return false;
  for (std::size_t i = 0; i < a.enabled.size(); ++i) {
    if (a.enabled[i].name != b.enabled[i].name || a.enabled[i].weight != b.enabled[i].weight)
      return false;
  }
  return true;
}

const json::value* pluginConfigArgs(const Profile& p, std::string_view name, std::size_t* index) {
  for (std::size_t j = 0; j < p.plugin_config.size(); ++j) {
    if (p.plugin_config[j].name == name) {
      *index = j;
      return &p.plugin_config[j].args;
    }
  }
  return nullptr;
}

// Pods of every profile share one queue, so its sort (and the sort plugin's args) must agree.
Expected<void> validateProfiles(const std::vector<Profile>& profiles) {
  for (std::size_t i = 0; i < profiles.size(); ++i) {
    const std::string path = fmt::format("profiles[{}]", i);
    for (std::size_t k = 0; k < i; ++k) {
      if (profiles[k].scheduler_name == profiles[i].scheduler_name) {
        return fieldError(jf::childPath(path, "schedulerName"),
                          fmt::format("duplicate value {:?} (also profiles[{}].schedulerName)",
                                      profiles[i].scheduler_name, k));
      }
    }
    const PluginSet& sort = profiles[i].merged[ExtensionPoint::kQueueSort];
    if (sort.enabled.size() > 1) {
      return fieldError(
          jf::childPath(path, "plugins.queueSort.enabled"),
          fmt::format("only one queue sort plugin can be enabled, got {}", sort.enabled.size()));
    }
    if (i == 0)
      continue;
    if (!samePluginSet(sort, profiles[0].merged[ExtensionPoint::kQueueSort]))
      return fieldError(jf::childPath(path, "plugins.queueSort"),
                        "must be the same for all profiles");
    for (const PluginRef& p : profiles[0].merged[ExtensionPoint::kQueueSort].enabled) {
      const json::value null_args(nullptr);
      std::size_t j0 = 0;
      std::size_t j = 0;
      const json::value* first = pluginConfigArgs(profiles[0], p.name, &j0);
      const json::value* mine = pluginConfigArgs(profiles[i], p.name, &j);
      if ((first != nullptr ? *first : null_args) == (mine != nullptr ? *mine : null_args))
        continue;
      const std::string where = mine != nullptr ? fmt::format("{}.pluginConfig[{}].args", path, j)
                                                : jf::childPath(path, "pluginConfig");
      return fieldError(where, fmt::format("the queue sort plugin {:?} must have the same args "
                                           "in all profiles",
                                           p.name));
    }
  }
  return {};
}

// ---- the configuration ----

// v1beta3 dropped the fields; v1beta2 kept them only to refuse anything but "off".
kube::BindAddresses bindAddresses(ApiVersion v) {
  if (v == ApiVersion::kV1beta1)
    return kube::BindAddresses::kV1beta1;
  if (v == ApiVersion::kV1beta2)
    return kube::BindAddresses::kV1beta2;
  return kube::BindAddresses::kAbsent;
}

Expected<void> parseTopLevel(const json::object& o, SchedulerConfig& out) {
  const ApiVersion v = out.version;
  const bool bind_addresses = v == ApiVersion::kV1beta1 || v == ApiVersion::kV1beta2;
  const auto known =
      bind_addresses
          ? rejectUnknownFields(
                o,
                {"apiVersion", "kind", "parallelism", "leaderElection", "clientConnection",
                 "healthzBindAddress", "metricsBindAddress", "enableProfiling",
                 "enableContentionProfiling", "percentageOfNodesToScore",
                 "podInitialBackoffSeconds", "podMaxBackoffSeconds", "profiles", "extenders"},
                "")
          : rejectUnknownFields(
                o,
                {"apiVersion", "kind", "parallelism", "leaderElection", "clientConnection",
                 "enableProfiling", "enableContentionProfiling", "percentageOfNodesToScore",
                 "podInitialBackoffSeconds", "podMaxBackoffSeconds", "profiles", "extenders",
                 "delayCacheUntilActive"},
                "");
  if (!known)
    return known.error();

  auto parallelism = int32Field(o, "parallelism", "");
  if (!parallelism)
    return parallelism.error();
  out.parallelism = parallelism->value_or(16);
  if (out.parallelism <= 0) {
    return fieldError("parallelism", fmt::format("should be an integer value greater than zero, "
                                                 "got {}",
                                                 out.parallelism));
  }
  if (auto r = kube::parseComponentBase(o, bindAddresses(v), out); !r)
    return r.error();

  auto pct = int32Field(o, "percentageOfNodesToScore", "");
  if (!pct)
    return pct.error();
  out.percentage_of_nodes_to_score = pct->value_or(0);
  if (out.percentage_of_nodes_to_score < 0 || out.percentage_of_nodes_to_score > 100) {
    return fieldError(
        "percentageOfNodesToScore",
        fmt::format("{} is not in the valid range [0-100]", out.percentage_of_nodes_to_score));
  }
  auto initial = int64Field(o, "podInitialBackoffSeconds", "");
  if (!initial)
    return initial.error();
  out.pod_initial_backoff_seconds = initial->value_or(1);
  if (out.pod_initial_backoff_seconds <= 0) {
    return fieldError("podInitialBackoffSeconds", fmt::format("must be greater than 0, got {}",
                                                              out.pod_initial_backoff_seconds));
  }
  auto max = int64Field(o, "podMaxBackoffSeconds", "");
  if (!max)
    return max.error();
  out.pod_max_backoff_seconds = max->value_or(10);
  if (out.pod_max_backoff_seconds < out.pod_initial_backoff_seconds) {
    return fieldError("podMaxBackoffSeconds",
                      fmt::format("must be greater than or equal to podInitialBackoffSeconds ({}), "
                                  "got {}",
                                  out.pod_initial_backoff_seconds, out.pod_max_backoff_seconds));
  }
  auto delay = boolField(o, "delayCacheUntilActive", "");
  if (!delay)
    return delay.error();
  out.delay_cache_until_active = delay->value_or(false);

  auto extenders = parseExtenders(o);
  if (!extenders)
    return extenders.error();
  out.extenders = std::move(*extenders);
  return {};
}

// kube-scheduler hands the extenders' ignored resources to NodeResourcesFit in every profile,
// replacing the args' own list.
void applyExtenderIgnoredResources(std::vector<Profile>& profiles,
                                   const std::vector<Extender>& extenders,
                                   const PluginRegistry& registry) {
  const std::vector<std::string> ignored = ignoredExtenderResources(extenders);
  constexpr std::string_view kFit = "NodeResourcesFit";
  if (ignored.empty() || registry.find(kFit) == nullptr)
    return;
  json::array names;
  for (const std::string& n : ignored)
    names.emplace_back(n);
  for (Profile& p : profiles) {
    auto it = std::find_if(p.plugin_config.begin(), p.plugin_config.end(),
                           [&](const PluginConfigEntry& e) { return e.name == kFit; });
    if (it == p.plugin_config.end()) {
      p.plugin_config.push_back({std::string(kFit), json::object{{"ignoredResources", names}}});
    } else if (it->args.is_null()) {
      it->args = json::object{{"ignoredResources", names}};
    } else if (it->args.is_object()) {
      it->args.as_object()["ignoredResources"] = names;
    }
    // Args of another JSON type are left for the decoder's error.
  }
}

// A default plugin of the version that a profile leaves enabled must be in this build: running
// without it would place pods kube-scheduler would not. Disabling it is the operator's choice.
Expected<void> requireMergedPlugins(const std::vector<Profile>& profiles,
                                    const PluginRegistry& registry, std::string_view api_version) {
  for (std::size_t i = 0; i < profiles.size(); ++i) {
    for (std::size_t k = 0; k < kExtensionPointCount; ++k) {
      const auto point = static_cast<ExtensionPoint>(k);
      for (const PluginRef& ref : profiles[i].merged[point].enabled) {
        if (registry.find(ref.name) != nullptr)
          continue;
        return fieldError(
            fmt::format("profiles[{}].plugins.{}", i, extensionPointKey(point)),
            fmt::format("default plugin {:?} of {} is not in this build of koord (disable it "
                        "there to run without it)",
                        ref.name, api_version));
      }
    }
  }
  return {};
}

std::string describeSet(const PluginSet& set, bool weights) {
  std::string out;
  for (const PluginRef& p : set.enabled) {
    if (!out.empty())
      out += ", ";
    out += p.name;
    if (weights && p.weight > 0)
      out += fmt::format("({})", p.weight);
  }
  return out;
}

}  // namespace

Expected<SchedulerConfig> parseSchedulerConfig(const json::value& doc,
                                               const PluginRegistry& registry) {
  if (!doc.is_object())
    return jf::typeError("", "a KubeSchedulerConfiguration object", doc);
  const json::object& o = doc.get_object();
  SchedulerConfig out;
  auto api_version = stringField(o, "apiVersion", "");
  if (!api_version)
    return api_version.error();
  if (!*api_version)
    return fieldError("apiVersion", "required");
  const auto version = apiVersionByName(**api_version);
  if (!version) {
    return fieldError("apiVersion",
                      fmt::format("unsupported {:?} (want {}/v1beta1, v1beta2, v1beta3 or v1)",
                                  **api_version, kConfigGroup));
  }
  out.api_version = **api_version;
  out.version = *version;
  auto kind = stringField(o, "kind", "");
  if (!kind)
    return kind.error();
  if (!*kind)
    return fieldError("kind", "required");
  if (**kind != kKind)
    return fieldError("kind", fmt::format("must be {:?}, got {:?}", kKind, **kind));

  if (auto r = parseTopLevel(o, out); !r)
    return r.error();

  auto profiles = arrayField(o, "profiles", "");
  if (!profiles)
    return profiles.error();
  const std::size_t count = *profiles != nullptr ? (*profiles)->size() : 0;
  if (count == 0) {
    Profile p;
    p.scheduler_name = kDefaultSchedulerName;
    out.profiles.push_back(std::move(p));
  }
  for (std::size_t i = 0; i < count; ++i) {
    auto p = parseProfile((**profiles)[i], i, count, out.version, registry);
    if (!p)
      return p.error();
    out.profiles.push_back(std::move(*p));
  }

  const Plugins defaults = defaultPlugins(out.version);
  for (Profile& p : out.profiles) {
    for (std::size_t k = 0; k < kExtensionPointCount; ++k)
      p.merged.sets[k] = mergePluginSet(defaults.sets[k], p.plugins.sets[k]);
  }
  if (auto r = requireMergedPlugins(out.profiles, registry, out.api_version); !r)
    return r.error();
  if (auto r = validateProfiles(out.profiles); !r)
    return r.error();
  applyExtenderIgnoredResources(out.profiles, out.extenders, registry);
  for (Profile& p : out.profiles) {
    if (auto r = decodeProfileArgs(p, out.api_version, registry); !r)
      return r.error();
  }
  return out;
}

Expected<SchedulerConfig> parseSchedulerConfigText(std::string_view text,
                                                   const PluginRegistry& registry) {
  auto doc = yamlToJson(text);
  if (!doc)
    return doc.error();
  return parseSchedulerConfig(*doc, registry);
}

Expected<SchedulerConfig> loadSchedulerConfig(const std::string& path,
                                              const PluginRegistry& registry) {
  return kube::loadComponentConfig<SchedulerConfig>(
      path, [&](std::string_view text) { return parseSchedulerConfigText(text, registry); });
}

std::string describe(const SchedulerConfig& config) {
  std::string out = config.api_version;
  for (const Profile& p : config.profiles) {
    out += fmt::format(" profile {:?} {{", p.scheduler_name);
    std::string points;
    // MultiPoint first: with v1beta3/v1 it holds most of the defaults.
    const auto add = [&](ExtensionPoint point) {
      const PluginSet& set = p.merged[point];
      if (set.enabled.empty())
        return;
      const bool weights = point == ExtensionPoint::kScore || point == ExtensionPoint::kMultiPoint;
      if (!points.empty())
        points += "; ";
      points += fmt::format("{}: {}", extensionPointKey(point), describeSet(set, weights));
    };
    add(ExtensionPoint::kMultiPoint);
    for (std::size_t k = 0; k + 1 < kExtensionPointCount; ++k)
      add(static_cast<ExtensionPoint>(k));
    out += points + "}";
  }
  for (std::size_t i = 0; i < config.extenders.size(); ++i) {
    const Extender& e = config.extenders[i];
    std::vector<std::string> verbs;
    if (!e.filter_verb.empty())
      verbs.push_back("filter");
    if (!e.prioritize_verb.empty())
      verbs.push_back(fmt::format("prioritize({})", e.weight));
    if (!e.bind_verb.empty())
      verbs.push_back("bind");
    if (!e.preempt_verb.empty())
      verbs.push_back("preempt");
    out += fmt::format("{}{} {{{}}}", i == 0 ? "; extenders: " : ", ", e.url_prefix,
                       fmt::join(verbs, ", "));
  }
  return out;
}

}  // namespace koord::roles::scheduler::config
