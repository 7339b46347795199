#include "plugin_set.h"

#include <algorithm>

namespace koord::roles::scheduler::config {
namespace {

constexpr std::array<std::string_view, 4> kApiVersionNames = {
    "kubescheduler.config.k8s.io/v1beta1",
    "kubescheduler.config.k8s.io/v1beta2",
    "kubescheduler.config.k8s.io/v1beta3",
    "kubescheduler.config.k8s.io/v1",
};

constexpr std::array<std::string_view, kExtensionPointCount> kPointKeys = {
    "preEnqueue", "queueSort", "preFilter", "filter", "postFilter", "preScore",   "score",
    "reserve",    "permit",    "preBind",   "bind",   "postBind",   "multiPoint",
};

}  // namespace

std::string_view apiVersionName(ApiVersion v) {
  return kApiVersionNames[static_cast<std::size_t>(v)];
}

std::optional<ApiVersion> apiVersionByName(std::string_view api_version) {
  for (std::size_t i = 0; i < kApiVersionNames.size(); ++i) {
    if (kApiVersionNames[i] == api_version)
      return static_cast<ApiVersion>(i);
  }
  return std::nullopt;
}

std::string_view extensionPointKey(ExtensionPoint p) {
  return kPointKeys[static_cast<std::size_t>(p)];
}

std::optional<ExtensionPoint> extensionPointByKey(std::string_view key) {
  for (std::size_t i = 0; i < kPointKeys.size(); ++i) {
    if (kPointKeys[i] == key)
      return static_cast<ExtensionPoint>(i);
  }
  return std::nullopt;
}

bool hasExtensionPoint(ApiVersion version, ExtensionPoint p) {
  switch (p) {
    case ExtensionPoint::kMultiPoint:
      return version != ApiVersion::kV1beta1;
    case ExtensionPoint::kPreEnqueue:
      return version == ApiVersion::kV1beta3 || version == ApiVersion::kV1;
    default:
      return true;
  }
}

bool PluginSet::disablesAll() const {
  return disables("*");
}

bool PluginSet::disables(std::string_view name) const {
  return std::find(disabled.begin(), disabled.end(), name) != disabled.end();
}

const PluginRef* PluginSet::findEnabled(std::string_view name) const {
  for (const auto& p : enabled) {
    if (p.name == name)
      return &p;
  }
  return nullptr;
}

PluginSet mergePluginSet(const PluginSet& defaults, const PluginSet& custom) {
  PluginSet out;
  out.disabled = custom.disabled;
  out.disabled.insert(out.disabled.end(), defaults.disabled.begin(), defaults.disabled.end());
  std::vector<bool> replaced(custom.enabled.size(), false);
  if (!out.disablesAll()) {
    for (const auto& d : defaults.enabled) {
      if (out.disables(d.name))
        continue;
      // The last custom entry of that name replaces it, as upstream's map of them keeps the last.
      std::size_t match = custom.enabled.size();
      for (std::size_t i = 0; i < custom.enabled.size(); ++i) {
        if (custom.enabled[i].name == d.name)
          match = i;
      }
      if (match == custom.enabled.size()) {
        out.enabled.push_back(d);
      } else {
        out.enabled.push_back(custom.enabled[match]);
        replaced[match] = true;
      }
    }
  }
  for (std::size_t i = 0; i < custom.enabled.size(); ++i) {
    if (!replaced[i])
      out.enabled.push_back(custom.enabled[i]);
  }
  return out;
}

}  // namespace koord::roles::scheduler::config
