#include "runtime/framework.h"

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <stdexcept>

#include <fmt/format.h>

#include "runtime/parallelizer.h"

namespace koord::roles::scheduler {

using config::ExtensionPoint;

namespace {

constexpr std::size_t kPrefetchDistance = 8;

// Starts loading the NodeInfo at `far` and the Node of the (already requested) NodeInfo at
// `near`; both only hints, so a wrong guess at a chunk's end costs nothing but bandwidth.
void prefetchNode(const std::vector<std::shared_ptr<const NodeInfo>>& nodes, std::size_t far,
                  std::size_t near) {
  __builtin_prefetch(nodes[far].get());
  __builtin_prefetch(nodes[near]->node.get());
}

template <typename T>
T* as(Plugin* p) {
  return dynamic_cast<T*>(p);
}

bool implementsPoint(Plugin* p, ExtensionPoint point) {
  switch (point) {
    case ExtensionPoint::kQueueSort:
      return as<QueueSortPlugin>(p) != nullptr;
    case ExtensionPoint::kPreFilter:
      return as<PreFilterPlugin>(p) != nullptr;
    case ExtensionPoint::kFilter:
      return as<FilterPlugin>(p) != nullptr;
    case ExtensionPoint::kPostFilter:
      return as<PostFilterPlugin>(p) != nullptr;
    case ExtensionPoint::kPreScore:
      return as<PreScorePlugin>(p) != nullptr;
    case ExtensionPoint::kScore:
      return as<ScorePlugin>(p) != nullptr;
    case ExtensionPoint::kReserve:
      return as<ReservePlugin>(p) != nullptr;
    case ExtensionPoint::kPermit:
      return as<PermitPlugin>(p) != nullptr;
    case ExtensionPoint::kPreBind:
      return as<PreBindPlugin>(p) != nullptr;
    case ExtensionPoint::kBind:
      return as<BindPlugin>(p) != nullptr;
    case ExtensionPoint::kPostBind:
      return as<PostBindPlugin>(p) != nullptr;
    case ExtensionPoint::kPreEnqueue:
    case ExtensionPoint::kMultiPoint:
      return false;
  }
  return false;
}

Status named(Status s, std::string_view plugin) {
  if (!s.ok() && s.plugin().empty())
    s.withPlugin(std::string(plugin));
  return s;
}

}  // namespace

Framework::~Framework() = default;

kube::Expected<std::unique_ptr<Framework>> Framework::create(const config::Profile& profile,
                                                             const PluginRegistry& registry,
                                                             const ClusterView& cluster,
                                                             Parallelizer& parallelizer) {
  std::unique_ptr<Framework> fw(new Framework(cluster, parallelizer));
  fw->scheduler_name_ = profile.scheduler_name;
  const std::string where = fmt::format("profiles[{}] ({})", profile.index, profile.scheduler_name);

  // Every plugin named at any point (MultiPoint included), built once.
  std::vector<std::string> names;
  for (const auto& set : profile.merged.sets) {
    for (const auto& ref : set.enabled) {
      if (std::find(names.begin(), names.end(), ref.name) == names.end())
        names.push_back(ref.name);
    }
  }
  std::map<std::string, Plugin*, std::less<>> by_name;
  for (const auto& name : names) {
    const PluginFactory* factory = registry.find(name);
    if (factory == nullptr)
      return kube::makeKubeError(fmt::format("{}: unknown plugin {:?}", where, name));
    std::shared_ptr<const PluginArgs> args;
    if (auto it = profile.args.find(name); it != profile.args.end())
      args = it->second;
    auto plugin = factory->create(args, *fw);
    if (!plugin) {
      return kube::makeKubeError(
          fmt::format("{}: plugin {}: {}", where, name, plugin.error().message));
    }
    by_name.emplace(name, plugin->get());
    fw->owned_.push_back(std::move(*plugin));
  }

  auto effective = config::expandPlugins(profile, [&](std::string_view name, ExtensionPoint p) {
    auto it = by_name.find(name);
    return it != by_name.end() && implementsPoint(it->second, p);
  });
  if (!effective)
    return kube::makeKubeError(fmt::format("{}: {}", where, effective.error().message));
  fw->effective_ = std::move(*effective);

  auto each = [&](ExtensionPoint p, auto&& add) {
    for (const auto& ref : fw->effective_[p])
      add(by_name.at(ref.name), ref);
  };
  each(ExtensionPoint::kQueueSort,
       [&](Plugin* p, const auto&) { fw->queue_sort_ = as<QueueSortPlugin>(p); });
  each(ExtensionPoint::kPreFilter,
       [&](Plugin* p, const auto&) { fw->pre_filters_.push_back(as<PreFilterPlugin>(p)); });
  each(ExtensionPoint::kFilter,
       [&](Plugin* p, const auto&) { fw->filters_.push_back(as<FilterPlugin>(p)); });
  each(ExtensionPoint::kPostFilter,
       [&](Plugin* p, const auto&) { fw->post_filters_.push_back(as<PostFilterPlugin>(p)); });
  each(ExtensionPoint::kPreScore,
       [&](Plugin* p, const auto&) { fw->pre_scores_.push_back(as<PreScorePlugin>(p)); });
  each(ExtensionPoint::kScore, [&](Plugin* p, const config::PluginRef& ref) {
    fw->scores_.push_back({as<ScorePlugin>(p), std::max<std::int64_t>(1, ref.weight)});
  });
  each(ExtensionPoint::kReserve,
       [&](Plugin* p, const auto&) { fw->reserves_.push_back(as<ReservePlugin>(p)); });
  each(ExtensionPoint::kPermit,
       [&](Plugin* p, const auto&) { fw->permits_.push_back(as<PermitPlugin>(p)); });
  each(ExtensionPoint::kPreBind,
       [&](Plugin* p, const auto&) { fw->pre_binds_.push_back(as<PreBindPlugin>(p)); });
  each(ExtensionPoint::kBind,
       [&](Plugin* p, const auto&) { fw->binds_.push_back(as<BindPlugin>(p)); });
  each(ExtensionPoint::kPostBind,
       [&](Plugin* p, const auto&) { fw->post_binds_.push_back(as<PostBindPlugin>(p)); });
  if (fw->queue_sort_ == nullptr)
    return kube::makeKubeError(fmt::format("{}: no queueSort plugin", where));
  if (fw->binds_.empty())
    return kube::makeKubeError(fmt::format("{}: no bind plugin", where));
  return fw;
}

const Snapshot& Framework::snapshot() const {
  if (snapshot_ == nullptr)
    throw std::logic_error("scheduler framework: no snapshot outside a scheduling cycle");
  return *snapshot_;
}

Status Framework::runPreFilterPlugins(CycleState& state, const PodInfo& pod) {
  for (auto* p : pre_filters_) {
    auto s = p->preFilter(state, pod);
    if (!s.ok()) {
      if (s.isUnschedulable())
        return named(std::move(s), p->name());
      return Status::error(fmt::format("running PreFilter plugin {}: {}", p->name(), s.message()))
          .withPlugin(std::string(p->name()));
    }
  }
  return Status::success();
}

Status Framework::runFilterPlugins(const CycleState& state, const PodInfo& pod,
                                   const NodeInfo& node) const {
  for (const auto* p : filters_) {
    auto s = p->filter(state, pod, node);
    if (!s.ok()) {
      if (!s.isUnschedulable()) {
        return Status::error(fmt::format("running Filter plugin {}: {}", p->name(), s.message()))
            .withPlugin(std::string(p->name()));
      }
      return named(std::move(s), p->name());
    }
  }
  return Status::success();
}

Status Framework::runFilterPluginsWithNominatedPods(const CycleState& state, const PodInfo& pod,
                                                    const NodeInfo& node) const {
  // The common case (nothing nominated here) costs one lookup and no copies.
  auto nominated = cluster_.nominatedPodsForNode(node.name());
  std::shared_ptr<NodeInfo> with_nominated;
  CycleState state_with_nominated;
  for (const auto& p : nominated) {
    if (p->priority < pod.priority || p->uid == pod.uid)
      continue;
    if (!with_nominated) {
      with_nominated = std::make_shared<NodeInfo>(node);
      state_with_nominated = state.clone();
    }
    with_nominated->addPod(p);
    auto s = runPreFilterAddPod(state_with_nominated, pod, *p, *with_nominated);
    if (!s.ok())
      return s;
  }
  if (!with_nominated)
    return runFilterPlugins(state, pod, node);
  // Upstream runs the filters twice: with the nominated pods (they must still fit beside this
  // one) and, when that passed, without them (inter-pod affinity may have been satisfied only
  // by a nominated pod that may never arrive).
  auto s = runFilterPlugins(state_with_nominated, pod, *with_nominated);
  if (!s.ok())
    return s;
  return runFilterPlugins(state, pod, node);
}

Status Framework::runPreFilterAddPod(CycleState& state, const PodInfo& pod_to_schedule,
                                     const PodInfo& pod_to_add, const NodeInfo& node) const {
  for (const auto* p : pre_filters_) {
    if (const auto* ext = p->preFilterExtensions()) {
      auto s = ext->addPod(state, pod_to_schedule, pod_to_add, node);
      if (!s.ok())
        return named(std::move(s), p->name());
    }
  }
  return Status::success();
}

Status Framework::runPreFilterRemovePod(CycleState& state, const PodInfo& pod_to_schedule,
                                        const PodInfo& pod_to_remove, const NodeInfo& node) const {
  for (const auto* p : pre_filters_) {
    if (const auto* ext = p->preFilterExtensions()) {
      auto s = ext->removePod(state, pod_to_schedule, pod_to_remove, node);
      if (!s.ok())
        return named(std::move(s), p->name());
    }
  }
  return Status::success();
}

Framework::FilterOutcome Framework::findNodesThatPassFilters(const CycleState& state,
                                                             const PodInfo& pod, std::size_t start,
                                                             std::size_t wanted) {
  FilterOutcome out;
  const auto& nodes = snapshot().nodes();
  const std::size_t n = nodes.size();
  if (n == 0)
    return out;
  if (filters_.empty()) {
    // Upstream: without filters the first `wanted` nodes from the start index all fit.
    const std::size_t take = std::min(wanted, n);
    out.feasible.reserve(take);
    for (std::size_t i = 0; i < take; ++i)
      out.feasible.push_back(nodes[(start + i) % n].get());
    out.processed = take;
    return out;
  }
  // Each node's verdict lands in its own slot; the feasible list is then read in index order so
  // that the result does not depend on thread timing (beyond where the pass stopped).
  std::vector<std::uint8_t> verdict(n, 0);  // 0 unseen, 1 fit, 2 failed, 3 error
  // Only failed nodes get a Status: a slot per node would construct and destroy thousands of
  // them every cycle when most nodes fit.
  std::vector<std::unique_ptr<Status>> statuses(n);
  std::atomic<std::size_t> found{0};
  std::atomic<bool> stop{false};
  const bool nominations = cluster_.anyNominatedPods();
  parallelizer_.parallelFor(
      n,
      [&](std::size_t i) {
        if (stop.load(std::memory_order_relaxed))
          return;
        // Filters are memory-bound: each node's NodeInfo and Node are scattered on the heap.
        // Workers take contiguous index chunks, so fetching a few nodes ahead hides most of the
        // latency (the Node one step later, once its NodeInfo has arrived).
        prefetchNode(nodes, (start + i + kPrefetchDistance) % n,
                     (start + i + kPrefetchDistance / 2) % n);
        const NodeInfo& node = *nodes[(start + i) % n];
        auto s = nominations ? runFilterPluginsWithNominatedPods(state, pod, node)
                             : runFilterPlugins(state, pod, node);
        if (s.ok()) {
          verdict[i] = 1;
          if (found.fetch_add(1, std::memory_order_relaxed) + 1 >= wanted)
            stop.store(true, std::memory_order_relaxed);
        } else {
          verdict[i] = s.isUnschedulable() ? 2 : 3;
          if (verdict[i] == 3)
            stop.store(true, std::memory_order_relaxed);
          statuses[i] = std::make_unique<Status>(std::move(s));
        }
      },
      &stop);
  for (std::size_t i = 0; i < n; ++i) {
    if (verdict[i] == 0)
      continue;
    ++out.processed;
    const NodeInfo* node = nodes[(start + i) % n].get();
    if (verdict[i] == 1) {
      if (out.feasible.size() < wanted)
        out.feasible.push_back(node);
    } else if (verdict[i] == 3) {
      out.error = std::move(*statuses[i]);
      return out;
    } else {
      out.failed.emplace(node->name(), std::move(*statuses[i]));
    }
  }
  return out;
}

Status Framework::runPostFilterPlugins(CycleState& state, const PodInfo& pod,
                                       const NodeStatusMap& failed, PostFilterResult& result) {
  Status last = Status::unschedulable("no PostFilter plugin made the pod schedulable");
  for (auto* p : post_filters_) {
    auto s = p->postFilter(state, pod, failed, result);
    if (s.ok())
      return s;
    if (!s.isUnschedulable())
      return named(std::move(s), p->name());
    last = named(std::move(s), p->name());
  }
  return last;
}

Status Framework::runPreScorePlugins(CycleState& state, const PodInfo& pod,
                                     const std::vector<const NodeInfo*>& nodes) {
  for (auto* p : pre_scores_) {
    auto s = p->preScore(state, pod, nodes);
    if (!s.ok()) {
      return Status::error(fmt::format("running PreScore plugin {}: {}", p->name(), s.message()))
          .withPlugin(std::string(p->name()));
    }
  }
  return Status::success();
}

kube::Expected<std::vector<NodeScore>> Framework::runScorePlugins(
    const CycleState& state, const PodInfo& pod, const std::vector<const NodeInfo*>& nodes) {
  std::vector<NodeScore> total(nodes.size());
  for (std::size_t i = 0; i < nodes.size(); ++i)
    total[i] = {nodes[i]->name(), scores_.empty() ? 1 : 0};
  if (scores_.empty() || nodes.empty())
    return total;
  // scores[p][i]: plugin p on node i. Nodes in parallel, every plugin per node: one pass over
  // the nodes' memory instead of one per plugin.
  std::vector<std::vector<NodeScore>> scores(scores_.size(), std::vector<NodeScore>(nodes.size()));
  std::mutex error_mu;
  std::string error;
  parallelizer_.parallelFor(nodes.size(), [&](std::size_t i) {
    if (i + kPrefetchDistance < nodes.size())
      __builtin_prefetch(nodes[i + kPrefetchDistance]);
    if (i + kPrefetchDistance / 2 < nodes.size())
      __builtin_prefetch(nodes[i + kPrefetchDistance / 2]->node.get());
    for (std::size_t p = 0; p < scores_.size(); ++p) {
      std::int64_t s = 0;
      auto st = scores_[p].plugin->score(state, pod, *nodes[i], s);
      if (!st.ok()) {
        std::lock_guard lock(error_mu);
        if (error.empty()) {
          error = fmt::format("running Score plugin {} on node {}: {}", scores_[p].plugin->name(),
                              nodes[i]->name(), st.message());
        }
      }
      scores[p][i] = {nodes[i]->name(), s};
    }
  });
  if (!error.empty())
    return kube::makeKubeError(error);
  for (std::size_t p = 0; p < scores_.size(); ++p) {
    const auto* plugin = scores_[p].plugin;
    if (plugin->hasNormalizeScore()) {
      auto st = plugin->normalizeScore(state, pod, scores[p]);
      if (!st.ok()) {
        return kube::makeKubeError(
            fmt::format("running NormalizeScore of {}: {}", plugin->name(), st.message()));
      }
    }
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      const auto s = scores[p][i].score;
      if (s < kMinNodeScore || s > kMaxNodeScore) {
        return kube::makeKubeError(
            fmt::format("plugin {} returned an invalid score {} for node {}: must be in [{}, {}]",
                        plugin->name(), s, nodes[i]->name(), kMinNodeScore, kMaxNodeScore));
      }
      total[i].score += s * scores_[p].weight;
    }
  }
  return total;
}

