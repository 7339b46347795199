// PodTopologySpreadArgs: the cluster-level default constraints given to pods that state none,
// decoded strictly with each configuration version's defaulting and upstream's validation.
#pragma once

#include <boost/json/fwd.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "framework/plugin.h"
#include "koord/kube/error.h"

namespace koord::roles::scheduler::upstream {

inline constexpr std::string_view kLabelHostname = "kubernetes.io/hostname";
inline constexpr std::string_view kLabelTopologyZone = "topology.kubernetes.io/zone";

/// A defaultConstraints entry: a TopologySpreadConstraint without a labelSelector (the selector
/// is deduced per pod).
struct DefaultSpreadConstraint {
  std::int32_t max_skew = 0;
  std::string topology_key;
  UnsatisfiableConstraintAction when_unsatisfiable = UnsatisfiableConstraintAction::kDoNotSchedule;

  friend bool operator==(const DefaultSpreadConstraint&, const DefaultSpreadConstraint&) = default;
};

enum class SpreadDefaultingType {
  /// Kubernetes' own defaults (systemDefaultConstraints): hostname maxSkew 3 and zone maxSkew 5,
  /// both ScheduleAnyway.
  kSystem,
  /// args.default_constraints as given (possibly none).
  kList,
};

struct PodTopologySpreadArgs final : PluginArgs {
  std::vector<DefaultSpreadConstraint> default_constraints;
  SpreadDefaultingType defaulting_type = SpreadDefaultingType::kSystem;

  /// What pods without constraints of their own get: the system list or default_constraints.
  const std::vector<DefaultSpreadConstraint>& effectiveDefaults() const;
};

/// kube-scheduler's systemDefaultConstraints, in its order.
const std::vector<DefaultSpreadConstraint>& systemDefaultSpreadConstraints();

/// Strict: defaultConstraints (maxSkew, topologyKey, whenUnsatisfiable; labelSelector is
/// forbidden) and defaultingType. An absent defaultingType is "System" from v1beta2 on; under
/// v1beta1 it is "List" when defaultConstraints are given and "System" otherwise (1.20's
/// defaulting with the DefaultPodTopologySpread gate on, its default). Validation follows
/// ValidatePodTopologySpreadArgs, first error only.
kube::Expected<std::shared_ptr<const PodTopologySpreadArgs>> decodePodTopologySpreadArgs(
    const boost::json::value* args, std::string_view api_version);

}  // namespace koord::roles::scheduler::upstream
