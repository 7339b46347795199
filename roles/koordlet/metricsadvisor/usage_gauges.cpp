#include "metricsadvisor/usage_gauges.h"

#include "metriccache/metric_cache.h"

namespace koord::roles::koordlet {

namespace mc = metriccache;

UsageGauges::UsageGauges(metrics::Registry& r, std::string node_name)
    : node_(std::move(node_name)),
      node_cpu_(r.gauge("koordlet_node_used_cpu_cores",
                        "Number of cpu cores used by node in realtime", {"node"})),
      node_memory_(
          r.gauge("koordlet_node_used_memory_bytes", "Memory used by node in realtime", {"node"})),
      pod_usage_(r.gauge("koordlet_pod_resource_usage",
                         "A pod's latest usage (cpu in cores, memory in bytes)",
                         {"node", "pod_namespace", "pod_name", "pod_uid", "resource"})),
      cache_bytes_(r.gauge("koordlet_metric_cache_bytes",
                           "Memory held by the in-process metric cache", {})) {}

void UsageGauges::update(const mc::MetricCache& cache, const std::vector<PodMeta>& pods) {
  if (auto v = cache.last(mc::MetricKind::kNodeCPUUsage, ""))
    node_cpu_.with({node_}).set(v->value);
  if (auto v = cache.last(mc::MetricKind::kNodeMemoryUsage, ""))
    node_memory_.with({node_}).set(v->value);
  cache_bytes_.with({}).set(static_cast<double>(cache.approximateBytes()));

  std::set<metrics::LabelValues> now;
  for (const auto& p : pods) {
    const std::pair<mc::MetricKind, const char*> kinds[] = {
        {mc::MetricKind::kPodCPUUsage, "cpu"}, {mc::MetricKind::kPodMemoryUsage, "memory"}};
    for (const auto& [kind, resource] : kinds) {
      auto v = cache.last(kind, p.uid);
      if (!v)
        continue;
      metrics::LabelValues labels{node_, p.namespace_, p.name, p.uid, resource};
      pod_usage_.with(labels).set(v->value);
      now.insert(std::move(labels));
    }
  }
  for (const auto& labels : published_) {
    if (now.count(labels) == 0)
      pod_usage_.remove(labels);
  }
  published_ = std::move(now);
}

}  // namespace koord::roles::koordlet
