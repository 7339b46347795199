// `koord scheduler --config`: a KubeSchedulerConfiguration (v1beta1 as Kubernetes 1.20 read it,
// v1beta2, v1beta3, v1) decoded strictly, defaulted, validated against the plugin registry.
#pragma once

#include <boost/json/value.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "extender_config.h"
#include "framework/plugin.h"
#include "framework/plugin_registry.h"
#include "koord/kube/component_config.h"
#include "koord/kube/error.h"
#include "plugin_set.h"

namespace koord::roles::scheduler::config {

/// One pluginConfig entry as written.
struct PluginConfigEntry {
  std::string name;
  /// The args as written (apiVersion and kind included); null when none were given.
  boost::json::value args;
};

struct Profile {
  /// Position in `profiles`, for error paths.
  std::size_t index = 0;
  std::string scheduler_name;
  /// v1beta3/v1 only; unset: the configuration's percentage applies.
  std::optional<std::int32_t> percentage_of_nodes_to_score;
  /// `plugins` as written.
  Plugins plugins;
  /// The apiVersion's defaults (less those this build lacks) merged with `plugins` per point,
  /// MultiPoint included. A version without MultiPoint defaults (v1beta1, v1beta2) has its
  /// effective lists here; expandPlugins() gives every version's.
  Plugins merged;
  std::vector<PluginConfigEntry> plugin_config;
  /// Decoded args of every plugin named in pluginConfig or enabled anywhere in `merged` (those
  /// without pluginConfig decoded from null: their defaults). A null pointer: no args.
  std::map<std::string, std::shared_ptr<const PluginArgs>, std::less<>> args;
};

/// clientConnection, leaderElection, the bind addresses (v1beta1: "0.0.0.0:10251" by default,
/// host:port; empty otherwise, v1beta2 accepting only an empty address or port 0, i.e. off) and
/// the profiling switches are ComponentBase's.
struct SchedulerConfig : kube::ComponentBase {
  /// As written, e.g. "kubescheduler.config.k8s.io/v1beta1".
  std::string api_version;
  ApiVersion version = ApiVersion::kV1;
  std::int32_t parallelism = 16;
  /// 0: adaptive.
  std::int32_t percentage_of_nodes_to_score = 0;
  std::int64_t pod_initial_backoff_seconds = 1;
  std::int64_t pod_max_backoff_seconds = 10;
  /// v1beta3/v1.
  bool delay_cache_until_active = false;
  /// At least one; a file without profiles gets "default-scheduler".
  std::vector<Profile> profiles;
  /// `extenders`, shared by every profile. Their managed resources with ignoredByScheduler are
  /// each profile's NodeResourcesFit ignoredResources (replacing what its args say, as
  /// kube-scheduler does): a pluginConfig entry is added or changed before the args decode.
  std::vector<Extender> extenders;
};

/// Decodes and validates a configuration. Every plugin named in a profile must be in `registry`
/// (a `disabled` entry may also be "*" or any upstream in-tree name), and so must every default
/// plugin a profile leaves enabled. Each pluginConfig's args go through the plugin's decode_args
/// with apiVersion and kind removed (kind, when given, must be "<Name>Args"; apiVersion, when
/// given, a kubescheduler.config.k8s.io version, is the version decode_args is told, else the
/// file's). Errors name the field path, e.g.
///   profiles[0].plugins.filter.enabled[1].name: unknown plugin "Foo"
///   profiles[0].pluginConfig[2].args: <the plugin's message>
kube::Expected<SchedulerConfig> parseSchedulerConfig(const boost::json::value& doc,
                                                     const PluginRegistry& registry);
/// The YAML (or JSON) text of a configuration: yamlToJson, then the above.
kube::Expected<SchedulerConfig> parseSchedulerConfigText(std::string_view text,
                                                         const PluginRegistry& registry);
/// The file at `path` (kube::readConfigFile's bound); errors start with the path. Fields that
/// have no effect in koord are logged as warnings, once each.
kube::Expected<SchedulerConfig> loadSchedulerConfig(const std::string& path,
                                                    const PluginRegistry& registry);

/// One line for the startup log: the apiVersion, each profile's plugins per extension point as
/// merged (Score and MultiPoint entries with their weights).
std::string describe(const SchedulerConfig& config);

}  // namespace koord::roles::scheduler::config
