// The koordlet's usage on /metrics: Koordinator's node gauges (koordlet_node_used_cpu_cores,
// koordlet_node_used_memory_bytes, koordlet_node_resource_allocatable for the batch and mid
// resources) plus one gauge per pod and resource, dropped when the pod goes.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "koord/core/metrics.h"
#include "statesinformer/node_info.h"
#include "statesinformer/pod_meta.h"

namespace koord::roles::koordlet {

namespace metriccache {
class MetricCache;
}

class UsageGauges {
 public:
  UsageGauges(metrics::Registry& registry, std::string node_name);

  /// Sets the node gauges from the cache's latest samples and keeps `pods`: each scrape writes
  /// the pods' series from the cache as it is then (`cache` must outlive this), so a pod that
  /// left has no series and nothing is rebuilt per pod every round.
  void update(const metriccache::MetricCache& cache,
              std::shared_ptr<const std::vector<PodMeta>> pods);
  /// koordlet_node_resource_allocatable{node, resource, unit} from the Node the koordlet saw:
  /// batch-cpu and mid-cpu (unit integer, milli-cores as the manager writes them), batch-memory
  /// and mid-memory (unit byte); 0 where the node has none, as Koordinator records them.
  void updateAllocatable(const NodeInfo& node);

 private:
  void emitPods(const metrics::SeriesSink& sink) const;

  std::string node_;
  metrics::GaugeFamily& node_cpu_;
  metrics::GaugeFamily& node_memory_;
  metrics::GaugeFamily& cache_bytes_;
  metrics::GaugeFamily& allocatable_;
  mutable std::mutex mu_;
  const metriccache::MetricCache* cache_ = nullptr;
  std::shared_ptr<const std::vector<PodMeta>> pods_;
  metrics::CollectedFamily pod_usage_;  // last: unregistered before what it reads goes
};

}  // namespace koord::roles::koordlet
