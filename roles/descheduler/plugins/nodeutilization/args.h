// LowNodeUtilizationArgs and HighNodeUtilizationArgs as the community descheduler spells them
// (Koordinator embeds both plugins): strict decoding, defaults and validation.
#pragma once

#include <boost/json/fwd.hpp>

#include <cstdint>
#include <optional>

#include "framework/plugin.h"
#include "koord/core/expected.h"
#include "plugins/lownodeload/utilization.h"

namespace koord::roles::descheduler::nodeutilization {

using utilization::Thresholds;

struct LowNodeUtilizationArgs final : PluginArgs {
  bool use_deviation_thresholds = false;
  /// Under these a node is underutilized; cpu, memory and pods left out are 100% (0 in
  /// deviation mode, where that means no bound).
  Thresholds thresholds;
  /// Over these a node is overutilized; the same resources as thresholds, filled alike.
  Thresholds target_thresholds;
  std::int32_t number_of_nodes = 0;
  std::optional<utilization::Namespaces> evictable_namespaces;
};

struct HighNodeUtilizationArgs final : PluginArgs {
  /// Under these a node is underutilized and emptied; cpu, memory and pods left out are 100%.
  Thresholds thresholds;
  std::int32_t number_of_nodes = 0;
  std::optional<utilization::Namespaces> evictable_namespaces;
};

/// Both refuse absent args: the thresholds have no default. Errors name the field.
Expected<LowNodeUtilizationArgs> decodeLowNodeUtilizationArgs(const boost::json::value* args);
Expected<HighNodeUtilizationArgs> decodeHighNodeUtilizationArgs(const boost::json::value* args);

}  // namespace koord::roles::descheduler::nodeutilization
