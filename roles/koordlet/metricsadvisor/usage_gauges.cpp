#include "metricsadvisor/usage_gauges.h"

#include "koord/apis/extension.h"

#include "metriccache/metric_cache.h"

namespace koord::roles::koordlet {

namespace mc = metriccache;

UsageGauges::UsageGauges(metrics::Registry& r, std::string node_name)
    : node_(std::move(node_name)),
      node_cpu_(r.gauge("koordlet_node_used_cpu_cores",
                        "Number of cpu cores used by node in realtime", {"node"})),
      node_memory_(
          r.gauge("koordlet_node_used_memory_bytes", "Memory used by node in realtime", {"node"})),
      cache_bytes_(
          r.gauge("koordlet_metric_cache_bytes", "Memory held by the in-process metric cache", {})),
      allocatable_(r.gauge("koordlet_node_resource_allocatable",
                           "the node allocatable of resources updated by koordinator",
                           {"node", "resource", "unit"})),
      pod_usage_(r.collectedGauge("koordlet_pod_resource_usage",
                                  "A pod's latest usage (cpu in cores, memory in bytes)",
                                  {"node", "pod_namespace", "pod_name", "pod_uid", "resource"},
                                  [this](const metrics::SeriesSink& sink) { emitPods(sink); })) {}

void UsageGauges::update(const mc::MetricCache& cache,
                         std::shared_ptr<const std::vector<PodMeta>> pods) {
  if (auto v = cache.last(mc::MetricKind::kNodeCPUUsage, ""))
    node_cpu_.with({node_}).set(v->value);
  if (auto v = cache.last(mc::MetricKind::kNodeMemoryUsage, ""))
    node_memory_.with({node_}).set(v->value);
  cache_bytes_.with({}).set(static_cast<double>(cache.approximateBytes()));
  std::lock_guard lock(mu_);
  cache_ = &cache;
  pods_ = std::move(pods);
}

void UsageGauges::updateAllocatable(const NodeInfo& node) {
  static constexpr std::pair<std::string_view, std::string_view> kResources[] = {
      {apis::kBatchCPU, "integer"},
      {apis::kBatchMemory, "byte"},
      {apis::kMidCPU, "integer"},
      {apis::kMidMemory, "byte"}};
  for (const auto& [resource, unit] : kResources) {
    auto it = node.allocatable.find(resource);
    const double value =
        it == node.allocatable.end() ? 0.0 : static_cast<double>(it->second.value());
    allocatable_.with({node_, resource, unit}).set(value);
  }
}

void UsageGauges::emitPods(const metrics::SeriesSink& sink) const {
  std::lock_guard lock(mu_);
  if (cache_ == nullptr || pods_ == nullptr)
    return;
  static constexpr std::pair<mc::MetricKind, std::string_view> kKinds[] = {
      {mc::MetricKind::kPodCPUUsage, "cpu"}, {mc::MetricKind::kPodMemoryUsage, "memory"}};
  for (const auto& p : *pods_) {
    for (const auto& [kind, resource] : kKinds) {
      if (auto v = cache_->last(kind, p.uid)) {
        const std::string_view labels[] = {node_, p.namespace_, p.name, p.uid, resource};
        sink(labels, v->value);
      }
    }
  }
}

}  // namespace koord::roles::koordlet
