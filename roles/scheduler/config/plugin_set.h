// The plugins part of a KubeSchedulerConfiguration profile: extension points, per-point
// enabled/disabled sets, and upstream's rule for merging a profile's sets into the defaults.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace koord::roles::scheduler::config {

/// The configuration's apiVersions, kubescheduler.config.k8s.io/<version>.
enum class ApiVersion : std::uint8_t { kV1beta1, kV1beta2, kV1beta3, kV1 };

inline constexpr std::string_view kConfigGroup = "kubescheduler.config.k8s.io";
/// "kubescheduler.config.k8s.io/v1beta1" and so on.
std::string_view apiVersionName(ApiVersion v);
std::optional<ApiVersion> apiVersionByName(std::string_view api_version);

/// The keys of a profile's `plugins`, in the order they run; kMultiPoint last.
enum class ExtensionPoint : std::uint8_t {
  kPreEnqueue,
  kQueueSort,
  kPreFilter,
  kFilter,
  kPostFilter,
  kPreScore,
  kScore,
  kReserve,
  kPermit,
  kPreBind,
  kBind,
  kPostBind,
  kMultiPoint,
};
inline constexpr std::size_t kExtensionPointCount = 13;

/// The YAML key: "preEnqueue", "queueSort", ..., "multiPoint".
std::string_view extensionPointKey(ExtensionPoint p);
/// nullopt for a key that is not an extension point.
std::optional<ExtensionPoint> extensionPointByKey(std::string_view key);
/// Whether `version` has the key: multiPoint from v1beta2, preEnqueue from v1beta3.
bool hasExtensionPoint(ApiVersion version, ExtensionPoint p);

struct PluginRef {
  std::string name;
  /// As configured; 0 when none was given (a Score plugin then weighs 1).
  std::int32_t weight = 0;
  /// Where it was enabled ("profiles[0].plugins.score.enabled[1]"); empty for a default.
  std::string origin;
};

struct PluginSet {
  std::vector<PluginRef> enabled;
  /// Names, "*" for every default.
  std::vector<std::string> disabled;

  bool disablesAll() const;
  bool disables(std::string_view name) const;
  const PluginRef* findEnabled(std::string_view name) const;
};

/// One PluginSet per extension point.
struct Plugins {
  std::array<PluginSet, kExtensionPointCount> sets;

  PluginSet& operator[](ExtensionPoint p) { return sets[static_cast<std::size_t>(p)]; }
  const PluginSet& operator[](ExtensionPoint p) const { return sets[static_cast<std::size_t>(p)]; }
};

/// kube-scheduler's mergePluginSet: the defaults not disabled (none when "*" is), in their order,
/// each replaced in place by a custom entry of the same name (its weight too); then the custom
/// entries that replaced nothing, in their order. Disabled names carry over, so MultiPoint
/// expansion later skips them.
PluginSet mergePluginSet(const PluginSet& defaults, const PluginSet& custom);

}  // namespace koord::roles::scheduler::config
