// One training round's input from the metric cache: like Koordinator's metric server, the p90 of
// each pod's and the node's CPU and memory usage over the last training interval.
#pragma once

#include <chrono>
#include <vector>

#include "metriccache/metric_cache.h"
#include "prediction/peak_predict_server.h"
#include "statesinformer/pod_meta.h"

namespace koord::roles::koordlet::prediction {

/// Pods need both a CPU and a memory sample in [now - window, now] to take part; the node's
/// resources are each set when it has samples.
TrainingRound collectTrainingRound(const metriccache::MetricCache& cache,
                                   const std::vector<PodMeta>& pods, TimePoint now,
                                   std::chrono::nanoseconds window);

}  // namespace koord::roles::koordlet::prediction
