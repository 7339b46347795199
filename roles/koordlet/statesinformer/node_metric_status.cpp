#include "statesinformer/node_metric_status.h"

#include <boost/json.hpp>

#include <algorithm>
#include <cmath>
#include <ctime>

#include <fmt/format.h>

#include "koord/core/duration.h"
#include "koord/kube/quantity.h"
#include "koord/kube/time.h"
#include "prediction/prod_reclaimable.h"

namespace koord::roles::koordlet {

namespace json = boost::json;
namespace mc = metriccache;
using std::chrono::seconds;

NodeMetricCollectSettings collectSettings(const NodeMetricCollectPolicyView& p) {
  NodeMetricCollectSettings s;
  if (p.aggregate_duration_seconds)
    s.aggregate_duration = seconds(std::max<std::int64_t>(60, *p.aggregate_duration_seconds));
  if (p.report_interval_seconds)
    s.report_interval = seconds(std::max<std::int64_t>(30, *p.report_interval_seconds));
  if (p.durations) {
    s.durations.clear();
    for (auto d : *p.durations) {
      auto secs = std::chrono::duration_cast<seconds>(d);
      if (secs.count() > 0)
        s.durations.push_back(secs);
    }
  }
  if (p.memory_collect_policy && !p.memory_collect_policy->empty())
    s.memory_collect_policy = *p.memory_collect_policy;
  return s;
}

namespace {

// {"resources": {"cpu": "1500m", "memory": "1073741824"}}: CPU rounded to whole milli-cores and
// memory to bytes, as the koordlet's Quantities are.
json::object resourceMap(double cpu_cores, double memory_bytes) {
  auto cpu = kube::Quantity::fromMilli(static_cast<std::int64_t>(std::llround(cpu_cores * 1000)));
  auto mem = kube::Quantity::fromInt(static_cast<std::int64_t>(std::llround(memory_bytes)),
                                     kube::Quantity::Format::kBinarySI);
  return json::object{
      {"resources", json::object{{"cpu", cpu.toString()}, {"memory", mem.toString()}}}};
}

mc::MetricKind memoryKind(const NodeMetricCollectSettings& s, bool node) {
  if (s.memory_collect_policy == "usageWithPageCache")
    return node ? mc::MetricKind::kNodeMemoryWithPageCacheUsage
                : mc::MetricKind::kPodMemoryWithPageCacheUsage;
  return node ? mc::MetricKind::kNodeMemoryUsage : mc::MetricKind::kPodMemoryUsage;
}

// Host apps follow the pods' policy, so the two lists always measure memory the same way.
mc::MetricKind hostAppMemoryKind(const NodeMetricCollectSettings& s) {
  return s.memory_collect_policy == "usageWithPageCache"
             ? mc::MetricKind::kHostAppMemoryWithPageCacheUsage
             : mc::MetricKind::kHostAppMemoryUsage;
}

// Average usage over the window; nullopt unless both CPU and memory have samples.
std::optional<json::object> averageUsage(const mc::MetricCache& cache, mc::MetricKind cpu_kind,
                                         mc::MetricKind mem_kind, std::string_view key,
                                         mc::TimePoint start, mc::TimePoint end) {
  auto cpu = cache.summarize(cpu_kind, key, start, end);
  auto mem = cache.summarize(mem_kind, key, start, end);
  if (!cpu || !mem)
    return std::nullopt;
  return resourceMap(cpu->avg, mem->avg);
}

json::array aggregatedUsages(const mc::MetricCache& cache, mc::MetricKind cpu_kind,
                             mc::MetricKind mem_kind, const NodeMetricCollectSettings& s,
                             mc::TimePoint now) {
  json::array out;
  for (auto d : s.durations) {
    auto start = now - d;
    auto cpu = cache.aggregate(cpu_kind, "", start, now);
    auto mem = cache.aggregate(mem_kind, "", start, now);
    if (!cpu || !mem || !mc::coversWindow(*cpu, start, now) || !mc::coversWindow(*mem, start, now))
      continue;
    json::object usage{{"avg", resourceMap(cpu->avg, mem->avg)},
                       {"p50", resourceMap(cpu->p50, mem->p50)},
                       {"p90", resourceMap(cpu->p90, mem->p90)},
                       {"p95", resourceMap(cpu->p95, mem->p95)},
                       {"p99", resourceMap(cpu->p99, mem->p99)}};
    out.push_back(json::object{{"usage", std::move(usage)}, {"duration", formatGoDuration(d)}});
  }
  return out;
}

}  // namespace

json::object buildNodeMetricStatus(const mc::MetricCache& cache, const std::vector<PodMeta>& pods,
                                   const NodeMetricCollectSettings& s, mc::TimePoint now,
                                   const std::vector<HostApplication>& host_apps,
                                   const ProdReclaimableReport& prod_reclaimable) {
  const auto start = now - s.aggregate_duration;
  json::object node_metric;
  if (auto usage =
          averageUsage(cache, mc::MetricKind::kNodeCPUUsage, memoryKind(s, true), "", start, now))
    node_metric["nodeUsage"] = std::move(*usage);
  node_metric["aggregatedNodeUsages"] =
      aggregatedUsages(cache, mc::MetricKind::kNodeCPUUsage, memoryKind(s, true), s, now);
  if (auto usage = averageUsage(cache, mc::MetricKind::kSystemCPUUsage,
                                mc::MetricKind::kSystemMemoryUsage, "", start, now))
    node_metric["systemUsage"] = std::move(*usage);
  node_metric["aggregatedSystemUsages"] = aggregatedUsages(
      cache, mc::MetricKind::kSystemCPUUsage, mc::MetricKind::kSystemMemoryUsage, s, now);

  json::array pods_metric;
  std::vector<const PodMeta*> sorted;
  for (const auto& p : pods)
    sorted.push_back(&p);
  // A stable order, so an unchanged node writes an unchanged list.
  std::sort(sorted.begin(), sorted.end(), [](const PodMeta* a, const PodMeta* b) {
    return std::tie(a->namespace_, a->name) < std::tie(b->namespace_, b->name);
  });
  std::vector<const PodMeta*> with_usage;
  for (const PodMeta* p : sorted) {
    auto usage =
        averageUsage(cache, mc::MetricKind::kPodCPUUsage, memoryKind(s, false), p->uid, start, now);
    if (!usage)
      continue;
    with_usage.push_back(p);
    json::object pm{
        {"namespace", p->namespace_}, {"name", p->name}, {"podUsage", std::move(*usage)}};
    if (auto prio = apis::priorityClassName(p->priority); !prio.empty())
      pm["priority"] = prio;
    if (auto qos = apis::qosClassName(p->qos); !qos.empty())
      pm["qos"] = qos;
    pods_metric.push_back(std::move(pm));
  }

  // Sorted by name for the same reason; the NodeSLO's order is the manager's, not stable.
  std::vector<const HostApplication*> apps;
  for (const auto& a : host_apps)
    apps.push_back(&a);
  std::sort(apps.begin(), apps.end(),
            [](const HostApplication* a, const HostApplication* b) { return a->name < b->name; });
  json::array apps_metric;
  for (const HostApplication* a : apps) {
    auto usage = averageUsage(cache, mc::MetricKind::kHostAppCPUUsage, hostAppMemoryKind(s),
                              a->name, start, now);
    if (!usage)
      continue;
    json::object am{{"name", a->name}, {"usage", std::move(*usage)}};
    if (auto prio = apis::priorityClassName(a->priority); !prio.empty())
      am["priority"] = prio;
    if (auto qos = apis::qosClassName(a->qos); !qos.empty())
      am["qos"] = qos;
    apps_metric.push_back(std::move(am));
  }
  json::object status{{"updateTime", kube::formatTime(now)},
                      {"nodeMetric", std::move(node_metric)},
                      {"podsMetric", std::move(pods_metric)},
                      {"hostApplicationMetric", std::move(apps_metric)}};
  if (prod_reclaimable.predictor != nullptr) {
    // Only the pods with a usage, as Koordinator feeds its predictor.
    auto predicted =
        prediction::predictProdReclaimable(*prod_reclaimable.predictor, with_usage, now);
    if (prod_reclaimable.error != nullptr)
      *prod_reclaimable.error = predicted ? std::string() : predicted.error().message;
    status["prodReclaimableMetric"] = prediction::prodReclaimableMetricJson(predicted);
  }
  return status;
}

}  // namespace koord::roles::koordlet
