// The PodGroup status controller Coscheduling runs while the scheduler leads (Koordinator's
// PodGroupController): each PodGroup's phase and counts follow its gang's members.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "framework/framework_handle.h"
#include "framework/object_source.h"
#include "koord/apis/pod_group.h"
#include "plugins/coscheduling/gang_cache.h"

namespace koord::roles::scheduler::coscheduling {

/// The status the group should have, as Koordinator's controller steps it: "" → Pending;
/// Pending → PreScheduling once minMember (> 0) members exist; from then on Scheduling while
/// fewer than minMember are bound (its start time set once), Scheduled, Running once
/// minMember run or succeeded, Failed when one failed and minMember have finished or run,
/// Finished when minMember succeeded; back to Pending when no member is left. `members` is
/// nullopt when the gang is unknown (no member seen).
apis::PodGroupStatus nextPodGroupStatus(const apis::PodGroup& group,
                                        const std::optional<GangMembers>& members,
                                        std::chrono::system_clock::time_point now);

class PodGroupController {
 public:
  using WallClock = std::function<std::chrono::system_clock::time_point()>;

  PodGroupController(
      const ObjectSource<apis::PodGroup>* groups, const GangCache& gangs,
      const ClusterView& cluster, int workers,
      WallClock now = [] { return std::chrono::system_clock::now(); });
  ~PodGroupController();
  PodGroupController(const PodGroupController&) = delete;
  PodGroupController& operator=(const PodGroupController&) = delete;

  /// Asks for the group "namespace/name" to be synced (any thread; repeated asks merge).
  void enqueue(const std::string& key);
  void start();
  void stop();
  /// One sync of the group now, on the calling thread (tests); false when its write failed.
  /// `done` runs once the write (if any) was answered.
  void sync(const std::string& key, std::function<void(bool ok)> done);

 private:
  void work();
  void requeueLater(const std::string& key);

  const ObjectSource<apis::PodGroup>* groups_;
  const GangCache& gangs_;
  const ClusterView& cluster_;
  const int workers_;
  const WallClock now_;

  std::mutex mu_;
  std::condition_variable wake_;
  bool stopping_ = false;  // under mu_
  /// Keys to sync and when they may be (failed writes wait), and those a worker holds.
  std::map<std::string, std::chrono::steady_clock::time_point> queue_;  // under mu_
  std::set<std::string> busy_;                                          // under mu_
  std::vector<std::thread> threads_;
};

}  // namespace koord::roles::scheduler::coscheduling
