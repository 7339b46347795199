#include "plugins/coscheduling/podgroup_controller.h"

#include <boost/json.hpp>

#include <memory>
#include <utility>

#include "koord/core/log.h"
#include "koord/kube/rest_client.h"

namespace koord::roles::scheduler::coscheduling {

namespace {

using apis::PodGroupPhase;

// A failed write is retried after this; a conflict (the group changed) usually brings its own
// event sooner.
constexpr std::chrono::seconds kRetryDelay{5};

}  // namespace

apis::PodGroupStatus nextPodGroupStatus(const apis::PodGroup& group,
                                        const std::optional<GangMembers>& members,
                                        std::chrono::system_clock::time_point now) {
  apis::PodGroupStatus s = group.status;
  const std::int32_t min = group.min_member;
  const std::size_t count = members ? members->phases.size() : 0;
  switch (s.phase) {
    case PodGroupPhase::kNone:
      s.phase = PodGroupPhase::kPending;
      return s;
    case PodGroupPhase::kPending:
      if (min > 0 && count >= static_cast<std::size_t>(min))
        s.phase = PodGroupPhase::kPreScheduling;
      return s;
    default:
      break;
  }
  if (count == 0) {
    s.phase = PodGroupPhase::kPending;
    return s;
  }
  std::int32_t running = 0;
  std::int32_t succeeded = 0;
  std::int32_t failed = 0;
  for (const auto& [key, phase] : members->phases) {
    if (phase == PodPhase::kRunning)
      ++running;
    else if (phase == PodPhase::kSucceeded)
      ++succeeded;
    else if (phase == PodPhase::kFailed)
      ++failed;
  }
  s.running = running;
  s.succeeded = succeeded;
  s.failed = failed;
  s.scheduled = members->bound;
  if (s.scheduled < min) {
    s.phase = PodGroupPhase::kScheduling;
    if (!s.schedule_start_time)
      s.schedule_start_time = now;
  } else {
    s.phase = PodGroupPhase::kScheduled;
  }
  // Sums in 64 bits: counts near int32's limit must not wrap into a smaller phase.
  const std::int64_t done_or_running = std::int64_t{succeeded} + running;
  if (done_or_running >= min && s.phase == PodGroupPhase::kScheduled)
    s.phase = PodGroupPhase::kRunning;
  if (failed != 0 && done_or_running + failed >= min)
    s.phase = PodGroupPhase::kFailed;
  if (succeeded >= min)
    s.phase = PodGroupPhase::kFinished;
  return s;
}

PodGroupController::PodGroupController(const ObjectSource<apis::PodGroup>* groups,
                                       const GangCache& gangs, const ClusterView& cluster,
                                       int workers, WallClock now)
    : groups_(groups),
      gangs_(gangs),
      cluster_(cluster),
      workers_(workers < 1 ? 1 : workers),
      now_(std::move(now)) {}

PodGroupController::~PodGroupController() {
  stop();
}

void PodGroupController::enqueue(const std::string& key) {
  std::lock_guard lock(mu_);
  if (stopping_)
    return;
  // A key already queued keeps its place (and a retry its delay).
  if (queue_.emplace(key, std::chrono::steady_clock::now()).second)
    wake_.notify_one();
}

void PodGroupController::start() {
  if (groups_ == nullptr || !threads_.empty())
    return;
  {
    std::lock_guard lock(mu_);
    stopping_ = false;
  }
  // Every group once: their status may have moved while another replica led.
  for (const auto& g : groups_->list())
    enqueue(g->id());
  for (int i = 0; i < workers_; ++i)
    threads_.emplace_back([this] { work(); });
}

void PodGroupController::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (auto& t : threads_)
    t.join();
  threads_.clear();
}

void PodGroupController::requeueLater(const std::string& key) {
  std::lock_guard lock(mu_);
  if (!stopping_)
    queue_.emplace(key, std::chrono::steady_clock::now() + kRetryDelay);
}

void PodGroupController::work() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    const auto now = std::chrono::steady_clock::now();
    auto next = queue_.end();
    auto soonest = std::chrono::steady_clock::time_point::max();
    for (auto it = queue_.begin(); it != queue_.end(); ++it) {
      if (busy_.contains(it->first))
        continue;
      if (it->second <= now) {
        next = it;
        break;
      }
      soonest = std::min(soonest, it->second);
    }
    if (next == queue_.end()) {
      if (soonest == std::chrono::steady_clock::time_point::max())
        wake_.wait(lock);
      else
        wake_.wait_until(lock, soonest);
      continue;
    }
    const std::string key = next->first;
    queue_.erase(next);
    busy_.insert(key);
    lock.unlock();

    // Waits for the answer, but gives up on it when stopping: the reactor may be gone.
    struct Answer {
      std::mutex mu;
      std::condition_variable cv;
      std::optional<bool> ok;
    };
    auto answer = std::make_shared<Answer>();
    sync(key, [answer](bool ok) {
      std::lock_guard l(answer->mu);
      answer->ok = ok;
      answer->cv.notify_all();
    });
    bool ok = true;
    {
      std::unique_lock l(answer->mu);
      while (!answer->ok) {
        answer->cv.wait_for(l, std::chrono::milliseconds(100));
        std::lock_guard s(mu_);
        if (stopping_)
          break;
      }
      ok = answer->ok.value_or(true);
    }
    if (!ok)
      requeueLater(key);

    lock.lock();
    busy_.erase(key);
    wake_.notify_all();
  }
}

void PodGroupController::sync(const std::string& key, std::function<void(bool ok)> done) {
  auto group = groups_ != nullptr ? groups_->get(key) : nullptr;
  if (!group) {
    done(true);  // deleted meanwhile: nothing to write
    return;
  }
  const apis::PodGroupStatus next = nextPodGroupStatus(*group, gangs_.members(key), now_());
  if (next == group->status) {
    done(true);
    return;
  }
  kube::ResourceRef ref{std::string(apis::kSchedulingSigsGroup),
                        std::string(apis::kSchedulingSigsVersion),
                        std::string(apis::kPodGroupResource),
                        group->namespace_,
                        group->name,
                        ""};
  cluster_.mergePatch(ref, apis::podGroupStatusPatch(next, group->resource_version),
                      [key, done = std::move(done)](kube::Expected<void> r) {
                        if (!r)
                          KOORD_LOG_WARNING("coscheduling: updating the status of PodGroup {}: {}",
                                            key, r.error().message);
                        done(r.has_value());
                      });
}

}  // namespace koord::roles::scheduler::coscheduling
