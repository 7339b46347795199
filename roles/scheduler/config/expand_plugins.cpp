#include "expand_plugins.h"

#include <fmt/format.h>

#include <algorithm>

#include "koord/kube/strict_fields.h"

namespace koord::roles::scheduler::config {

// The strict field reads moved to koord_kube when the descheduler needed them too.
using namespace kube::strict;
namespace {

bool contains(const std::vector<std::string>& names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

}  // namespace

kube::Expected<EffectivePlugins> expandPlugins(const Profile& profile,
                                               const ImplementsFn& implements) {
  EffectivePlugins out;
  const std::string plugins_path = fmt::format("profiles[{}].plugins", profile.index);
  const PluginSet& multi = profile.merged[ExtensionPoint::kMultiPoint];
  for (std::size_t k = 0; k < kExtensionPointCount; ++k) {
    const auto point = static_cast<ExtensionPoint>(k);
    if (point == ExtensionPoint::kMultiPoint)
      continue;
    const PluginSet& set = profile.merged[point];
    const std::string point_path = fmt::format("{}.{}", plugins_path, extensionPointKey(point));
    std::vector<std::string> seen;
    for (const PluginRef& p : set.enabled) {
      const std::string& where = p.origin.empty() ? point_path : p.origin;
      const char* what = p.origin.empty() ? "default plugin" : "plugin";
      if (!implements(p.name, point)) {
        return fieldError(where, fmt::format("{} {:?} does not implement {}", what, p.name,
                                             extensionPointKey(point)));
      }
      if (contains(seen, p.name)) {
        return fieldError(where, fmt::format("{} {:?} is enabled twice at {}", what, p.name,
                                             extensionPointKey(point)));
      }
      seen.push_back(p.name);
    }
    // MultiPoint plugins also named for this point keep the point's entry, and go first.
    std::vector<std::string> overridden;
    std::vector<const PluginRef*> from_multi;
    if (!set.disablesAll()) {
      for (const PluginRef& m : multi.enabled) {
        if (!implements(m.name, point) || set.disables(m.name))
          continue;
        if (set.findEnabled(m.name) != nullptr) {
          overridden.push_back(m.name);
          continue;
        }
        const bool twice = std::any_of(from_multi.begin(), from_multi.end(),
                                       [&](const PluginRef* r) { return r->name == m.name; });
        if (twice) {
          return fieldError(m.origin.empty() ? plugins_path + ".multiPoint" : m.origin,
                            fmt::format("plugin {:?} is enabled twice", m.name));
        }
        from_multi.push_back(&m);
      }
    }
    std::vector<PluginRef>& list = out.points[k];
    for (const PluginRef& p : set.enabled) {
      if (contains(overridden, p.name))
        list.push_back(p);
    }
    for (const PluginRef* m : from_multi)
      list.push_back(*m);
    for (const PluginRef& p : set.enabled) {
      if (!contains(overridden, p.name))
        list.push_back(p);
    }
    if (point == ExtensionPoint::kScore) {
      for (PluginRef& p : list) {
        const PluginRef* own = set.findEnabled(p.name);
        const PluginRef* source = own != nullptr ? own : multi.findEnabled(p.name);
        p.weight = source->weight > 0 ? source->weight : 1;
      }
    }
  }
  const auto& sort = out[ExtensionPoint::kQueueSort];
  if (sort.size() != 1) {
    return fieldError(plugins_path + ".queueSort",
                      fmt::format("exactly one queue sort plugin is required for profile {:?}, "
                                  "got {}",
                                  profile.scheduler_name, sort.size()));
  }
  if (out[ExtensionPoint::kBind].empty()) {
    return fieldError(plugins_path + ".bind",
                      fmt::format("at least one bind plugin is required for profile {:?}",
                                  profile.scheduler_name));
  }
  return out;
}

std::string describe(const EffectivePlugins& plugins) {
  std::string out;
  for (std::size_t k = 0; k < kExtensionPointCount; ++k) {
    const auto point = static_cast<ExtensionPoint>(k);
    const std::vector<PluginRef>& list = plugins.points[k];
    if (list.empty())
      continue;
    if (!out.empty())
      out += "; ";
    out += fmt::format("{}: ", extensionPointKey(point));
    for (std::size_t i = 0; i < list.size(); ++i) {
      out += (i == 0 ? "" : ", ") + list[i].name;
      if (point == ExtensionPoint::kScore)
        out += fmt::format("({})", list[i].weight);
    }
  }
  return out;
}

}  // namespace koord::roles::scheduler::config
