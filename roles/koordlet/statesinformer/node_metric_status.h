// Builds the NodeMetric status the koordlet reports: node and system usage averaged over the
// aggregate window, the aggregated percentiles per duration, each pod's and host app's usage.
#pragma once

#include <boost/json/fwd.hpp>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "metriccache/metric_cache.h"
#include "statesinformer/host_application.h"
#include "statesinformer/pod_meta.h"

namespace koord::roles::koordlet {

namespace prediction {
class PeakPredictServer;
}

/// spec.metricCollectPolicy with the koordlet's defaults and floors applied.
struct NodeMetricCollectSettings {
  std::chrono::seconds aggregate_duration{300};  // min 60
  std::chrono::seconds report_interval{60};      // min 30
  std::vector<std::chrono::seconds> durations{std::chrono::minutes(5), std::chrono::minutes(10),
                                              std::chrono::minutes(30)};
  std::string memory_collect_policy = "usageWithoutPageCache";
};

/// From the NodeMetric's spec (apis::NodeMetricCollectPolicy, absent fields = defaults); values
/// below Koordinator's floors are raised to them.
struct NodeMetricCollectPolicyView {
  std::optional<std::int64_t> aggregate_duration_seconds;
  std::optional<std::int64_t> report_interval_seconds;
  std::optional<std::vector<std::chrono::nanoseconds>> durations;
  std::optional<std::string> memory_collect_policy;
};
NodeMetricCollectSettings collectSettings(const NodeMetricCollectPolicyView& policy);

/// The prod reclaimable prediction for the report (prediction/prod_reclaimable.h).
struct ProdReclaimableReport {
  const prediction::PeakPredictServer* predictor = nullptr;
  /// Set to why the prediction failed, cleared when it succeeded (the reporter logs changes).
  std::string* error = nullptr;
};

/// The `status` object (updateTime, nodeMetric, podsMetric, hostApplicationMetric and, with a
/// predictor, prodReclaimableMetric over the pods reported) for a merge patch of the status
/// subresource. Pods and host applications without samples in the window are left out;
/// aggregated usages for a duration the cache does not cover by half yet are left out (cold
/// start), as Koordinator does.
boost::json::object buildNodeMetricStatus(const metriccache::MetricCache& cache,
                                          const std::vector<PodMeta>& pods,
                                          const NodeMetricCollectSettings& settings,
                                          metriccache::TimePoint now,
                                          const std::vector<HostApplication>& host_apps = {},
                                          const ProdReclaimableReport& prod_reclaimable = {});

}  // namespace koord::roles::koordlet
