// What InterPodAffinity's PreFilter and PreScore leave in the CycleState for Filter and Score
// (and for AddPod/RemovePod to adjust during preemption), under upstream's key names.
#pragma once

#include <memory>
#include <string_view>

#include "framework/cycle_state.h"
#include "plugins/upstream/interpodaffinity/topology_counts.h"

namespace koord::roles::scheduler::upstream::interpodaffinity {

inline constexpr std::string_view kPreFilterStateKey = "PreFilterInterPodAffinity";
inline constexpr std::string_view kPreScoreStateKey = "PreScoreInterPodAffinity";
/// The same keys interned: Filter and Score read them on every node.
inline const StateKey kPreFilterState{kPreFilterStateKey};
inline const StateKey kPreScoreState{kPreScoreStateKey};

struct PreFilterState final : StateData {
  /// Existing pods whose required anti-affinity terms match the incoming pod.
  TopologyCounts existing_anti_affinity;
  /// Existing pods matching all of the incoming pod's required affinity terms (one count per
  /// term).
  TopologyCounts affinity;
  /// Existing pods matching the incoming pod's required anti-affinity terms (one per term).
  TopologyCounts anti_affinity;
  /// The incoming pod matches all of its own required affinity terms: the first pod of a group
  /// that wants to be together may go anywhere the topology keys exist.
  bool pod_matches_own_affinity = false;

  std::unique_ptr<StateData> clone() const override {
    return std::make_unique<PreFilterState>(*this);
  }
};

struct PreScoreState final : StateData {
  /// Summed weights by topology pair; shared, since nothing changes it after PreScore.
  std::shared_ptr<const TopologyCounts> scores;

  std::unique_ptr<StateData> clone() const override {
    return std::make_unique<PreScoreState>(*this);
  }
};

}  // namespace koord::roles::scheduler::upstream::interpodaffinity
