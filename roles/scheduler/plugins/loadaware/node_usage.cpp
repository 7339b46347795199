#include "plugins/loadaware/node_usage.h"

#include <unordered_map>
#include <unordered_set>

#include "koord/core/saturating.h"

namespace koord::roles::scheduler::loadaware {

namespace {

std::chrono::nanoseconds reportInterval(const apis::NodeMetric& metric) {
  if (metric.collect_policy && metric.collect_policy->report_interval_seconds)
    return saturatingSeconds(*metric.collect_policy->report_interval_seconds);
  return kDefaultNodeMetricReportInterval;
}

void fillAggregated(NodeUsageState& s, const apis::NodeMetricInfo& info,
                    const ResourceVectorizer& vectorizer) {
  std::map<std::string, std::chrono::nanoseconds, std::less<>> longest;
  for (const auto& agg : info.aggregated_node_usages) {
    for (const auto& [type, usage] : agg.usage) {
      if (usage.empty())
        continue;
      s.aggregated[{type, agg.duration}] = vectorizer.fromList(usage);
      auto& d = longest[type];  // starts at 0, so a 0 duration is never "the longest"
      if (agg.duration > d)
        d = agg.duration;
    }
  }
  for (const auto& [type, d] : longest) {
    if (d.count() > 0)
      s.aggregated[{type, std::chrono::nanoseconds(0)}] = s.aggregated[{type, d}];
  }
}

}  // namespace

NodeUsageState buildNodeUsageState(const apis::NodeMetric& metric, const AssignedPods* pods,
                                   const ResourceVectorizer& vectorizer,
                                   bool prod_usage_include_sys) {
  NodeUsageState s;
  s.prod_usage = vectorizer.empty();
  s.node_delta = vectorizer.empty();
  s.prod_delta = vectorizer.empty();
  s.node_estimated = vectorizer.empty();
  if (const auto& info = metric.node_metric) {
    s.node_usage = vectorizer.fromList(info->node_usage);
    fillAggregated(s, *info, vectorizer);
    if (prod_usage_include_sys)
      addTo(s.prod_usage, vectorizer.fromList(info->system_usage));
  }
  if (!pods || pods->empty())
    return s;

  std::unordered_map<std::string, ResourceVector> reported;
  std::unordered_set<std::string> reported_prod;
  for (const auto& pm : metric.pods_metric) {
    if (pm.pod_usage.empty())
      continue;
    std::string key = pm.namespace_ + "/" + pm.name;
    if (pm.priority == apis::PriorityClass::kProd)
      reported_prod.insert(key);
    reported[std::move(key)] = vectorizer.fromList(pm.pod_usage);
  }

  const TimePoint updated = metric.update_time.value_or(TimePoint{});
  // A pod placed within the last report interval may have started after the koordlet sampled.
  const TimePoint maybe_unreported_after = saturatingSub(updated, reportInterval(metric));
  for (const auto& pod : *pods) {
    auto it = reported.find(pod.key);
    const ResourceVector* usage = it == reported.end() ? nullptr : &it->second;
    // Prod usage counts only pods that are prod by both their labels and the report: a pod's
    // class can change, and a report can be wrong or list a pod that has gone.
    const bool active_prod = pod.prod && reported_prod.contains(pod.key);
    if (active_prod)
      addTo(s.prod_usage, *usage);
    if (!pod.estimated)
      continue;
    const ResourceVector& estimated = *pod.estimated;
    bool estimate = usage == nullptr || maybe_unreported_after < pod.assigned_at ||
                    (pod.estimate_until && *pod.estimate_until > updated);
    if (estimate)
      addPositiveDelta(s.node_delta, estimated, usage);
    addTo(s.node_estimated, estimated);
    if (!pod.prod)
      continue;
    if (!active_prod && usage) {
      // Its reported usage is not in prod_usage, so the whole estimate stands in for it.
      usage = nullptr;
      estimate = true;
    }
    if (estimate)
      addPositiveDelta(s.prod_delta, estimated, usage);
  }
  return s;
}

ResourceVector estimatedOfExisting(const NodeUsageState& state,
                                   const ResourceVectorizer& vectorizer, bool prod_pod,
                                   std::chrono::nanoseconds aggregated_duration,
                                   std::string_view aggregation_type) {
  ResourceVector e = vectorizer.empty();
  if (prod_pod) {
    addTo(e, state.prod_usage);
    addTo(e, state.prod_delta);
    return e;
  }
  const ResourceVector* usage = nullptr;
  if (!aggregation_type.empty()) {
    auto it = state.aggregated.find({std::string(aggregation_type), aggregated_duration});
    if (it != state.aggregated.end())
      usage = &it->second;
    else if (aggregated_duration.count() == 0 && state.node_usage)
      usage = &*state.node_usage;
  } else if (state.node_usage) {
    usage = &*state.node_usage;
  }
  if (usage) {
    addTo(e, *usage);
    addTo(e, state.node_delta);
  } else {
    addTo(e, state.node_estimated);
  }
  return e;
}

}  // namespace koord::roles::scheduler::loadaware
