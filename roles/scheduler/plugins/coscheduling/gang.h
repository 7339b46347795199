// A gang as Coscheduling tracks it (Koordinator's Gang and GangGroupInfo): its settings, its
// members by state, and the scheduling round the gangs bound together in one group share.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "framework/pod_info.h"
#include "koord/apis/gang.h"

namespace koord::roles::scheduler::coscheduling {

using SteadyTime = std::chrono::steady_clock::time_point;

struct Gang;

/// The gangs that must all be satisfied before any of their pods binds (one gang alone, or the
/// gangs a groups annotation lists). Strict gangs go through PreFilter in rounds: each member
/// once per round, a new round once every member (of every gang of the group) has had its
/// turn, and a failure in a round marks it invalid so that the rest of the round is refused
/// rather than assumed. Not thread-safe: GangCache guards it.
struct GangGroup {
  std::string id;
  std::vector<std::string> gangs;
  int schedule_cycle = 1;
  bool cycle_valid = true;
  /// Each gang's expected member count (total-number).
  std::unordered_map<std::string, int> gang_total_children;
  /// When the group's current round started: every member sorts by it in the queue, so a
  /// group's members stay together and a group that had its round goes behind the others.
  SteadyTime last_schedule_time{};
  /// A member's place in the rounds. One entry holds both figures: the queue reads them together
  /// on every comparison, through the pod's sort handle (a shared reference to the entry).
  struct ChildRound {
    /// The round it last went through PreFilter in; 0 before its first (rounds start at 1).
    int cycle = 0;
    bool has_schedule_time = false;
    SteadyTime last_schedule_time{};
    /// The member's gang while the entry is in `children`; null once the pod is forgotten or
    /// its gang dropped, which tells a handle still held by the queue that it is stale.
    const Gang* gang = nullptr;
  };
  /// By pod key.
  std::unordered_map<std::string, std::shared_ptr<ChildRound>> children;

  /// The member's entry, made when new; `owner` is its gang.
  ChildRound& child(const std::string& pod, const Gang& owner);
  /// Starts the next round, valid again, once every expected member reached this one.
  void trySetScheduleCycleValid();
  /// Starts a new round time once every member has the current one, and gives it to `pod`.
  void resetPodLastScheduleTime(const std::string& pod, const Gang& owner, SteadyTime now);
  void initPodLastScheduleTime(const std::string& pod, const Gang& owner) {
    ChildRound& c = child(pod, owner);
    c.has_schedule_time = true;
    c.last_schedule_time = last_schedule_time;
  }
  void forgetPod(const std::string& pod);
  /// Marks the entries of `gang`'s members stale (the gang is going away); they stay for the
  /// rounds' counts until their pods are forgotten.
  void detachGang(const Gang& gang);
};

struct Gang {
  explicit Gang(std::string gang_id);

  std::string id;
  /// Whether its settings were read (from a member's annotations or its PodGroup); a gang
  /// that is not is refused at PreFilter.
  bool initialized = false;
  apis::GangSpec spec;
  /// Pod keys ("namespace/name"): every member known (with its phase, for the PodGroup's
  /// status), those assumed and waiting at Permit, and those bound.
  std::unordered_map<std::string, PodPhase> children;
  std::unordered_set<std::string> waiting_for_bind;
  std::unordered_set<std::string> bound;
  /// Set once min-available were bound: with once-satisfied, later members go alone.
  bool once_resource_satisfied = false;
  /// Null until the gang is initialised.
  std::shared_ptr<GangGroup> group;

  /// Whether its members may bind: enough waiting (and, by match policy, bound) members.
  bool validForPermit() const;
  /// once-satisfied and satisfied once: the gang's rules no longer apply to its members.
  bool satisfiedOnce() const {
    return spec.match_policy == apis::GangMatchPolicy::kOnceSatisfied && once_resource_satisfied;
  }
  void addBound(const std::string& pod);
};

}  // namespace koord::roles::scheduler::coscheduling
