// Drives the peak predict server on a thread of its own (checkpoints fsync): restores the
// checkpoints once the pods are known, then trains every interval and expires and checkpoints
// models every minute, as Koordinator's predict server loops do.
#pragma once

#include <chrono>
#include <functional>
#include <memory>

#include "metriccache/metric_cache.h"
#include "prediction/peak_predict_server.h"
#include "statesinformer/states_snapshot.h"

namespace koord::roles::koordlet::prediction {

class PredictionRunner {
 public:
  /// `server` and `cache` must outlive the runner; `states` is called from the runner's thread.
  PredictionRunner(PeakPredictServer& server, const metriccache::MetricCache& cache,
                   std::function<StatesSnapshot()> states);
  /// Stops the thread.
  ~PredictionRunner();
  PredictionRunner(const PredictionRunner&) = delete;
  PredictionRunner& operator=(const PredictionRunner&) = delete;

  void start();
  /// Ends the thread; idempotent.
  void stop();

  /// One pass on the caller's thread (tests): until the states are synced, nothing; the first
  /// synced pass restores the checkpoints; then a training round when `train`, and garbage
  /// collection and a checkpoint step when `maintain`. Returns whether it got past the
  /// restore.
  bool step(std::chrono::system_clock::time_point now, bool train, bool maintain);

 private:
  struct State;
  std::shared_ptr<State> state_;
};

}  // namespace koord::roles::koordlet::prediction