Status Framework::runReservePlugins(CycleState& state, const PodInfo& pod,
                                    const std::string& node) {
  for (auto* p : reserves_) {
    auto s = p->reserve(state, pod, node);
    if (!s.ok()) {
      return Status::error(fmt::format("running Reserve plugin {}: {}", p->name(), s.message()))
          .withPlugin(std::string(p->name()));
    }
  }
  return Status::success();
}

void Framework::runUnreservePlugins(CycleState& state, const PodInfo& pod,
                                    const std::string& node) {
  for (auto it = reserves_.rbegin(); it != reserves_.rend(); ++it)
    (*it)->unreserve(state, pod, node);
}

PermitResult Framework::runPermitPlugins(CycleState& state, const PodInfo& pod,
                                         const std::string& node) {
  PermitResult out;
  bool waiting = false;
  for (auto* p : permits_) {
    auto r = p->permit(state, pod, node);
    if (r.status.ok())
      continue;
    if (r.status.code() == Code::kWait) {
      waiting = true;
      out.timeout = std::max(out.timeout, r.timeout);
      continue;
    }
    if (r.status.isUnschedulable()) {
      out.status = named(std::move(r.status), p->name());
      return out;
    }
    out.status =
        Status::error(fmt::format("running Permit plugin {}: {}", p->name(), r.status.message()))
            .withPlugin(std::string(p->name()));
    return out;
  }
  if (waiting)
    out.status = Status(Code::kWait, "waiting on permit");
  return out;
}

