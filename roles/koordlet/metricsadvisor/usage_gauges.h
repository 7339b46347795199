// The koordlet's usage on /metrics: Koordinator's node gauges (koordlet_node_used_cpu_cores,
// koordlet_node_used_memory_bytes) plus one gauge per pod and resource, dropped when the pod goes.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "koord/core/metrics.h"
#include "statesinformer/pod_meta.h"

namespace koord::roles::koordlet {

namespace metriccache {
class MetricCache;
}

class UsageGauges {
 public:
  UsageGauges(metrics::Registry& registry, std::string node_name);

  /// Sets every gauge from the cache's latest samples; removes the series of pods not in `pods`.
  void update(const metriccache::MetricCache& cache, const std::vector<PodMeta>& pods);

 private:
  std::string node_;
  metrics::GaugeFamily& node_cpu_;
  metrics::GaugeFamily& node_memory_;
  metrics::GaugeFamily& pod_usage_;
  metrics::GaugeFamily& cache_bytes_;
  std::set<metrics::LabelValues> published_;
};

}  // namespace koord::roles::koordlet
