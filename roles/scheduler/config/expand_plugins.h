// A profile's plugins per extension point as the framework runs them: the merged per-point lists
// with MultiPoint expanded into every point a plugin implements, as kube-scheduler's framework
// does.
#pragma once

#include <array>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "koord/kube/error.h"
#include "plugin_set.h"
#include "scheduler_config.h"

namespace koord::roles::scheduler::config {

struct EffectivePlugins {
  /// In run order; the kMultiPoint slot stays empty. Score entries carry their weight (>= 1).
  std::array<std::vector<PluginRef>, kExtensionPointCount> points;

  const std::vector<PluginRef>& operator[](ExtensionPoint p) const {
    return points[static_cast<std::size_t>(p)];
  }
};

/// Whether the plugin of that name implements the extension point; the framework answers from
/// the plugin it built (a dynamic_cast to FilterPlugin and so on).
using ImplementsFn = std::function<bool(std::string_view plugin, ExtensionPoint point)>;

/// Per point (upstream's expandMultiPointPlugins): each plugin listed for the point must implement
/// it; unless the point disables "*", the MultiPoint plugins that implement it and are not
/// disabled there join: those also listed for the point first (the point's entry overrides, in
/// the point's order), then the other MultiPoint ones (MultiPoint order), then the rest of the
/// point's list. A Score weight is the score entry's, else the MultiPoint entry's, 0 meaning 1.
/// Errors: a plugin at a point it does not implement, a plugin twice at one point, other than
/// exactly one queueSort plugin, no bind plugin.
kube::Expected<EffectivePlugins> expandPlugins(const Profile& profile,
                                               const ImplementsFn& implements);

/// "queueSort: PrioritySort; filter: A, B; score: C(1), D(2); ..." for a startup log line.
std::string describe(const EffectivePlugins& plugins);

}  // namespace koord::roles::scheduler::config
