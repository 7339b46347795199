// LowNodeUtilization and HighNodeUtilization (the community descheduler's nodeutilization
// plugins, by pod requests): spread pods off crowded nodes, or empty sparse nodes to pack them.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "framework/plugin.h"
#include "plugins/nodeutilization/args.h"

namespace koord::roles::descheduler::nodeutilization {

inline constexpr std::string_view kLowNodeUtilizationName = "LowNodeUtilization";
inline constexpr std::string_view kHighNodeUtilizationName = "HighNodeUtilization";

/// Moves pods from nodes over targetThresholds while nodes under thresholds have room.
class LowNodeUtilization final : public BalancePlugin {
 public:
  LowNodeUtilization(std::shared_ptr<const LowNodeUtilizationArgs> args, FrameworkHandle& handle)
      : args_(std::move(args)), handle_(handle) {}
  std::string_view name() const override { return kLowNodeUtilizationName; }
  Expected<void> balance(const std::vector<const Node*>& nodes) override;

 private:
  std::shared_ptr<const LowNodeUtilizationArgs> args_;
  FrameworkHandle& handle_;
};

/// Moves every pod it may from nodes under thresholds to the other schedulable nodes, least used
/// source first, while those have room left under their allocatable.
class HighNodeUtilization final : public BalancePlugin {
 public:
  HighNodeUtilization(std::shared_ptr<const HighNodeUtilizationArgs> args, FrameworkHandle& handle)
      : args_(std::move(args)), handle_(handle) {}
  std::string_view name() const override { return kHighNodeUtilizationName; }
  Expected<void> balance(const std::vector<const Node*>& nodes) override;

 private:
  std::shared_ptr<const HighNodeUtilizationArgs> args_;
  FrameworkHandle& handle_;
};

}  // namespace koord::roles::descheduler::nodeutilization
