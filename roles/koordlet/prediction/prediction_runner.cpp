#include "prediction/prediction_runner.h"

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include <fmt/format.h>

#include "koord/core/log.h"
#include "prediction/training_round.h"

namespace koord::roles::koordlet::prediction {

namespace {

// Koordinator runs model GC and checkpoints every minute.
constexpr std::chrono::seconds kMaintenanceInterval{60};

void logRestore(const RestoreReport& r, const std::filesystem::path& dir) {
  for (const auto& [file, why] : r.refused)
    KOORD_LOG_WARNING("prediction: checkpoint {} refused and removed: {}", (dir / file).string(),
                      why);
  if (!r.error.empty()) {
    KOORD_LOG_WARNING("prediction: checkpoints not restored, models start empty: {}", r.error);
    return;
  }
  if (r.missing) {
    KOORD_LOG_INFO("prediction: no checkpoints in {}, models start empty", dir.string());
    return;
  }
  if (r.skipped > 0)
    KOORD_LOG_WARNING("prediction: {} checkpoint files in {} beyond the {} read were left alone",
                      r.skipped, dir.string(), kMaxModelCheckpointFiles);
  KOORD_LOG_INFO(
      "prediction: {} models restored from {}{}; {} of gone pods and {} refused removed, {} "
      "temporary files removed",
      r.restored, dir.string(), r.restored == 0 ? " (models start empty)" : "", r.unknown,
      r.refused.size(), r.temporaries_removed);
}

}  // namespace

struct PredictionRunner::State {
  PeakPredictServer& server;
  const metriccache::MetricCache& cache;
  std::function<StatesSnapshot()> states;
  std::mutex mu;
  std::condition_variable wake;
  bool stopping = false;
  bool started = false;
  std::thread thread;
  // Only the runner's thread (or a test calling step()) touches these.
  bool restored = false;
  bool checkpoint_failing = false;

  State(PeakPredictServer& s, const metriccache::MetricCache& c, std::function<StatesSnapshot()> f)
      : server(s), cache(c), states(std::move(f)) {}

  bool step(std::chrono::system_clock::time_point now, bool train, bool maintain) {
    StatesSnapshot snap = states();
    if (!snap.synced || snap.pods == nullptr)
      return false;
    if (!restored) {
      std::set<std::string, std::less<>> known;
      for (const auto& pod : *snap.pods)
        known.insert(pod.uid);
      logRestore(server.restore(known, snap.node != nullptr, now), server.config().checkpoint_dir);
      restored = true;
    }
    if (train) {
      server.train(collectTrainingRound(cache, *snap.pods, now, server.config().training_interval),
                   now);
    }
    if (maintain) {
      auto expired = server.collectGarbage(now);
      if (!expired.empty())
        KOORD_VLOG(3, "prediction: {} models expired", expired.size());
      auto written = server.checkpoint(now);
      if (written.failed > 0) {
        if (!checkpoint_failing)
          KOORD_LOG_ERROR("prediction: {} model checkpoints not written: {}", written.failed,
                          written.first_error);
        checkpoint_failing = true;
      } else if (written.written > 0) {
        if (checkpoint_failing)
          KOORD_LOG_INFO("prediction: model checkpoints written again");
        checkpoint_failing = false;
      }
    }
    return true;
  }

  void loop() {
    using clock = std::chrono::steady_clock;
    const auto train_every = std::max<std::chrono::nanoseconds>(server.config().training_interval,
                                                                std::chrono::seconds(1));
    auto next_train = clock::now();
    auto next_maintain = clock::now();
    std::unique_lock lock(mu);
    while (!stopping) {
      auto wake_at = std::min(next_train, next_maintain);
      if (wake.wait_until(lock, wake_at, [this] { return stopping; }))
        break;
      const auto t = clock::now();
      const bool train = t >= next_train;
      const bool maintain = t >= next_maintain;
      if (!train && !maintain)
        continue;
      lock.unlock();
      const bool ran = step(std::chrono::system_clock::now(), train, maintain);
      lock.lock();
      // Until the states sync, poll every second, as Koordinator waits for the cache sync.
      const auto after = clock::now();
      if (!ran) {
        next_train = next_maintain = after + std::chrono::seconds(1);
        continue;
      }
      if (train)
        next_train = after + train_every;
      if (maintain)
        next_maintain = after + kMaintenanceInterval;
    }
  }
};

PredictionRunner::PredictionRunner(PeakPredictServer& server, const metriccache::MetricCache& cache,
                                   std::function<StatesSnapshot()> states)
    : state_(std::make_shared<State>(server, cache, std::move(states))) {}

PredictionRunner::~PredictionRunner() {
  stop();
}

void PredictionRunner::start() {
  std::lock_guard lock(state_->mu);
  if (state_->started || state_->stopping)
    return;
  state_->started = true;
  state_->thread = std::thread([s = state_] { s->loop(); });
}

void PredictionRunner::stop() {
  {
    std::lock_guard lock(state_->mu);
    state_->stopping = true;
  }
  state_->wake.notify_all();
  if (state_->thread.joinable())
    state_->thread.join();
}

bool PredictionRunner::step(std::chrono::system_clock::time_point now, bool train, bool maintain) {
  return state_->step(now, train, maintain);
}

}  // namespace koord::roles::koordlet::prediction
