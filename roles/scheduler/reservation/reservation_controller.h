// The scheduler's Reservation lifecycle controller (Koordinator's reservation controller): expires
// reservations past their ttl or expires, fails those whose node is gone, keeps status.allocated
// and currentOwners true to the cache (an allocate-once reservation with an owner Succeeds), and
// deletes finished ones after gcDurationSeconds. Runs only while this replica leads.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include "cache/scheduler_cache.h"
#include "scheduler_api.h"
#include "scheduler_metrics.h"

namespace koord::roles::scheduler::reservation {

struct ControllerOptions {
  std::chrono::seconds resync_interval{60};
  std::chrono::seconds gc_interval{60};
  std::chrono::seconds gc_duration{86400};
  bool gc_disabled = false;
};

/// What one pass decided for one reservation (tests read these).
enum class ControllerAction { kNone, kExpire, kNodeLost, kSyncOwners, kSucceed, kDelete };

class ReservationController {
 public:
  ReservationController(SchedulerApi& api, const SchedulerCache& cache, SchedulerMetrics& metrics,
                        ControllerOptions options);
  ~ReservationController();
  ReservationController(const ReservationController&) = delete;
  ReservationController& operator=(const ReservationController&) = delete;

  void start();
  void stop();
  /// Asks for a pass soon (an owner pod was bound: an allocate-once reservation is spent).
  void poke();

  /// One pass over every reservation at `now`, deleting finished ones only with `gc`, and
  /// writing the owners of multi-use reservations only when `full` (every resync interval: the
  /// passes an owner pod's binding wakes complete allocate-once reservations, expire and fail,
  /// but leave status.allocated to the resync, since the scheduler counts from the pods and a
  /// status write per bound owner would double the apiserver's load). Returns the action taken
  /// per reservation name (kNone omitted); writes go out asynchronously.
  std::unordered_map<std::string, ControllerAction> syncOnce(
      std::chrono::system_clock::time_point now, bool gc, bool full = true);

 private:
  ControllerAction decide(const ReservationState& r, std::chrono::system_clock::time_point now,
                          bool gc, bool full) const;
  void act(const ReservationState& r, ControllerAction action,
           std::chrono::system_clock::time_point now);
  void write(const apis::Reservation& r, boost::json::value patch, std::string what);
  void recordPhases(const std::vector<std::shared_ptr<const ReservationState>>& all);

  SchedulerApi& api_;
  const SchedulerCache& cache_;
  SchedulerMetrics& metrics_;
  const ControllerOptions options_;

  std::mutex mu_;
  std::condition_variable wake_;
  bool stopping_ = false;  // under mu_
  bool poked_ = false;     // under mu_
  /// UIDs with a write in flight: the next pass leaves them alone.
  std::unordered_set<std::string> in_flight_;  // under mu_
  /// The phase each reservation's scheduler_reservation_status_phase series shows, by name.
  std::unordered_map<std::string, std::string> phases_;  // the controller thread's
  std::thread thread_;
};

}  // namespace koord::roles::scheduler::reservation
