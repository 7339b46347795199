// The two nodeutilization passes: classify by requests, check that balancing is worth it (enough
// low nodes, not all of them), order the sources and hand them to the shared eviction loop.
#include "plugins/nodeutilization/node_utilization.h"

#include <algorithm>

#include "plugins/nodeutilization/requested_usage.h"

namespace koord::roles::descheduler::nodeutilization {

namespace {

bool over(const NodeInfo& n) {
  return !utilization::overResources(n.usage, n.thresholds.high).empty();
}

bool allPositive(const ResourceAmounts& available) {
  return std::all_of(available.begin(), available.end(),
                     [](const auto& kv) { return kv.second > 0; });
}

}  // namespace

Expected<void> LowNodeUtilization::balance(const std::vector<const Node*>& nodes) {
  std::vector<NodeInfo> infos =
      nodeInfos(handle_.snapshot(), nodes, args_->thresholds, args_->target_thresholds,
                args_->use_deviation_thresholds);
  std::vector<NodeInfo*> low, high;
  for (auto& i : infos) {
    if (!i.node->unschedulable && utilization::atOrUnder(i.usage, i.thresholds.low))
      low.push_back(&i);
    else if (over(i))
      high.push_back(&i);
  }
  if (low.empty() || low.size() <= static_cast<std::size_t>(args_->number_of_nodes) ||
      low.size() == nodes.size() || high.empty())
    return {};
  std::stable_sort(high.begin(), high.end(), [](const NodeInfo* a, const NodeInfo* b) {
    return usageSum(*a) > usageSum(*b);
  });
  EvictionPlan plan{kLowNodeUtilizationName, &args_->evictable_namespaces,
                    [](const NodeInfo& src, const ResourceAmounts& available) {
                      return over(src) && allPositive(available);
                    },
                    [](const NodeInfo& src) {
                      const auto res = utilization::overResources(src.usage, src.thresholds.high);
                      return "node " + src.node->name + " is overutilized: requests " +
                             utilization::describeOver(res, src.usage, src.thresholds.high,
                                                       src.node->allocatable);
                    }};
  evictFromSources(handle_, high, low, plan);
  return {};
}

Expected<void> HighNodeUtilization::balance(const std::vector<const Node*>& nodes) {
  utilization::Thresholds target;
  for (const auto& [name, pct] : args_->thresholds)
    target[name] = utilization::kMaxPercent;
  std::vector<NodeInfo> infos =
      nodeInfos(handle_.snapshot(), nodes, args_->thresholds, target, false);
  std::vector<NodeInfo*> sources, targets;
  for (auto& i : infos) {
    if (utilization::atOrUnder(i.usage, i.thresholds.low))
      sources.push_back(&i);
    else if (!i.node->unschedulable)
      targets.push_back(&i);
  }
  if (sources.empty() || sources.size() <= static_cast<std::size_t>(args_->number_of_nodes) ||
      sources.size() == nodes.size() || targets.empty())
    return {};
  std::stable_sort(sources.begin(), sources.end(), [](const NodeInfo* a, const NodeInfo* b) {
    return usageSum(*a) < usageSum(*b);
  });
  EvictionPlan plan{
      kHighNodeUtilizationName, &args_->evictable_namespaces,
      [](const NodeInfo&, const ResourceAmounts& available) { return allPositive(available); },
      [](const NodeInfo& src) {
        return "node " + src.node->name +
               " is underutilized: its pods are packed onto fuller nodes";
      }};
  evictFromSources(handle_, sources, targets, plan);
  return {};
}

}  // namespace koord::roles::descheduler::nodeutilization
