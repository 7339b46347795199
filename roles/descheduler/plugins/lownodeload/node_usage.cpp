// NodeMetric to usage amounts: the system's usage plus the reported pods', as Koordinator sums it
// (the node's own total is not read, so the pods' share can be taken off as they move).
#include "plugins/lownodeload/node_usage.h"

#include <set>

#include "framework/node_fit.h"
#include "plugins/lownodeload/pod_order.h"

namespace koord::roles::descheduler::lownodeload {

namespace {

std::int64_t valueOr0(const ResourceAmounts& m, std::string_view name) {
  auto it = m.find(name);
  return it == m.end() ? 0 : it->second;
}

}  // namespace

PoolThresholds poolThresholds(const NodePool& pool) {
  PoolThresholds t{{},
                   pool.low_thresholds,
                   pool.high_thresholds,
                   pool.prod_low_thresholds,
                   pool.prod_high_thresholds};
  std::set<std::string, std::less<>> names{"memory"};
  for (const Thresholds* m : {&t.low, &t.high, &t.prod_low, &t.prod_high})
    for (const auto& [name, pct] : *m)
      names.insert(name);
  const double fill =
      pool.use_deviation_thresholds ? utilization::kMinPercent : utilization::kMaxPercent;
  for (const auto& name : names) {
    for (Thresholds* m : {&t.low, &t.high, &t.prod_low, &t.prod_high})
      m->try_emplace(name, fill);
    t.names.push_back(name);
  }
  return t;
}

std::optional<NodeUsage> nodeUsage(const Snapshot& snapshot, const Node& node,
                                   const std::vector<std::string>& names,
                                   std::int64_t expiration_seconds) {
  const apis::NodeMetric* metric = snapshot.nodeMetric(node.name);
  if (metric == nullptr || !metric->node_metric || !metric->update_time ||
      snapshot.now - *metric->update_time >= std::chrono::seconds(expiration_seconds))
    return std::nullopt;

  NodeUsage u;
  u.node = &node;
  std::set<std::string, std::less<>> prod;
  for (const auto& p : snapshot.podsOn(node.name)) {
    if (podFinished(*p))
      continue;
    u.pods.push_back(p.get());
    if (podPriorityClass(*p) == apis::PriorityClass::kProd) {
      u.prod_pods.push_back(p.get());
      prod.insert(p->key());
    }
  }
  for (const auto& pm : metric->pods_metric)
    u.pod_usage[pm.namespace_ + "/" + pm.name] = amountsOf(pm.pod_usage);

  const ResourceAmounts system = amountsOf(metric->node_metric->system_usage);
  for (const auto& name : names) {
    std::int64_t all = valueOr0(system, name), prod_sum = 0;
    for (const auto& [key, amounts] : u.pod_usage) {
      const std::int64_t v = valueOr0(amounts, name);
      all += v;
      if (prod.count(key) != 0)
        prod_sum += v;
    }
    u.usage[name] = all;
    u.prod_usage[name] = prod_sum;
  }
  u.usage["pods"] = static_cast<std::int64_t>(u.pods.size());
  u.prod_usage["pods"] = static_cast<std::int64_t>(u.prod_pods.size());
  return u;
}

void setThresholds(std::vector<NodeUsage>& usages, const PoolThresholds& t, bool deviation) {
  Thresholds average, prod_average;
  if (deviation) {
    std::vector<std::pair<const ResourceAmounts*, const Node*>> all, prod;
    for (const auto& u : usages) {
      all.emplace_back(&u.usage, u.node);
      prod.emplace_back(&u.prod_usage, u.node);
    }
    average = utilization::averagePercent(all);
    prod_average = utilization::averagePercent(prod);
  }
  for (auto& u : usages) {
    u.thresholds = utilization::nodeThresholds(*u.node, t.names, t.low, t.high, deviation, average);
    u.prod_thresholds = utilization::nodeThresholds(*u.node, t.names, t.prod_low, t.prod_high,
                                                    deviation, prod_average);
  }
}

}  // namespace koord::roles::descheduler::lownodeload
