#include "runtime/framework.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <stdexcept>

#include <fmt/format.h>

#include "extender/extender.h"
#include "framework/pod_changes.h"
#include "framework/reservation_nomination.h"
#include "koord/apis/extension.h"
#include "runtime/parallelizer.h"

namespace koord::roles::scheduler {

using config::ExtensionPoint;

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

std::int64_t nowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch())
      .count();
}

double secondsSinceNs(std::int64_t start_ns) {
  return static_cast<double>(nowNs() - start_ns) / 1e9;
}

// i mod n without a division per node (i is at most a few n here).
std::size_t wrap(std::size_t i, std::size_t n) {
  while (i >= n)
    i -= n;
  return i;
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
      return as<PreEnqueuePlugin>(p) != nullptr;
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

// One plugin's calls in a sampled cycle: their time, by status code.
struct PluginTime {
  std::int64_t ns = 0;
  std::uint64_t calls = 0;
};
using CallCodes = std::array<std::uint32_t, kStatusCodeCount>;

// Shares a block's time among its calls: `slots` holds one PluginTime per status code.
void addBlockTime(PluginTime* slots, const CallCodes& codes, Clock::duration elapsed) {
  std::uint64_t calls = 0;
  for (std::uint32_t c : codes)
    calls += c;
  if (calls == 0)
    return;
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(elapsed).count();
  for (std::size_t c = 0; c < codes.size(); ++c) {
    if (codes[c] == 0)
      continue;
    slots[c].ns += ns * static_cast<std::int64_t>(codes[c]) / static_cast<std::int64_t>(calls);
    slots[c].calls += codes[c];
  }
}

// Adds a chunk's plugin times into the pass's (under the caller's lock).
void addTimes(std::vector<PluginTime>& into, const std::vector<PluginTime>& from) {
  for (std::size_t t = 0; t < from.size(); ++t) {
    into[t].ns += from[t].ns;
    into[t].calls += from[t].calls;
  }
}

// A pass's plugin times, kStatusCodeCount slots per plugin of the pass: `plugin_of(i)` is the
// framework's index of the pass's i-th plugin.
template <typename PluginOf>
void observeTimes(FrameworkMetrics& metrics, MetricPoint point,
                  const std::vector<PluginTime>& times, PluginOf&& plugin_of) {
  for (std::size_t t = 0; t < times.size(); ++t) {
    if (times[t].calls > 0) {
      metrics.observePlugin(plugin_of(t / kStatusCodeCount), point,
                            static_cast<Code>(t % kStatusCodeCount),
                            static_cast<double>(times[t].ns) / 1e9, times[t].calls);
    }
  }
}

// The status label of what an extension point or a plugin call returned.
Code codeOf(const Status& s) {
  return s.code();
}
Code codeOf(const PermitResult& r) {
  return r.status.code();
}
Code codeOf(const Framework::FilterOutcome& out) {
  return out.error.ok() ? Code::kSuccess : Code::kError;
}
Code codeOf(const kube::Expected<std::vector<NodeScore>>& scores) {
  return scores ? Code::kSuccess : Code::kError;
}

// A Filter plugin's failing status as the framework reports it: unschedulable ones named after
// the plugin, anything else an error.
Status filterFailure(const FilterPlugin& p, Status s) {
  if (!s.isUnschedulable()) {
    return Status::error(fmt::format("running Filter plugin {}: {}", p.name(), s.message()))
        .withPlugin(std::string(p.name()));
  }
  return named(std::move(s), p.name());
}

}  // namespace

Framework::~Framework() = default;

