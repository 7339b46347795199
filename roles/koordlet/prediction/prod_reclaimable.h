// Koordinator's ProdReclaimablePredictor: how much of the prod (and unclassified) pods' requests
// their predicted peaks leave unused, for the NodeMetric's status.prodReclaimableMetric.
#pragma once

#include <boost/json/fwd.hpp>

#include <cstdint>
#include <span>

#include "koord/core/expected.h"
#include "prediction/peak_predict_server.h"
#include "statesinformer/pod_meta.h"

namespace koord::roles::koordlet::prediction {

struct Reclaimable {
  std::int64_t cpu_milli = 0;
  std::int64_t memory_bytes = 0;
  friend bool operator==(const Reclaimable&, const Reclaimable&) = default;
};

/// Both of Koordinator's estimates, and the minimum that is reported.
struct ProdReclaimableResult {
  /// Sum over each prod/none pod past its cold start, not terminating and not finished, of
  /// max(request - peak * (100 + margin) / 100, 0), with the pod's p95 CPU and p98 memory.
  Reclaimable by_pods;
  /// max(request sum - (p95/p98 of "sys" + prod item + none item) * (100 + margin) / 100, 0)
  /// over the prod/none pods not terminating and not finished (cold ones included).
  Reclaimable by_priority;
  /// min(by_pods, by_priority) per resource.
  Reclaimable reclaimable;
  int pods_counted = 0;      // pods in by_pods
  int pods_cold = 0;         // prod/none pods still in their cold start
  int pods_unpredicted = 0;  // prod/none pods without a model: left out of both sums
};

/// `pods`: the pods the report has a usage for (Koordinator feeds only those to the
/// predictor). A pod UID seen twice counts once. An error when the "sys" model or a prod/none
/// priority item has no model yet (before the first training round).
Expected<ProdReclaimableResult> predictProdReclaimable(const PeakPredictServer& server,
                                                       std::span<const PodMeta* const> pods,
                                                       TimePoint now);

/// status.prodReclaimableMetric for a merge patch: {"resource":{"resources":{"cpu":"1500m",
/// "memory":"1Gi"}}}; on failure {"resource":{"resources":null}}, which leaves
/// Koordinator's empty ReclaimableMetric (the manager then degrades the Mid resources) rather
/// than the last good figures.
boost::json::object prodReclaimableMetricJson(const Expected<ProdReclaimableResult>& result);

}  // namespace koord::roles::koordlet::prediction
