// `koord descheduler --config`: a DeschedulerConfiguration (descheduler/v1alpha2, as Koordinator
// spells it) decoded strictly, defaulted as Koordinator defaults it, its plugins' args decoded.
#pragma once

#include <boost/json/value.hpp>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "framework/plugin.h"
#include "framework/plugin_registry.h"
#include "koord/kube/component_config.h"
#include "koord/kube/error.h"
#include "koord/kube/labels.h"

namespace koord::roles::descheduler::config {

inline constexpr std::string_view kApiVersion = "descheduler/v1alpha2";
inline constexpr std::string_view kKind = "DeschedulerConfiguration";
inline constexpr std::string_view kDefaultProfileName = "koord-descheduler";

/// The four extension points a profile's `plugins` lists.
enum class ExtensionPoint { kDeschedule, kBalance, kEvict, kFilter };
inline constexpr std::size_t kExtensionPoints = 4;
std::string_view pointName(ExtensionPoint p);

struct PluginSet {
  std::vector<std::string> enabled;
  std::vector<std::string> disabled;
};

struct PluginConfigEntry {
  std::string name;
  /// The args as written (apiVersion and kind included); null when none were given.
  boost::json::value args;
};

struct Profile {
  std::string name;
  /// `plugins` as written, per extension point.
  PluginSet plugins[kExtensionPoints];
  /// Koordinator's defaults (MigrationController at evict and filter) merged with `plugins`,
  /// less the defaults this build lacks.
  std::vector<std::string> enabled[kExtensionPoints];
  std::vector<PluginConfigEntry> plugin_config;
  std::optional<kube::LabelSelector> node_selector;
  /// Decoded args of every plugin enabled or given pluginConfig (null pointer: no args type).
  std::map<std::string, std::shared_ptr<const PluginArgs>, std::less<>> args;

  const std::vector<std::string>& at(ExtensionPoint p) const {
    return enabled[static_cast<std::size_t>(p)];
  }
};

/// leaderElection, clientConnection, the bind addresses (read as v1beta1 read them) and the
/// profiling switches are ComponentBase's.
struct DeschedulerConfig : kube::ComponentBase {
  /// 0: one pass, then the descheduler stops (Koordinator's behaviour).
  std::chrono::nanoseconds descheduling_interval{0};
  bool dry_run = false;
  std::vector<Profile> profiles;
  std::optional<kube::LabelSelector> node_selector;
  std::optional<std::uint32_t> max_pods_to_evict_per_node;
  std::optional<std::uint32_t> max_pods_to_evict_per_namespace;
  std::optional<std::uint32_t> max_pods_to_evict_total;
  /// Default plugins the registry does not have, left out of every profile (sorted).
  std::vector<std::string> dropped_default_plugins;
};

/// Decodes, defaults and validates a configuration document (JSON already): unknown fields,
/// wrong types, plugins the registry lacks, duplicate profiles or pluginConfig entries and bad
/// args are errors naming the path.
Expected<DeschedulerConfig> parseDeschedulerConfig(const boost::json::value& doc,
                                                   const PluginRegistry& registry);
/// The same from YAML (or JSON) text.
Expected<DeschedulerConfig> parseDeschedulerConfigText(std::string_view text,
                                                       const PluginRegistry& registry);
/// The file at `path` (kube::readConfigFile's bound); errors start with the path. Fields that
/// have no effect in koord are logged as warnings, once each.
Expected<DeschedulerConfig> loadDeschedulerConfig(const std::string& path,
                                                  const PluginRegistry& registry);
/// What an empty file gives: one profile "koord-descheduler" with the defaults.
Expected<DeschedulerConfig> defaultDeschedulerConfig(const PluginRegistry& registry);

/// The effective configuration as YAML-compatible JSON (`--write-config-to`): defaults filled
/// in, each profile's merged plugin lists, pluginConfig args as written.
std::string encodeDeschedulerConfig(const DeschedulerConfig& config);

}  // namespace koord::roles::descheduler::config
