// Requests-based usage and the shared eviction loop of LowNodeUtilization and HighNodeUtilization.
#include "plugins/nodeutilization/requested_usage.h"

#include "framework/node_fit.h"
#include "framework/pod_sort.h"
#include "koord/core/saturating.h"

namespace koord::roles::descheduler::nodeutilization {

namespace {

// Sums stick at the int64 bounds: a pod's request may itself be saturated ("1E" cpu).
std::int64_t valueOr0(const ResourceAmounts& m, std::string_view name) {
  auto it = m.find(name);
  return it == m.end() ? 0 : it->second;
}

}  // namespace

std::vector<NodeInfo> nodeInfos(const Snapshot& snapshot, const std::vector<const Node*>& nodes,
                                const utilization::Thresholds& low,
                                const utilization::Thresholds& high, bool deviation) {
  std::vector<std::string> names;
  for (const auto& [name, pct] : low)
    names.push_back(name);
  std::vector<NodeInfo> out;
  for (const Node* n : nodes) {
    NodeInfo info;
    info.node = n;
    for (const auto& name : names)
      info.usage[name] = 0;
    for (const auto& p : snapshot.podsOn(n->name)) {
      if (podFinished(*p))
        continue;
      info.pods.push_back(p.get());
      for (const auto& name : names)
        if (name != "pods")
          info.usage[name] = saturatingAdd(info.usage[name], valueOr0(p->requests, name));
    }
    if (info.usage.count("pods") != 0)
      info.usage["pods"] = static_cast<std::int64_t>(info.pods.size());
    out.push_back(std::move(info));
  }
  utilization::Thresholds average;
  if (deviation) {
    std::vector<std::pair<const ResourceAmounts*, const Node*>> all;
    for (const auto& i : out)
      all.emplace_back(&i.usage, i.node);
    average = utilization::averagePercent(all);
  }
  for (auto& i : out)
    i.thresholds = utilization::nodeThresholds(*i.node, names, low, high, deviation, average);
  return out;
}

std::int64_t usageSum(const NodeInfo& n) {
  std::int64_t sum = 0;
  for (const auto& [name, v] : n.usage)
    sum = saturatingAdd(sum, v);
  return sum;
}

void evictFromSources(FrameworkHandle& handle, std::vector<NodeInfo*>& sources,
                      const std::vector<NodeInfo*>& targets, const EvictionPlan& plan) {
  ResourceAmounts available;
  for (const auto& [name, v] : sources.empty() ? ResourceAmounts{} : sources.front()->usage)
    available[name] = 0;
  for (const NodeInfo* t : targets)
    for (auto& [name, left] : available)
      left = saturatingAdd(
          left, saturatingSub(valueOr0(t->thresholds.high, name), valueOr0(t->usage, name)));

  for (NodeInfo* src : sources) {
    if (handle.totalLimitReached())
      return;
    std::vector<const Pod*> removable;
    for (const Pod* p : src->pods) {
      if (*plan.namespaces && !(*plan.namespaces)->allows(p->namespace_))
        continue;
      if (handle.filter(*p))
        removable.push_back(p);
    }
    sortPodsLowToHigh(removable);
    for (const Pod* p : removable) {
      if (!plan.keep_going(*src, available))
        break;
      if (handle.nodeLimitReached(src->node->name) || handle.totalLimitReached())
        break;
      if (!handle.preEvictionFilter(*p))
        continue;
      if (!handle.evict(*p, EvictOptions{std::string(plan.plugin_name), plan.reason(*src)}))
        continue;
      for (auto& [name, left] : available) {
        const std::int64_t q = name == "pods" ? 1 : valueOr0(p->requests, name);
        left = saturatingSub(left, q);
        src->usage[name] = saturatingSub(src->usage[name], q);
      }
    }
  }
}

}  // namespace koord::roles::descheduler::nodeutilization