kube::Expected<std::unique_ptr<Framework>> Framework::create(const config::Profile& profile,
                                                             const PluginRegistry& registry,
                                                             const ClusterView& cluster,
                                                             Parallelizer& parallelizer,
                                                             metrics::Registry* metrics) {
  std::unique_ptr<Framework> fw(new Framework(cluster, parallelizer));
  fw->metrics_ = metrics;
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
  // The CycleState's skip sets hold a bit per plugin of the profile.
  if (names.size() > sizeof(PluginBits) * 8) {
    return kube::makeKubeError(fmt::format("{}: {} plugins, at most {} per profile", where,
                                           names.size(), sizeof(PluginBits) * 8));
  }
  std::map<std::string, Plugin*, std::less<>> by_name;
  std::map<Plugin*, PluginBits> bits;
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
    bits.emplace(plugin->get(), PluginBits{1} << fw->owned_.size());
    if (auto* provider = dynamic_cast<NUMATopologyHintProvider*>(plugin->get()))
      fw->numa_hint_providers_.push_back(provider);
    fw->owned_.push_back(std::move(*plugin));
  }

  if (metrics != nullptr) {
    std::vector<std::string> plugin_names;
    for (const auto& p : fw->owned_)
      plugin_names.emplace_back(p->name());
    fw->fw_metrics_ = std::make_unique<FrameworkMetrics>(*metrics, profile.scheduler_name,
                                                         std::move(plugin_names));
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
  each(ExtensionPoint::kPreEnqueue,
       [&](Plugin* p, const auto&) { fw->pre_enqueues_.push_back(as<PreEnqueuePlugin>(p)); });
  each(ExtensionPoint::kPreFilter, [&](Plugin* p, const auto&) {
    fw->pre_filters_.push_back({as<PreFilterPlugin>(p), bits.at(p)});
    if (auto* t = dynamic_cast<PreFilterTransformer*>(p))
      fw->transformers_.push_back(t);
  });
  each(ExtensionPoint::kFilter, [&](Plugin* p, const auto&) {
    fw->filters_.push_back({as<FilterPlugin>(p), bits.at(p)});
  });
  each(ExtensionPoint::kPostFilter,
       [&](Plugin* p, const auto&) { fw->post_filters_.push_back(as<PostFilterPlugin>(p)); });
  each(ExtensionPoint::kPreScore, [&](Plugin* p, const auto&) {
    fw->pre_scores_.push_back({as<PreScorePlugin>(p), bits.at(p)});
  });
  each(ExtensionPoint::kScore, [&](Plugin* p, const config::PluginRef& ref) {
    auto* score = as<ScorePlugin>(p);
    fw->scores_.push_back(
        {score, std::max<std::int64_t>(1, ref.weight), bits.at(p), score->hasNormalizeScore()});
  });
  each(ExtensionPoint::kReserve, [&](Plugin* p, const auto&) {
    fw->reserves_.push_back(as<ReservePlugin>(p));
    if (auto* n = dynamic_cast<ReservationNominator*>(p))
      fw->nominators_.push_back(n);
  });
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

void Framework::setPluginMetricsSamplePercent(int percent) {
  if (fw_metrics_)
    fw_metrics_->setSamplePercent(percent);
}

std::size_t Framework::indexOf(const Plugin* plugin) const {
  for (std::size_t i = 0; i < owned_.size(); ++i) {
    if (owned_[i].get() == plugin)
      return i;
  }
  return owned_.size();
}

template <typename Fn>
auto Framework::timed(const CycleState& state, const Plugin* plugin, MetricPoint point,
                      Fn&& fn) const {
  if (!state.record_plugin_metrics)
    return fn();
  const auto start = Clock::now();
  auto result = fn();
  fw_metrics_->observePlugin(indexOf(plugin), point, codeOf(result), secondsSince(start));
  return result;
}

template <typename Fn>
auto Framework::timedPoint(MetricPoint point, Fn&& fn) const {
  if (!fw_metrics_)
    return fn();
  const auto start = Clock::now();
  auto result = fn();
  fw_metrics_->observePoint(point, codeOf(result), secondsSince(start));
  return result;
}

const Snapshot& Framework::snapshot() const {
  if (snapshot_ == nullptr)
    throw std::logic_error("scheduler framework: no snapshot outside a scheduling cycle");
  return *snapshot_;
}

Status Framework::runPreEnqueuePlugins(const PodInfo& pod) const {
  for (const PreEnqueuePlugin* p : pre_enqueues_) {
    auto s = p->preEnqueue(pod);
    if (!s.ok())
      return named(std::move(s), p->name());
  }
  return Status::success();
}

Status Framework::runPreFilterPlugins(CycleState& state, const PodInfo& pod) {
  // The cycle starts here: whether it is sampled is decided once, for every later point.
  state.record_plugin_metrics = fw_metrics_ != nullptr && fw_metrics_->sampleCycle();
  return timedPoint(MetricPoint::kPreFilter, [&] { return preFilter(state, pod); });
}

Status Framework::preFilter(CycleState& state, const PodInfo& pod) {
  // Upstream (1.27+) starts each cycle's skip set afresh.
  state.skip_filter_plugins = 0;
  for (const auto& [p, bit] : filters_) {
    if (p->passesEveryNode(pod))
      state.skip_filter_plugins |= bit;
  }
  for (const auto& [p, bit] : pre_filters_) {
    auto s = timed(state, p, MetricPoint::kPreFilter, [&] { return p->preFilter(state, pod); });
    if (s.isSkip()) {
      state.skip_filter_plugins |= bit;
      continue;
    }
    if (!s.ok()) {
      if (s.isUnschedulable())
        return named(std::move(s), p->name());
      return Status::error(fmt::format("running PreFilter plugin {}: {}", p->name(), s.message()))
          .withPlugin(std::string(p->name()));
    }
  }
  return Status::success();
}

Status Framework::runPreFilterTransformers(
    CycleState& state, const PodInfo& pod, const Snapshot& snapshot,
    std::vector<std::shared_ptr<const NodeInfo>>& replacements) {
  for (auto* t : transformers_) {
    auto s = t->beforePreFilter(state, pod, snapshot, replacements);
    if (s.ok())
      continue;
    if (s.isUnschedulable())
      return named(std::move(s), t->name());
    return Status::error(fmt::format("running BeforePreFilter of {}: {}", t->name(), s.message()))
        .withPlugin(std::string(t->name()));
  }
  return Status::success();
}

Status Framework::runFilterPlugins(const CycleState& state, const PodInfo& pod,
                                   const NodeInfo& node) const {
  const PluginBits skip = state.skip_filter_plugins;
  for (const auto& [p, bit] : filters_) {
    if ((skip & bit) != 0)
      continue;
    auto s = p->filter(state, pod, node);
    if (!s.ok())
      return filterFailure(*p, std::move(s));
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
  for (const auto& [p, bit] : pre_filters_) {
    if ((state.skip_filter_plugins & bit) != 0)
      continue;
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
  for (const auto& [p, bit] : pre_filters_) {
    if ((state.skip_filter_plugins & bit) != 0)
      continue;
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
  return timedPoint(MetricPoint::kFilter, [&] { return filterNodes(state, pod, start, wanted); });
}

Framework::FilterOutcome Framework::filterNodes(const CycleState& state, const PodInfo& pod,
                                                std::size_t start, std::size_t wanted) {
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
  // Each node's verdict lands in its own slot; the feasible list is then read in index order.
  // Once enough nodes fit, no new work starts above the highest index finished so far, but
  // work below it does (a worker that fell behind in an earlier chunk completes it): every
  // node before the wanted-th fit is then looked at, and the result does not depend on thread
  // timing. A pass usually stops after a tenth of the nodes, so only the slots below that index
  // are read back (and cleared for the next pass).
  if (verdicts_.size() < n)
    verdicts_.resize(n, 0);
  std::uint8_t* verdict = verdicts_.data();  // 1 fit, 2 failed, 3 error
  struct Failure {
    std::size_t index;
    Status status;
  };
  std::vector<Failure> failures;  // only failed nodes get a Status
  std::mutex failures_mu;
  // A sampled cycle times each plugin over a block of nodes; the block's calls share its time.
  const bool timing = state.record_plugin_metrics;
  const std::size_t timing_slots = timing ? filters_.size() * kStatusCodeCount : 0;
  std::vector<PluginTime> plugin_time(timing_slots);  // under failures_mu
  std::atomic<std::size_t> reached{0};  // the highest end of a finished stretch of nodes
  std::atomic<std::size_t> found{0};
  std::atomic<bool> stop{false};
  // A stretch is marked finished before its fits are counted, and the count that reaches
  // `wanted` (acquire-release) is what sets the stop: a thread that sees the stop therefore
  // sees every counted fit below `reached`.
  auto finished = [&](std::size_t upto, std::size_t fits, bool error) {
    std::size_t seen = reached.load(std::memory_order_relaxed);
    while (seen < upto && !reached.compare_exchange_weak(seen, upto, std::memory_order_relaxed)) {
    }
    if (error || (fits > 0 && found.fetch_add(fits, std::memory_order_acq_rel) + fits >= wanted))
      stop.store(true, std::memory_order_release);
  };
  auto halted = [&](std::size_t i) {
    return stop.load(std::memory_order_acquire) && i >= reached.load(std::memory_order_relaxed);
  };
  const bool nominations = cluster_.anyNominatedPods();
  const PluginBits skip = state.skip_filter_plugins;
  parallelizer_.forChunks(
      n,
      [&](std::size_t begin, std::size_t end) {
        std::vector<Failure> local;
        std::vector<PluginTime> local_time(timing_slots);
        std::size_t i = begin;
        if (nominations) {
          // Rare (a preemption is pending somewhere): node by node, as upstream's helper.
          for (; i < end && !halted(i); ++i) {
            auto s = runFilterPluginsWithNominatedPods(state, pod, *nodes[wrap(start + i, n)]);
            verdict[i] = s.ok() ? 1 : s.isUnschedulable() ? 2 : 3;
            const bool error = verdict[i] == 3;
            if (!s.ok())
              local.push_back({i, std::move(s)});
            finished(i + 1, verdict[i] == 1 ? 1 : 0, error);
          }
        }
        // Blocks of a few nodes, each Filter plugin over the block in turn (a node leaving at
        // its first failure, as in runFilterPlugins): one call target at a time, the plugin's
        // constants in registers, and the found count published once per block. A block
        // started before the stop finishes, so a pass may look at a few more nodes than needed.
        // (Software prefetching of the NodeInfos and Nodes ahead measured slower here.)
        constexpr std::size_t kBlock = 8;
        const NodeInfo* block[kBlock];
        bool alive[kBlock];
        while (i < end && !halted(i)) {
          const std::size_t count = std::min(kBlock, end - i);
          for (std::size_t k = 0; k < count; ++k) {
            block[k] = nodes[wrap(start + i + k, n)].get();
            alive[k] = true;
          }
          bool error = false;
          // One clock read per plugin and block: each plugin's stretch ends where the next
          // one's starts.
          auto block_start = timing ? Clock::now() : Clock::time_point{};
          for (std::size_t f = 0; f < filters_.size(); ++f) {
            const auto& [p, bit] = filters_[f];
            if ((skip & bit) != 0)
              continue;
            CallCodes codes{};
            for (std::size_t k = 0; k < count; ++k) {
              if (!alive[k])
                continue;
              auto s = p->filter(state, pod, *block[k]);
              if (timing)
                ++codes[static_cast<std::size_t>(s.code())];
              if (s.ok())
                continue;
              alive[k] = false;
              s = filterFailure(*p, std::move(s));
              verdict[i + k] = s.isUnschedulable() ? 2 : 3;
              error = error || verdict[i + k] == 3;
              local.push_back({i + k, std::move(s)});
            }
            if (timing) {
              const auto block_end = Clock::now();
              addBlockTime(&local_time[f * kStatusCodeCount], codes, block_end - block_start);
              block_start = block_end;
            }
          }
          std::size_t fits = 0;
          for (std::size_t k = 0; k < count; ++k) {
            if (alive[k]) {
              verdict[i + k] = 1;
              ++fits;
            }
          }
          i += count;
          finished(i, fits, error);
        }
        if (!local.empty() || timing) {
          std::lock_guard lock(failures_mu);
          for (auto& f : local)
            failures.push_back(std::move(f));
          addTimes(plugin_time, local_time);
        }
      },
      &stop);
  if (timing) {
    observeTimes(*fw_metrics_, MetricPoint::kFilter, plugin_time,
                 [&](std::size_t f) { return indexOf(filters_[f].plugin); });
  }
  const std::size_t hi = reached.load();
  std::sort(failures.begin(), failures.end(),
            [](const Failure& a, const Failure& b) { return a.index < b.index; });
  auto next_failure = failures.begin();
  out.feasible.reserve(std::min(wanted, hi));
  // Counting stops at the wanted-th fitting node (or the first error): nodes looked at beyond
  // it, by the rest of a block or by a worker further on, are not used and the next pass
  // starts at them again (upstream likewise counts only the fits it keeps).
  bool done = false;
  for (std::size_t i = 0; i < hi; ++i) {
    const std::uint8_t v = verdict[i];
    verdict[i] = 0;
    if (v == 0 || done)
      continue;
    ++out.processed;
    const NodeInfo* node = nodes[wrap(start + i, n)].get();
    if (v == 1) {
      out.feasible.push_back(node);
      done = out.feasible.size() == wanted;
      continue;
    }
    // failures holds exactly the indices with verdict 2 or 3, in order.
    Status& s = next_failure->status;
    ++next_failure;
    if (v == 3) {
      out.error = std::move(s);
      done = true;
    } else {
      out.failed.emplace(node->name(), std::move(s));
    }
  }
  return out;
}

Status Framework::runPostFilterPlugins(CycleState& state, const PodInfo& pod,
                                       const NodeStatusMap& failed, PostFilterResult& result) {
  return timedPoint(MetricPoint::kPostFilter,
                    [&] { return postFilter(state, pod, failed, result); });
}

Status Framework::postFilter(CycleState& state, const PodInfo& pod, const NodeStatusMap& failed,
                             PostFilterResult& result) {
  Status last = Status::unschedulable("no PostFilter plugin made the pod schedulable");
  for (auto* p : post_filters_) {
    auto s = timed(state, p, MetricPoint::kPostFilter,
                   [&] { return p->postFilter(state, pod, failed, result); });
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
  return timedPoint(MetricPoint::kPreScore, [&] { return preScore(state, pod, nodes); });
}

Status Framework::preScore(CycleState& state, const PodInfo& pod,
                           const std::vector<const NodeInfo*>& nodes) {
  state.skip_score_plugins = 0;
  for (const auto& w : scores_) {
    if (w.plugin->scoresEveryNodeAlike(pod))
      state.skip_score_plugins |= w.bit;
  }
  for (const auto& [p, bit] : pre_scores_) {
    auto s =
        timed(state, p, MetricPoint::kPreScore, [&] { return p->preScore(state, pod, nodes); });
    if (s.isSkip()) {
      state.skip_score_plugins |= bit;
      continue;
    }
    if (!s.ok()) {
      return Status::error(fmt::format("running PreScore plugin {}: {}", p->name(), s.message()))
          .withPlugin(std::string(p->name()));
    }
  }
  return Status::success();
}

kube::Expected<std::vector<NodeScore>> Framework::runScorePlugins(
    const CycleState& state, const PodInfo& pod, const std::vector<const NodeInfo*>& nodes) {
  return timedPoint(MetricPoint::kScore, [&] { return score(state, pod, nodes); });
}

kube::Expected<std::vector<NodeScore>> Framework::score(const CycleState& state, const PodInfo& pod,
                                                        const std::vector<const NodeInfo*>& nodes) {
  const std::size_t n = nodes.size();
  std::vector<NodeScore> total(n);
  for (std::size_t i = 0; i < n; ++i) {
    const NodeInfo& node = *nodes[i];
    total[i] = {node.node ? std::string_view(node.node->name) : std::string_view(),
                scores_.empty() ? 1 : 0};
  }
  if (scores_.empty() || n == 0)
    return total;
  // Plugins whose PreScore answered Skip are left out (their contribution with it).
  active_scores_.clear();
  std::size_t columns = 0;
  for (const auto& w : scores_) {
    if ((state.skip_score_plugins & w.bit) != 0)
      continue;
    active_scores_.push_back(w);
    if (w.normalizes)
      ++columns;
  }
  if (active_scores_.empty())
    return total;
  // Only plugins with NormalizeScore need every node's raw score before they can add to the
  // total: one column each. The others are checked and summed on the node as they come.
  if (score_columns_.size() < columns)
    score_columns_.resize(columns);
  for (std::size_t c = 0; c < columns; ++c)
    score_columns_[c].resize(n);
  const auto& active = active_scores_;
  const bool timing = state.record_plugin_metrics;
  const std::size_t timing_slots = timing ? active.size() * kStatusCodeCount : 0;
  std::vector<PluginTime> plugin_time(timing_slots);  // under error_mu

  std::mutex error_mu;
  std::string error;
  // The first (plugin, node) out of [0, 100] among the plugins without NormalizeScore, in
  // plugin order then node order (as the check after normalising reports it).
  std::size_t bad_plugin = active.size();
  std::size_t bad_node = 0;
  std::int64_t bad_score = 0;
  auto failed = [&](std::size_t p, std::size_t i, const Status& st) {
    std::lock_guard lock(error_mu);
    if (error.empty()) {
      error = fmt::format("running Score plugin {} on node {}: {}", active[p].plugin->name(),
                          nodes[i]->name(), st.message());
    }
  };
  auto outOfRange = [&](std::size_t p, std::size_t i, std::int64_t s) {
    std::lock_guard lock(error_mu);
    if (p < bad_plugin || (p == bad_plugin && i < bad_node)) {
      bad_plugin = p;
      bad_node = i;
      bad_score = s;
    }
  };
  // A chunk's nodes are few enough to stay in cache while every plugin goes over them in turn:
  // each plugin then runs as a tight loop (one call target, its constants in registers)
  // instead of the plugins taking turns on every node.
  parallelizer_.forChunks(n, [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i)
      total[i].score = 0;
    std::vector<PluginTime> local_time(timing_slots);
    std::size_t column = 0;
    auto chunk_start = timing ? Clock::now() : Clock::time_point{};
    for (std::size_t p = 0; p < active.size(); ++p) {
      const ScorePlugin* plugin = active[p].plugin;
      std::uint32_t errors = 0;
      if (active[p].normalizes) {
        NodeScore* out = score_columns_[column++].data();
        for (std::size_t i = begin; i < end; ++i) {
          std::int64_t s = 0;
          if (auto st = plugin->score(state, pod, *nodes[i], s); !st.ok()) {
            failed(p, i, st);
            ++errors;
          }
          out[i] = {total[i].name, s};
        }
      } else {
        const std::int64_t weight = active[p].weight;
        for (std::size_t i = begin; i < end; ++i) {
          std::int64_t s = 0;
          if (auto st = plugin->score(state, pod, *nodes[i], s); !st.ok()) {
            failed(p, i, st);
            ++errors;
          }
          if (s < kMinNodeScore || s > kMaxNodeScore)
            outOfRange(p, i, s);
          else
            total[i].score += s * weight;
        }
      }
      if (timing) {
        CallCodes codes{};
        codes[static_cast<std::size_t>(Code::kSuccess)] =
            static_cast<std::uint32_t>(end - begin) - errors;
        codes[static_cast<std::size_t>(Code::kError)] = errors;
        const auto chunk_end = Clock::now();
        addBlockTime(&local_time[p * kStatusCodeCount], codes, chunk_end - chunk_start);
        chunk_start = chunk_end;
      }
    }
    if (timing) {
      std::lock_guard lock(error_mu);
      addTimes(plugin_time, local_time);
    }
  });
  if (timing) {
    observeTimes(*fw_metrics_, MetricPoint::kScore, plugin_time,
                 [&](std::size_t p) { return indexOf(active[p].plugin); });
  }
  if (!error.empty())
    return kube::makeKubeError(error);
  auto invalid = [&](const ScorePlugin* plugin, std::int64_t s, std::size_t i) {
    return kube::makeKubeError(
        fmt::format("plugin {} returned an invalid score {} for node {}: must be in [{}, {}]",
                    plugin->name(), s, nodes[i]->name(), kMinNodeScore, kMaxNodeScore));
  };
  std::size_t column = 0;
  for (std::size_t p = 0; p < active.size(); ++p) {
    const auto* plugin = active[p].plugin;
    if (!active[p].normalizes) {
      if (p == bad_plugin)
        return invalid(plugin, bad_score, bad_node);
      continue;
    }
    auto& scores = score_columns_[column++];
    auto st = timed(state, plugin, MetricPoint::kScoreExtensionNormalize,
                    [&] { return plugin->normalizeScore(state, pod, scores); });
    if (!st.ok()) {
      return kube::makeKubeError(
          fmt::format("running NormalizeScore of {}: {}", plugin->name(), st.message()));
    }
    for (std::size_t i = 0; i < n; ++i) {
      const auto s = scores[i].score;
      if (s < kMinNodeScore || s > kMaxNodeScore)
        return invalid(plugin, s, i);
      total[i].score += s * active[p].weight;
    }
  }
  return total;
}

Status Framework::runReservePlugins(CycleState& state, const PodInfo& pod,
                                    const std::string& node) {
  return timedPoint(MetricPoint::kReserve, [&] { return reserve(state, pod, node); });
}

Status Framework::reserve(CycleState& state, const PodInfo& pod, const std::string& node) {
  // Every Reserve plugin reads the same nominated reservation, whatever their order.
  for (auto* n : nominators_)
    n->nominateReservation(state, pod, node);
  for (auto* p : reserves_) {
    auto s = timed(state, p, MetricPoint::kReserve, [&] { return p->reserve(state, pod, node); });
    if (!s.ok()) {
      return Status::error(fmt::format("running Reserve plugin {}: {}", p->name(), s.message()))
          .withPlugin(std::string(p->name()));
    }
  }
  return Status::success();
}

void Framework::runUnreservePlugins(CycleState& state, const PodInfo& pod,
                                    const std::string& node) {
  const auto start = fw_metrics_ ? Clock::now() : Clock::time_point{};
  for (auto it = reserves_.rbegin(); it != reserves_.rend(); ++it) {
    timed(state, *it, MetricPoint::kUnreserve, [&] {
      (*it)->unreserve(state, pod, node);
      return Status::success();
    });
  }
  if (fw_metrics_)
    fw_metrics_->observePoint(MetricPoint::kUnreserve, Code::kSuccess, secondsSince(start));
}

Status Framework::runPermitPlugins(CycleState& state, const PodInfo& pod, const std::string& node,
                                   std::vector<PluginWait>& waits) {
  return timedPoint(MetricPoint::kPermit, [&] { return permit(state, pod, node, waits); });
}

Status Framework::permit(CycleState& state, const PodInfo& pod, const std::string& node,
                         std::vector<PluginWait>& waits) {
  waits.clear();
  for (auto* p : permits_) {
    auto r = timed(state, p, MetricPoint::kPermit, [&] { return p->permit(state, pod, node); });
    if (r.status.ok())
      continue;
    if (r.status.code() == Code::kWait) {
      waits.push_back({std::string(p->name()), r.timeout});
      continue;
    }
    if (r.status.isUnschedulable())
      return named(std::move(r.status), p->name());
    return Status::error(fmt::format("running Permit plugin {}: {}", p->name(), r.status.message()))
        .withPlugin(std::string(p->name()));
  }
  if (!waits.empty())
    return Status(Code::kWait, "waiting on permit");
  return Status::success();
}

void Framework::runPreBindAndBind(std::shared_ptr<CycleState> state,
                                  std::shared_ptr<const PodInfo> pod, std::string node,
                                  StatusCallback done) {
  if (fw_metrics_)
    state->pre_bind_start_ns = nowNs();
  runPreBind(0, std::move(state), std::move(pod), std::move(node), std::move(done));
}

void Framework::runPreBind(std::size_t i, std::shared_ptr<CycleState> state,
                           std::shared_ptr<const PodInfo> pod, std::string node,
                           StatusCallback done) {
  if (i == pre_binds_.size()) {
    // Changes no DefaultPreBind sent (a profile that does not list it) still go out before the
    // binding: the cache already counts the pod by them.
    auto st = state;
    auto pd = pod;
    applyPodChanges(
        cluster_, st, pd,
        [this, state = std::move(state), pod = std::move(pod), node = std::move(node),
         done = std::move(done)](Status s) mutable {
          if (fw_metrics_) {
            fw_metrics_->observePoint(MetricPoint::kPreBind, s.ok() ? Code::kSuccess : Code::kError,
                                      secondsSinceNs(state->pre_bind_start_ns));
          }
          if (!s.ok()) {
            done(Status::error(fmt::format("patching the pod: {}", s.message())));
            return;
          }
          runBind(0, std::move(state), std::move(pod), std::move(node), std::move(done));
        });
    return;
  }
  auto* plugin = pre_binds_[i];
  auto st = state;
  auto pd = pod;
  const std::int64_t plugin_start = state->record_plugin_metrics ? nowNs() : 0;
  plugin->preBind(
      st, pd, node,
      [this, i, plugin, plugin_start, state = std::move(state), pod = std::move(pod), node,
       done = std::move(done)](Status s) mutable {
        if (state->record_plugin_metrics) {
          fw_metrics_->observePlugin(indexOf(plugin), MetricPoint::kPreBind, s.code(),
                                     secondsSinceNs(plugin_start));
        }
        if (!s.ok() && fw_metrics_) {
          fw_metrics_->observePoint(MetricPoint::kPreBind, s.code(),
                                    secondsSinceNs(state->pre_bind_start_ns));
        }
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
  // kube-scheduler's extendersBinding: an interested binder extender takes the pod instead of
  // the Bind plugins. A Reservation's stand-in has no pod to bind; its binding is its status.
  if (i == 0 && fw_metrics_)
    state->bind_start_ns = nowNs();
  if (i == 0 && extenders_ != nullptr && !pod->reserve_pod && extenders_->bindsPod(*pod)) {
    bindByExtender(std::move(state), std::move(pod), std::move(node), std::move(done));
    return;
  }
  if (i == binds_.size()) {
    if (fw_metrics_) {
      fw_metrics_->observePoint(MetricPoint::kBind, Code::kError,
                                secondsSinceNs(state->bind_start_ns));
    }
    done(Status::error("no bind plugin bound the pod"));
    return;
  }
  auto* plugin = binds_[i];
  auto st = state;
  auto pd = pod;
  const std::int64_t plugin_start = state->record_plugin_metrics ? nowNs() : 0;
  plugin->bind(st, pd, node,
               [this, i, plugin, plugin_start, state = std::move(state), pod = std::move(pod), node,
                done = std::move(done)](Status s) mutable {
                 if (state->record_plugin_metrics) {
                   fw_metrics_->observePlugin(indexOf(plugin), MetricPoint::kBind, s.code(),
                                              secondsSinceNs(plugin_start));
                 }
                 if (s.code() == Code::kSkip) {
                   runBind(i + 1, std::move(state), std::move(pod), std::move(node),
                           std::move(done));
                   return;
                 }
                 if (fw_metrics_) {
                   fw_metrics_->observePoint(MetricPoint::kBind, s.code(),
                                             secondsSinceNs(state->bind_start_ns));
                 }
                 done(named(std::move(s), plugin->name()));
               });
}

void Framework::bindByExtender(std::shared_ptr<CycleState> state,
                               std::shared_ptr<const PodInfo> pod, std::string node,
                               StatusCallback done) {
  // The scheduler's own annotations would have ridden on the Binding, which the extender
  // writes without them: they go out as a patch first.
  const PodChanges* changes = findPodChanges(*state);
  const bool unsent =
      changes != nullptr && !changes->empty() &&
      std::all_of(changes->annotations().begin(), changes->annotations().end(), [](const auto& kv) {
        return std::find(std::begin(apis::kSchedulerOwnedPodAnnotations),
                         std::end(apis::kSchedulerOwnedPodAnnotations),
                         kv.first) != std::end(apis::kSchedulerOwnedPodAnnotations);
      });
  if (!unsent) {
    extenders_->bind(*pod, node, std::move(done));
    return;
  }
  cluster_.patchPod(
      pod, changes->mergePatch(*pod),
      [this, pod, node = std::move(node), done = std::move(done)](kube::Expected<void> r) mutable {
        if (!r) {
          done(Status::error(fmt::format("patching the pod: {}", r.error().message)));
          return;
        }
        extenders_->bind(*pod, node, std::move(done));
      });
}

void Framework::runPostBindPlugins(CycleState& state, const PodInfo& pod, const std::string& node) {
  const auto start = fw_metrics_ ? Clock::now() : Clock::time_point{};
  for (auto* p : post_binds_) {
    timed(state, p, MetricPoint::kPostBind, [&] {
      p->postBind(state, pod, node);
      return Status::success();
    });
  }
  if (fw_metrics_)
    fw_metrics_->observePoint(MetricPoint::kPostBind, Code::kSuccess, secondsSince(start));
}

}  // namespace koord::roles::scheduler
