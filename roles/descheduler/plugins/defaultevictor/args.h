// DefaultEvictorArgs as the community descheduler spells them (Koordinator embeds that plugin):
// which pods the DefaultEvictor filter lets go, read strictly from a profile's pluginConfig.
#pragma once

#include <boost/json/fwd.hpp>

#include <cstdint>
#include <optional>
#include <string>

#include "framework/plugin.h"
#include "koord/core/expected.h"
#include "koord/kube/labels.h"

namespace koord::roles::descheduler::defaultevictor {

/// api.PriorityThreshold: a priority value, or the name of a PriorityClass whose value is used.
struct PriorityThreshold {
  std::optional<std::int32_t> value;
  std::string name;
};

/// Every member's default is its Go zero value (upstream's defaulter sets nothing else).
struct DefaultEvictorArgs final : PluginArgs {
  /// Label selector string syntax; with nodeFit only the nodes it selects count as elsewhere.
  std::string node_selector;
  bool evict_local_storage_pods = false;
  bool evict_system_critical_pods = false;
  bool ignore_pvc_pods = false;
  bool evict_failed_bare_pods = false;
  std::optional<kube::LabelSelector> label_selector;
  std::optional<PriorityThreshold> priority_threshold;
  bool node_fit = false;
};

/// Decodes pluginConfig args (null or absent: the defaults). Unknown members, wrong JSON types,
/// a labelSelector or nodeSelector that does not compile are errors naming the field.
Expected<DefaultEvictorArgs> decodeDefaultEvictorArgs(const boost::json::value* args);

}  // namespace koord::roles::descheduler::defaultevictor
