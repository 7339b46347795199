// LowNodeUtilization and HighNodeUtilization (the community descheduler's nodeutilization
// plugins, by pod requests): spread pods off crowded nodes, or empty sparse nodes to pack them.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "framework/plugin.h"
#include "plugins/nodeutilization/args.h"
#include "plugins/pluginkit/plugin_base.h"

namespace koord::roles::descheduler::nodeutilization {

inline constexpr std::string_view kLowNodeUtilizationName = "LowNodeUtilization";
inline constexpr std::string_view kHighNodeUtilizationName = "HighNodeUtilization";

/// Moves pods from nodes over targetThresholds while nodes under thresholds have room.
class LowNodeUtilization final
    : public pluginkit::ArgsPlugin<LowNodeUtilizationArgs, BalancePlugin, kLowNodeUtilizationName> {
 public:
  using ArgsPlugin::ArgsPlugin;
  Expected<void> balance(const std::vector<const Node*>& nodes) override;
};

/// Moves every pod it may from nodes under thresholds to the other schedulable nodes, least used
/// source first, while those have room left under their allocatable.
class HighNodeUtilization final
    : public pluginkit::ArgsPlugin<HighNodeUtilizationArgs, BalancePlugin,
                                   kHighNodeUtilizationName> {
 public:
  using ArgsPlugin::ArgsPlugin;
  Expected<void> balance(const std::vector<const Node*>& nodes) override;
};

}  // namespace koord::roles::descheduler::nodeutilization
