// Whether the noderesource controller writes a node's batch resources now: Koordinator's rules
// (a resource appears or disappears, moves by more than resourceDiffThreshold, or is too old).
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "koord/apis/slo_config.h"
#include "koord/kube/quantity.h"
#include "noderesource/node_view.h"

namespace koord::roles::manager::noderesource {

struct SyncDecision {
  bool need = false;
  /// Why (for the log); empty when there is no need.
  std::string reason;
};

/// Koordinator's IsQuantityDiff: |new - old| > old * threshold, in milli-units through float64,
/// so that from a zero old value any non-zero new value is a change and zero to zero is not.
bool isQuantityDiff(const kube::Quantity& old_value, const kube::Quantity& new_value,
                    double threshold);

/// Koordinator's IsResourceDiff: present on one side only is a change, absent on both is not,
/// otherwise isQuantityDiff.
bool isResourceDiff(const std::optional<kube::Quantity>& old_value,
                    const std::optional<kube::Quantity>& new_value, double threshold);

/// `current`: the node's status.allocatable batch values now; `desired`: BatchResult::desired;
/// `last_write`: when this manager last wrote the node's status (nullopt: never since it
/// started, which always writes). Checked in Koordinator's order: the age first (strictly more
/// than updateTimeThresholdSeconds), then batch-cpu, then batch-memory against
/// resourceDiffThreshold.
SyncDecision needSync(const BatchValues& current, const BatchValues& desired,
                      const apis::ColocationStrategy& strategy,
                      std::optional<std::chrono::system_clock::time_point> last_write,
                      std::chrono::system_clock::time_point now);

}  // namespace koord::roles::manager::noderesource
