#include "reservation/reservation_controller.h"

#include <boost/json.hpp>

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "koord/core/log.h"
#include "reservation/reservation_status.h"

namespace koord::roles::scheduler::reservation {

namespace {

using SystemClock = std::chrono::system_clock;

constexpr std::chrono::seconds kMinPassSpacing{1};

// When a finished reservation finished: its Ready condition's transition, else its creation.
SystemClock::time_point finishedAt(const apis::Reservation& r) {
  for (const auto& c : r.conditions) {
    if (c.type == apis::kReservationConditionReady && c.last_transition_time)
      return *c.last_transition_time;
  }
  return r.creation_timestamp;
}

// The owner pods the cache counts in the reservation, sorted by UID, with what they take.
std::vector<OwnerRef> ownersOf(const NodeInfo& node, const ReservationInfo& info) {
  std::vector<OwnerRef> out;
  for (const auto& pod : node.pods) {
    if (pod->reservation_uid == info.uid)
      out.push_back({pod->namespace_, pod->name, pod->uid});
  }
  std::sort(out.begin(), out.end(),
            [](const OwnerRef& a, const OwnerRef& b) { return a.uid < b.uid; });
  return out;
}

bool sameOwners(const std::vector<apis::ObjectReference>& status,
                const std::vector<OwnerRef>& actual) {
  if (status.size() != actual.size())
    return false;
  std::vector<std::string> a;
  for (const auto& o : status)
    a.push_back(o.uid);
  std::sort(a.begin(), a.end());
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i] != actual[i].uid)
      return false;
  }
  return true;
}

}  // namespace

ReservationController::ReservationController(SchedulerApi& api, const SchedulerCache& cache,
                                             SchedulerMetrics& metrics, ControllerOptions options)
    : api_(api), cache_(cache), metrics_(metrics), options_(options) {}

ReservationController::~ReservationController() {
  stop();
}

void ReservationController::start() {
  if (thread_.joinable())
    return;
  thread_ = std::thread([this] {
    auto next_gc = std::chrono::steady_clock::now();
    auto next_resync = next_gc;
    while (true) {
      {
        std::unique_lock lock(mu_);
        if (stopping_)
          return;
      }
      const auto now = std::chrono::steady_clock::now();
      const bool gc = !options_.gc_disabled && now >= next_gc;
      if (gc)
        next_gc = now + options_.gc_interval;
      const bool full = now >= next_resync;
      if (full)
        next_resync = now + options_.resync_interval;
      syncOnce(SystemClock::now(), gc, full);
      std::unique_lock lock(mu_);
      // Owner pods bound in a burst are written in one status patch per reservation, not one
      // each: a poke waits out this spacing.
      if (wake_.wait_for(lock, kMinPassSpacing, [this] { return stopping_; }))
        return;
      const auto wait = std::min<std::chrono::steady_clock::duration>(
          next_resync - now, options_.gc_disabled ? next_resync - now : next_gc - now);
      wake_.wait_for(
          lock, std::max<std::chrono::steady_clock::duration>(wait, std::chrono::milliseconds(100)),
          [this] { return stopping_ || poked_; });
      poked_ = false;
    }
  });
}

void ReservationController::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable())
    thread_.join();
}

void ReservationController::poke() {
  {
    std::lock_guard lock(mu_);
    poked_ = true;
  }
  wake_.notify_all();
}

ControllerAction ReservationController::decide(const ReservationState& state,
                                               SystemClock::time_point now, bool gc,
                                               bool full) const {
  const apis::Reservation& r = *state.object;
  if (r.terminating)
    return ControllerAction::kNone;
  if (r.finished()) {
    return gc && now - finishedAt(r) >= options_.gc_duration ? ControllerAction::kDelete
                                                             : ControllerAction::kNone;
  }
  if (auto expiry = r.expiry(); expiry && now > *expiry)
    return ControllerAction::kExpire;
  if (r.node_name.empty())
    return ControllerAction::kNone;
  auto node = cache_.nodeInfo(r.node_name);
  if (node == nullptr || node->node == nullptr)
    return ControllerAction::kNodeLost;
  const ReservationInfo* info = node->reservation(r.uid);
  if (info == nullptr || !r.available())
    return ControllerAction::kNone;
  const auto owners = ownersOf(*node, *info);
  if (r.allocate_once && !owners.empty())
    return ControllerAction::kSucceed;
  const bool same_allocated = Resource::fromList(r.allocated) == info->allocatedKept();
  return !full || (same_allocated && sameOwners(r.current_owners, owners))
             ? ControllerAction::kNone
             : ControllerAction::kSyncOwners;
}