void Framework::runPreBindAndBind(std::shared_ptr<CycleState> state,
                                  std::shared_ptr<const PodInfo> pod, std::string node,
                                  StatusCallback done) {
  runPreBind(0, std::move(state), std::move(pod), std::move(node), std::move(done));
}

void Framework::runPreBind(std::size_t i, std::shared_ptr<CycleState> state,
                           std::shared_ptr<const PodInfo> pod, std::string node,
                           StatusCallback done) {
  if (i == pre_binds_.size()) {
    runBind(0, std::move(state), std::move(pod), std::move(node), std::move(done));
    return;
  }
  auto* plugin = pre_binds_[i];
  auto st = state;
  auto pd = pod;
  plugin->preBind(
      st, pd, node,
      [this, i, plugin, state = std::move(state), pod = std::move(pod), node,
       done = std::move(done)](Status s) mutable {
        if (!s.ok()) {
          done(Status::error(
                   fmt::format("running PreBind plugin {}: {}", plugin->name(), s.message()))
                   .withPlugin(std::string(plugin->name())));
          return;
        }
        runPreBind(i + 1, std::move(state), std::move(pod), std::move(node), std::move(done));
      });
}

void Framework::runBind(std::size_t i, std::shared_ptr<CycleState> state,
                        std::shared_ptr<const PodInfo> pod, std::string node, StatusCallback done) {
  if (i == binds_.size()) {
    done(Status::error("no bind plugin bound the pod"));
    return;
  }
  auto* plugin = binds_[i];
  auto st = state;
  auto pd = pod;
  plugin->bind(st, pd, node,
               [this, i, plugin, state = std::move(state), pod = std::move(pod), node,
                done = std::move(done)](Status s) mutable {
                 if (s.code() == Code::kSkip) {
                   runBind(i + 1, std::move(state), std::move(pod), std::move(node),
                           std::move(done));
                   return;
                 }
                 done(named(std::move(s), plugin->name()));
               });
}

void Framework::runPostBindPlugins(CycleState& state, const PodInfo& pod, const std::string& node) {
  for (auto* p : post_binds_)
    p->postBind(state, pod, node);
}

}  // namespace koord::roles::scheduler
