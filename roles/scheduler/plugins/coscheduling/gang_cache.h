// Every gang the scheduler knows (Koordinator's GangCache and the PodGroupManager's decisions):
// built from pod and PodGroup events, asked by the Coscheduling plugin at each extension point.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "framework/plugin.h"
#include "koord/apis/pod_group.h"
#include "plugins/coscheduling/gang.h"

namespace koord::roles::scheduler::coscheduling {

/// What PreFilter decided for a gang's member; `error` empty when it may go on.
struct PreFilterOutcome {
  std::string error;
  /// The refusal came from an invalid round: PostFilter must not reject the group again.
  bool skip_reject = false;
  /// The refusal is about the gang, not this round: PostFilter rejects the group's waiting
  /// members but leaves the round valid.
  bool skip_set_cycle_invalid = false;
};

enum class PermitVerdict { kNotGang, kGangNotFound, kWait, kAllow };

struct PermitOutcome {
  PermitVerdict verdict = PermitVerdict::kNotGang;
  /// kWait: how long the gang waits for the rest.
  std::chrono::nanoseconds wait{0};
  /// kWait: the other members of the group's gangs, to bring forward in the queue (for a Strict
  /// gang, only when this is the first to wait).
  std::vector<std::string> siblings;
  /// kAllow: the group's gang ids, whose waiting members bind now.
  std::unordered_set<std::string> group_gangs;
};

/// A group whose waiting members are to be rejected together.
struct GroupRejection {
  std::unordered_set<std::string> group_gangs;
  std::string message;
};

/// What the PodGroup status controller reads about one gang.
struct GangMembers {
  /// Each member's phase, by pod key.
  std::unordered_map<std::string, PodPhase> phases;
  std::int32_t bound = 0;
};

/// Thread-safe: one lock guards every gang and group. Methods never call out while holding it,
/// so the queue may call less() under its own lock while informer events come in. Pod keys are
/// "namespace/name"; event methods return the keys of pods that may have become schedulable
/// (their gang was just completed or initialised), for the caller to activate.
class GangCache {
 public:
  using Clock = std::function<SteadyTime()>;

  explicit GangCache(
      std::chrono::nanoseconds default_wait,
      Clock now = [] { return std::chrono::steady_clock::now(); });

  std::vector<std::string> onPodAdd(const PodInfo& pod);
  std::vector<std::string> onPodUpdate(const PodInfo& pod);
  void onPodDelete(const PodInfo& pod);
  std::vector<std::string> onPodGroupAdd(const apis::PodGroup& group);
  std::vector<std::string> onPodGroupUpdate(const apis::PodGroup& group);
  void onPodGroupDelete(const apis::PodGroup& group);

  /// PreFilter: refuses members of unknown or uninitialised gangs and of gangs with fewer
  /// members than min-available; for Strict gangs (unless `skip_cycle_check`), members outside
  /// the current valid round.
  PreFilterOutcome preFilter(const PodInfo& pod, bool skip_cycle_check);
  /// PostFilter for a member no node fits: for a Strict gang not yet satisfied, the group whose
  /// waiting members are rejected (and its round marked invalid unless the PreFilter outcome
  /// says to skip that). nullopt: nothing to reject.
  std::optional<GroupRejection> postFilter(const PodInfo& pod, const PreFilterOutcome* pre,
                                           const std::string& reason);
  /// Permit: the member is assumed; it waits until every gang of its group is valid for permit.
  PermitOutcome permit(const PodInfo& pod);
  /// Unreserve: the member is no longer assumed; a Strict gang not yet satisfied then fails as
  /// a whole (the group to reject, its round marked invalid).
  std::optional<GroupRejection> unreserve(const PodInfo& pod);
  void postBind(const PodInfo& pod);

  /// The gang part of Koordinator's queue order, for two pods of equal priority and
  /// sub-priority: the group's round time (a pod's queue time outside gangs), then group id,
  /// gang id, round and name.
  bool less(const QueuedPodInfo& a, const QueuedPodInfo& b) const;
  /// The member's round entry, which less() then reads without a lookup while the member stays
  /// in its gang; null for pods outside gangs or not yet in a group (less() looks those up).
  std::shared_ptr<const void> sortHandle(const PodInfo& pod) const;

  /// nullopt when the gang is unknown.
  std::optional<GangMembers> members(const std::string& gang_id) const;
  /// Members held at Permit over all gangs.
  std::size_t waitingCount() const;

  /// For tests and debugging: a copy of the gang's state.
  std::optional<Gang> gang(const std::string& gang_id) const;
  /// The round the gang's group is in and whether it is valid.
  std::optional<std::pair<int, bool>> scheduleCycle(const std::string& gang_id) const;

 private:
  Gang& gangLocked(const std::string& id);
  Gang* findLocked(const std::string& id) const;
  std::shared_ptr<GangGroup> groupLocked(const apis::GangSpec& spec);
  /// Gives the gang its group (created when new) and its expected member count there.
  void attachGroupLocked(Gang& gang);
  void dropGangLocked(const std::string& id);
  std::vector<std::string> childrenIfCompleteLocked(const Gang& gang, bool was_ready) const;
  bool readyLocked(const Gang& gang) const;
  std::unordered_set<std::string> groupGangsLocked(const Gang& gang) const;
  void invalidateGroupLocked(const Gang& gang);
  std::vector<std::string> podGroupEventLocked(const apis::PodGroup& group, bool create);

  const std::chrono::nanoseconds default_wait_;
  const Clock now_;
  mutable std::mutex mu_;
  std::unordered_map<std::string, std::unique_ptr<Gang>> gangs_;        // under mu_
  std::unordered_map<std::string, std::shared_ptr<GangGroup>> groups_;  // under mu_
  std::size_t waiting_ = 0;                                             // under mu_
};

}  // namespace koord::roles::scheduler::coscheduling