void ReservationController::write(const apis::Reservation& r, boost::json::value patch,
                                  std::string what) {
  api_.patchReservationStatus(
      r, std::move(patch), [this, uid = r.uid, name = r.name, what](kube::Expected<void> res) {
        if (!res)
          KOORD_LOG_ERROR("scheduler: reservation {}: {}: {}", name, what, res.error().message);
        std::lock_guard lock(mu_);
        in_flight_.erase(uid);
      });
}

void ReservationController::act(const ReservationState& state, ControllerAction action,
                                SystemClock::time_point now) {
  const apis::Reservation& r = *state.object;
  {
    std::lock_guard lock(mu_);
    if (!in_flight_.insert(r.uid).second)
      return;
  }
  switch (action) {
    case ControllerAction::kExpire:
      KOORD_LOG_INFO("scheduler: reservation {} expired", r.name);
      write(r,
            finishedPatch(r, apis::ReservationPhase::kFailed, apis::kReasonReservationExpired,
                          "the reservation expired", now),
            "expiring");
      return;
    case ControllerAction::kNodeLost:
      KOORD_LOG_INFO("scheduler: reservation {}: node {} is gone", r.name, r.node_name);
      write(r,
            finishedPatch(r, apis::ReservationPhase::kFailed, apis::kReasonReservationExpired,
                          fmt::format("node {} is gone", r.node_name), now),
            "failing after its node went away");
      return;
    case ControllerAction::kSyncOwners:
    case ControllerAction::kSucceed: {
      auto node = cache_.nodeInfo(r.node_name);
      const ReservationInfo* info = node ? node->reservation(r.uid) : nullptr;
      if (info == nullptr)
        break;
      boost::json::value patch = ownersPatch(info->allocatedKept(), ownersOf(*node, *info));
      if (action == ControllerAction::kSucceed) {
        boost::json::value done = finishedPatch(r, apis::ReservationPhase::kSucceeded,
                                                apis::kReasonReservationSucceeded, "", now);
        for (auto& kv : done.as_object()["status"].as_object())
          patch.as_object()["status"].as_object()[kv.key()] = kv.value();
      }
      write(r, std::move(patch), "syncing its owners");
      return;
    }
    case ControllerAction::kDelete:
      KOORD_LOG_INFO("scheduler: deleting reservation {}, finished for longer than {}s", r.name,
                     options_.gc_duration.count());
      api_.deleteReservation(r, [this, uid = r.uid, name = r.name](kube::Expected<void> res) {
        if (!res)
          KOORD_LOG_ERROR("scheduler: deleting reservation {}: {}", name, res.error().message);
        std::lock_guard lock(mu_);
        in_flight_.erase(uid);
      });
      return;
    case ControllerAction::kNone:
      break;
  }
  std::lock_guard lock(mu_);
  in_flight_.erase(r.uid);
}

void ReservationController::recordPhases(
    const std::vector<std::shared_ptr<const ReservationState>>& all) {
  std::map<std::string_view, std::size_t> counts;
  for (auto phase : {apis::ReservationPhase::kPending, apis::ReservationPhase::kAvailable,
                     apis::ReservationPhase::kSucceeded, apis::ReservationPhase::kWaiting,
                     apis::ReservationPhase::kFailed})
    counts[toString(phase)] = 0;
  std::unordered_map<std::string, std::string> now;
  for (const auto& s : all) {
    const std::string_view phase = toString(s->object->phase);
    ++counts[phase];
    now.emplace(s->object->name, std::string(phase));
  }
  for (const auto& [name, phase] : phases_) {
    if (!now.contains(name))
      metrics_.reservationPhase(name, phase, "");
  }
  for (const auto& [name, phase] : now) {
    auto old = phases_.find(name);
    metrics_.reservationPhase(name, old == phases_.end() ? "" : old->second, phase);
  }
  phases_ = std::move(now);
  metrics_.reservationCounts({counts.begin(), counts.end()});
}

std::unordered_map<std::string, ControllerAction> ReservationController::syncOnce(
    SystemClock::time_point now, bool gc, bool full) {
  std::unordered_map<std::string, ControllerAction> out;
  const auto all = api_.reservations();
  for (const auto& state : all) {
    const ControllerAction action = decide(*state, now, gc, full);
    if (action == ControllerAction::kNone)
      continue;
    out.emplace(state->object->name, action);
    act(*state, action, now);
  }
  recordPhases(all);
  return out;
}

}  // namespace koord::roles::scheduler::reservation
