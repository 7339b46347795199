// LowNodeLoad's pass: per node pool, classify the nodes with fresh NodeMetrics, let the anomaly
// detectors confirm the hot ones, then move pods from them while the cold nodes have headroom.
#include "plugins/lownodeload/low_node_load.h"

#include <algorithm>
#include <utility>

#include "framework/node_fit.h"
#include "koord/core/log.h"
#include "plugins/lownodeload/node_usage.h"
#include "plugins/lownodeload/pod_order.h"

namespace koord::roles::descheduler::lownodeload {

namespace {

std::int64_t valueOr0(const ResourceAmounts& m, std::string_view name) {
  auto it = m.find(name);
  return it == m.end() ? 0 : it->second;
}

// Koordinator's node score: usage per mille of allocatable, weighted, capped at full.
std::int64_t nodeScore(const NodeUsage& u, bool prod, const ResourceWeights& weights) {
  std::int64_t score = 0, weight_sum = 0;
  for (const auto& [name, used] : prod ? u.prod_usage : u.usage) {
    auto w = weights.find(name);
    const std::int64_t weight = w == weights.end() ? 0 : w->second;
    const std::int64_t capacity = valueOr0(u.node->allocatable, name);
    std::int64_t s = 0;
    if (capacity != 0)
      s = std::min(used, capacity) * 1000 / capacity;
    score += s * weight;
    weight_sum += weight;
  }
  return weight_sum == 0 ? 0 : score / weight_sum;
}

const ResourceAmounts& usageOf(const NodeUsage& u, bool prod) {
  return prod ? u.prod_usage : u.usage;
}
const ResourceAmounts& highOf(const NodeUsage& u, bool prod) {
  return prod ? u.prod_thresholds.high : u.thresholds.high;
}

// Headroom under the high thresholds summed over `nodes`.
ResourceAmounts headroom(const std::vector<NodeUsage*>& nodes,
                         const std::vector<std::string>& names, bool prod) {
  ResourceAmounts total;
  for (const auto& name : names)
    total[name] = 0;
  for (const NodeUsage* n : nodes)
    for (const auto& name : names)
      total[name] += valueOr0(highOf(*n, prod), name) - valueOr0(usageOf(*n, prod), name);
  return total;
}

}  // namespace

// What one pool's pass works on.
struct LowNodeLoad::State {
  const NodePool* pool;
  PoolThresholds thresholds;
  std::vector<NodeUsage> usages;
};

LowNodeLoad::LowNodeLoad(std::shared_ptr<const LowNodeLoadArgs> args, FrameworkHandle& handle)
    : args_(std::move(args)),
      handle_(handle),
      node_detectors_(args_->detector_cache_timeout),
      prod_detectors_(args_->detector_cache_timeout) {}

Expected<std::shared_ptr<LowNodeLoad>> LowNodeLoad::make(
    std::shared_ptr<const LowNodeLoadArgs> args, FrameworkHandle& handle) {
  std::shared_ptr<LowNodeLoad> p(new LowNodeLoad(std::move(args), handle));
  for (const auto& pool : p->args_->pools) {
    Pool compiled{&pool, std::nullopt};
    if (pool.node_selector) {
      auto s = kube::toSelector(*pool.node_selector);
      if (!s)
        return invalidArgument("LowNodeLoad: nodePools " + pool.name +
                               ": nodeSelector: " + s.error().message);
      compiled.node_selector = std::move(*s);
    }
    p->pools_.push_back(std::move(compiled));
  }
  for (const auto& ps : p->args_->pod_selectors) {
    if (!ps.selector)
      continue;
    auto s = kube::toSelector(*ps.selector);
    if (!s)
      return invalidArgument("LowNodeLoad: podSelectors " + ps.name + ": " + s.error().message);
    p->pod_selectors_.push_back(std::move(*s));
  }
  return p;
}

bool LowNodeLoad::evictable(const Pod& pod) const {
  if (args_->evictable_namespaces && !args_->evictable_namespaces->allows(pod.namespace_))
    return false;
  if (!pod_selectors_.empty() &&
      std::none_of(pod_selectors_.begin(), pod_selectors_.end(),
                   [&](const kube::Selector& s) { return s.matches(pod.labels); }))
    return false;
  return handle_.filter(pod);
}

Expected<void> LowNodeLoad::balance(const std::vector<const Node*>& nodes) {
  if (args_->paused)
    return {};
  std::vector<std::string> processed;
  for (const Pool& pool : pools_)
    processPool(pool, nodes, processed);
  return {};
}

void LowNodeLoad::processPool(const Pool& pool, const std::vector<const Node*>& all_nodes,
                              std::vector<std::string>& processed) {
  const Snapshot& snap = handle_.snapshot();
  const TimePoint now = snap.now;
  const NodePool& cfg = *pool.args;

  // A pool without a selector takes every node, as Koordinator's does, even those an earlier
  // pool already moved pods from.
  std::vector<const Node*> nodes;
  for (const Node* n : all_nodes) {
    if (!pool.node_selector) {
      nodes.push_back(n);
    } else if (std::find(processed.begin(), processed.end(), n->name) == processed.end() &&
               pool.node_selector->matches(n->labels)) {
      nodes.push_back(n);
    }
  }
  if (nodes.empty())
    return;

  State st{&cfg, poolThresholds(cfg), {}};
  for (const Node* n : nodes) {
    if (auto u = nodeUsage(snap, *n, st.thresholds.names, args_->node_metric_expiration_seconds))
      st.usages.push_back(std::move(*u));
  }
  setThresholds(st.usages, st.thresholds, cfg.use_deviation_thresholds);

  std::vector<NodeUsage*> low, high, prod_low, prod_high, both_low;
  for (auto& u : st.usages) {
    const bool under = !u.node->unschedulable && utilization::atOrUnder(u.usage, u.thresholds.low);
    const bool prod_over =
        !utilization::overResources(u.prod_usage, u.prod_thresholds.high).empty();
    const bool prod_under =
        !u.node->unschedulable && utilization::atOrUnder(u.prod_usage, u.prod_thresholds.low);
    if (under) {
      (prod_over ? prod_high : prod_under ? both_low : low).push_back(&u);
    } else if (!utilization::overResources(u.usage, u.thresholds.high).empty()) {
      high.push_back(&u);
    } else if (prod_over) {
      prod_high.push_back(&u);
    } else if (prod_under) {
      prod_low.push_back(&u);
    }
  }
  KOORD_VLOG(4,
             "descheduler: LowNodeLoad pool {}: {} of {} nodes with a fresh NodeMetric; {} over "
             "the high thresholds ({} prod), {} under the low ({} prod, {} both)",
             cfg.name, st.usages.size(), nodes.size(), high.size(), prod_high.size(), low.size(),
             prod_low.size(), both_low.size());
  if (high.empty() && prod_high.empty())
    return;

  auto confirm = [&](const std::vector<NodeUsage*>& hot, AnomalyDetectors& detectors) {
    std::vector<NodeUsage*> out;
    for (NodeUsage* u : hot)
      if (detectors.markAbnormal(u->node->name, cfg.anomaly_condition, now))
        out.push_back(u);
    return out;
  };
  std::vector<NodeUsage*> abnormal = confirm(high, node_detectors_);
  std::vector<NodeUsage*> abnormal_prod = confirm(prod_high, prod_detectors_);
  if (abnormal.empty() && abnormal_prod.empty())
    return;
  if (low.empty() && prod_low.empty() && both_low.empty())
    return;
  for (const NodeUsage* u : low)
    node_detectors_.reset(u->node->name, now);
  for (const NodeUsage* u : prod_low)
    prod_detectors_.reset(u->node->name, now);
  for (const NodeUsage* u : both_low)
    node_detectors_.reset(u->node->name, now);

  const std::size_t all_low = low.size() + prod_low.size() + both_low.size();
  if (all_low <= static_cast<std::size_t>(args_->number_of_nodes) || all_low == nodes.size())
    return;

  for (bool prod : {false, true}) {
    auto& v = prod ? abnormal_prod : abnormal;
    std::stable_sort(v.begin(), v.end(), [&](const NodeUsage* a, const NodeUsage* b) {
      return nodeScore(*a, prod, cfg.resource_weights) > nodeScore(*b, prod, cfg.resource_weights);
    });
  }

  const auto& names = st.thresholds.names;

  // A pod fits a target when the node takes it and the target stays under its high thresholds
  // with the pod's usage added; that usage then stays counted on the target for the pass.
  auto fitsTarget = [&](const Pod& pod, const std::vector<NodeUsage*>& targets,
                        const ResourceAmounts& pod_usage, bool prod) {
    for (NodeUsage* t : targets) {
      if (!t->free)
        t->free = freeOn(snap, *t->node);
      if (!podFitsNode(pod, *t->node, *t->free))
        continue;
      ResourceAmounts& usage = prod ? t->prod_usage : t->usage;
      const ResourceAmounts before = usage;
      bool exceeded = false;
      for (const auto& [name, limit] : highOf(*t, prod)) {
        auto it = usage.find(name);
        if (it == usage.end())
          continue;
        it->second += valueOr0(pod_usage, name);
        if (it->second > limit) {
          exceeded = true;
          break;
        }
      }
      if (!exceeded)
        return true;
      usage = before;
    }
    return false;
  };

  auto keepGoing = [&](NodeUsage& src, const ResourceAmounts& available, bool prod) {
    if (utilization::overResources(usageOf(src, prod), highOf(src, prod)).empty()) {
      (prod ? prod_detectors_ : node_detectors_).reset(src.node->name, now);
      return false;
    }
    return std::all_of(available.begin(), available.end(),
                       [](const auto& kv) { return kv.second > 0; });
  };

  auto reason = [&](const NodeUsage& src, bool prod) {
    const auto over = utilization::overResources(usageOf(src, prod), highOf(src, prod));
    return "node " + src.node->name + " is overutilized: " + (prod ? "prod " : "node ") +
           utilization::describeOver(over, usageOf(src, prod), highOf(src, prod),
                                     src.node->allocatable);
  };

  auto balancePods = [&](const std::vector<NodeUsage*>& sources,
                         const std::vector<NodeUsage*>& targets, ResourceAmounts& available,
                         bool prod) {
    if (targets.empty())
      return;
    for (NodeUsage* src : sources) {
      if (handle_.totalLimitReached())
        return;
      std::vector<const Pod*> removable;
      for (const Pod* pod : prod ? src->prod_pods : src->pods) {
        if (!evictable(*pod))
          continue;
        if (args_->node_fit) {
          auto pu = src->pod_usage.find(pod->key());
          if (pu == src->pod_usage.end() || !fitsTarget(*pod, targets, pu->second, prod))
            continue;
        }
        removable.push_back(pod);
      }
      if (removable.empty())
        continue;
      ResourceAmounts excess;
      ResourceWeights weights;
      for (const auto& name : utilization::overResources(usageOf(*src, prod), highOf(*src, prod))) {
        excess[name] = valueOr0(usageOf(*src, prod), name) - valueOr0(highOf(*src, prod), name);
        auto w = cfg.resource_weights.find(name);
        weights[name] = w == cfg.resource_weights.end() ? 0 : w->second;
      }
      sortForEviction(removable, src->pod_usage, excess, weights);

      for (const Pod* pod : removable) {
        if (!keepGoing(*src, available, prod))
          break;
        if (handle_.nodeLimitReached(src->node->name) || handle_.totalLimitReached())
          break;
        if (!evictable(*pod))
          continue;
        if (!args_->dry_run) {
          if (!handle_.preEvictionFilter(*pod) ||
              !handle_.evict(*pod, EvictOptions{std::string(kLowNodeLoadName), reason(*src, prod)}))
            continue;
        }
        auto pu = src->pod_usage.find(pod->key());
        if (pu == src->pod_usage.end())
          continue;
        for (auto& [name, left] : available) {
          const std::int64_t q = name == "pods" ? 1 : valueOr0(pu->second, name);
          left -= q;
          if (auto it = src->usage.find(name); it != src->usage.end())
            it->second -= q;
          if (auto it = src->prod_usage.find(name); prod && it != src->prod_usage.end())
            it->second -= q;
        }
      }
    }
  };

  // Cold nodes take pods from hot nodes first; what the doubly cold nodes have left after that
  // is then shared with the prod-hot nodes.
  ResourceAmounts node_room = headroom(low, names, false);
  ResourceAmounts both_room = headroom(both_low, names, false);
  const ResourceAmounts prod_room = headroom(prod_low, names, true);
  const ResourceAmounts prod_both_room = headroom(both_low, names, true);
  for (auto& [name, v] : node_room)
    v += both_room[name];
  std::vector<NodeUsage*> targets = low;
  targets.insert(targets.end(), both_low.begin(), both_low.end());
  balancePods(abnormal, targets, node_room, false);

  ResourceAmounts prod_total;
  for (const auto& name : names) {
    std::int64_t& both = both_room[name];
    both = std::min(both, node_room[name]);
    prod_total[name] = valueOr0(prod_room, name) + std::min(valueOr0(prod_both_room, name), both);
  }
  std::vector<NodeUsage*> prod_targets = prod_low;
  prod_targets.insert(prod_targets.end(), both_low.begin(), both_low.end());
  balancePods(abnormal_prod, prod_targets, prod_total, true);

  for (const NodeUsage* u : abnormal)
    node_detectors_.markNormal(u->node->name, now);
  for (const NodeUsage* u : abnormal_prod)
    prod_detectors_.markNormal(u->node->name, now);
  for (const NodeUsage* u : high)
    processed.push_back(u->node->name);
}

}  // namespace koord::roles::descheduler::lownodeload
