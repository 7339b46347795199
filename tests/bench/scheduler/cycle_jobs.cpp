// The cycle bench's --jobs mode: the Scheduler's own loop (queue, cache, Permit, binding) so
// that a gang's wait at Permit and its binding together are paid as a real scheduler pays them.
#include "cycle_jobs.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "child_run.h"
#include "config/scheduler_config.h"
#include "framework/plugin_registry.h"
#include "koord/apis/elastic_quota.h"
#include "koord/apis/gang.h"
#include "koord/core/metrics.h"
#include "koord/kube/quantity.h"
#include "loop_figures.h"
#include "plugins/coscheduling/coscheduling.h"
#include "plugins/elasticquota/elastic_quota_plugin.h"
#include "scheduler.h"
#include "scheduler/map_object_source.h"

namespace koord::bench::scheduler {

namespace {

using namespace koord::roles::scheduler;
namespace apis = koord::apis;
namespace kube = koord::kube;

constexpr std::string_view kNamespace = "bench";
constexpr std::string_view kQuotaNamespace = "koordinator-system";
constexpr std::int64_t kPodMilliCpu = 1000;
constexpr std::int64_t kPodMemory = 2LL << 30;
// How long a run may take to bind everything before it counts as stuck.
constexpr std::chrono::seconds kRunLimit{300};
// How long the loop may go without binding anything (pods left failing in backoff).
constexpr std::chrono::seconds kStallLimit{20};

// Which of the two plugins a run enables (and which its pods use): none for A.
struct Mode {
  bool gangs = false, quotas = false;
  bool any() const { return gangs || quotas; }
};

Mode modeOf(const JobsOptions& o, bool jobs) {
  return {.gangs = jobs && o.with_gangs, .quotas = jobs && o.with_quotas};
}

// A: the default plugins. B: the same plus Coscheduling and ElasticQuota at the points the
// chart's koord-scheduler-config.yaml enables them (PostFilter as the chart lists it).
std::string configText(const JobsOptions& o, Mode m) {
  std::string text = fmt::format(
      "apiVersion: kubescheduler.config.k8s.io/v1\n"
      "kind: KubeSchedulerConfiguration\n"
      "parallelism: {}\n"
      "profiles:\n"
      "  - schedulerName: koord-scheduler\n",
      o.parallelism);
  if (!m.any())
    return text;
  // The names enabled at one point, in the chart's order.
  auto names = [&](std::string_view tail = {}) {
    std::string out;
    for (auto [on, name] :
         {std::pair{m.gangs, "Coscheduling"}, std::pair{m.quotas, "ElasticQuota"}}) {
      if (on)
        out += fmt::format("{}{{name: {}}}", out.empty() ? "" : ", ", name);
    }
    if (!tail.empty())
      out += fmt::format("{}{{name: {}}}", out.empty() ? "" : ", ", tail);
    return out;
  };
  text += "    plugins:\n";
  if (m.gangs)
    text += "      queueSort: {disabled: [{name: '*'}], enabled: [{name: Coscheduling}]}\n";
  text += fmt::format("      preFilter: {{enabled: [{}]}}\n", names());
  text += fmt::format("      postFilter: {{disabled: [{{name: '*'}}], enabled: [{}]}}\n",
                      names("DefaultPreemption"));
  text += fmt::format("      reserve: {{enabled: [{}]}}\n", names());
  if (m.gangs)
    text +=
        "      permit: {enabled: [{name: Coscheduling}]}\n"
        "      postBind: {enabled: [{name: Coscheduling}]}\n";
  if (m.quotas)
    text += fmt::format(
        "    pluginConfig:\n"
        "      - name: ElasticQuota\n"
        "        args: {{quotaGroupNamespace: {}}}\n",
        kQuotaNamespace);
  return text;
}

// The binding answers at once, on the scheduling thread, as a fake API server with no latency
// would; each binding is recorded in order so the loop can tell which cycle bound what.
class BenchApi final : public SchedulerApi {
 public:
  const AnyObjectSource* objectSource(std::string_view key) const override {
    return key == elasticquota::kElasticQuotaSource ? &quotas : nullptr;
  }
  void bindPod(std::shared_ptr<const PodInfo> pod, const std::string& node,
               ApiCallback done) const override {
    {
      std::lock_guard lock(mu);
      bindings.emplace_back(pod->key(), node);
    }
    done({});
  }
  void patchPod(std::shared_ptr<const PodInfo>, boost::json::value,
                ApiCallback done) const override {
    done({});
  }
  void mergePatch(const kube::ResourceRef&, boost::json::value, ApiCallback done) const override {
    done({});
  }
  std::shared_ptr<const PodInfo> currentPod(const std::string& key) const override {
    auto it = pods.find(key);
    return it == pods.end() ? nullptr : it->second;
  }
  void reportScheduled(const PodInfo&, const std::string&, const std::string&) override {}
  void reportFailure(const PodInfo& pod, const std::string&, std::string_view,
                     const std::string& message, const std::string&) override {
    std::lock_guard lock(mu);
    if (failures++ == 0)
      first_failure = pod.key() + ": " + message;
  }

  testkit::MapObjectSource<apis::ElasticQuota> quotas;
  // Filled before the loop runs, read-only after.
  std::unordered_map<std::string, std::shared_ptr<const PodInfo>> pods;
  mutable std::mutex mu;
  mutable std::vector<std::pair<std::string, std::string>> bindings;  // under mu
  std::size_t failures = 0;                                           // under mu
  std::string first_failure;                                          // under mu
};

// The tree: `top` parents below the root, `middle` parents below them, `leaves` below those,
// each level spread evenly over the one above. Leaf l takes the gangs g with g % leaves == l.
struct QuotaTree {
  std::size_t top = 0, middle = 0, leaves = 0;
  std::size_t parentOfMiddle(std::size_t m) const { return m * top / middle; }
  std::size_t parentOfLeaf(std::size_t l) const { return l * middle / leaves; }
  static std::string topName(std::size_t i) { return fmt::format("bench-q1-{:04}", i); }
  static std::string middleName(std::size_t i) { return fmt::format("bench-q2-{:04}", i); }
  static std::string leafName(std::size_t i) { return fmt::format("bench-q3-{:05}", i); }
};

QuotaTree splitQuotas(std::size_t quotas) {
  QuotaTree t;
  t.top = std::max<std::size_t>(1, quotas / 100);
  t.middle = std::max<std::size_t>(1, quotas * 9 / 100);
  t.leaves = quotas > t.top + t.middle ? quotas - t.top - t.middle : 1;
  return t;
}

// An ElasticQuota as the informer would project it: cpu and memory min of exactly what its
// pods ask (their sum for a parent), max twice that and a CPU more, so that no pod is refused
// and the runtime calculation still has min, max and sharing to work out.
std::shared_ptr<apis::ElasticQuota> makeQuota(const std::string& name, const std::string& parent,
                                              bool is_parent, std::int64_t pods) {
  auto q = std::make_shared<apis::ElasticQuota>();
  q->namespace_ = std::string(kQuotaNamespace);
  q->name = name;
  q->uid = "uid-" + name;
  q->parent_name = parent;
  q->is_parent = is_parent;
  q->labels[std::string(apis::kLabelQuotaParent)] = parent;
  if (is_parent)
    q->labels[std::string(apis::kLabelQuotaIsParent)] = "true";
  q->min["cpu"] = kube::Quantity::fromMilli(pods * kPodMilliCpu);
  q->min["memory"] = kube::Quantity::fromInt(pods * kPodMemory);
  q->max["cpu"] = kube::Quantity::fromMilli(2 * pods * kPodMilliCpu + 1000);
  q->max["memory"] = kube::Quantity::fromInt(2 * pods * kPodMemory + kPodMemory);
  q->shared_weight = q->max;
  return q;
}

std::string podName(std::size_t i) {
  return fmt::format("pod-{:06}", i);
}
std::string gangName(std::size_t g) {
  return fmt::format("gang-{:05}", g);
}

std::shared_ptr<PodInfo> makePod(const JobsOptions& o, const QuotaTree& tree, std::size_t i,
                                 Mode m) {
  auto p = std::make_shared<PodInfo>();
  p->namespace_ = std::string(kNamespace);
  p->name = podName(i);
  p->uid = fmt::format("00000000-0000-0000-0002-{:012}", i);
  p->scheduler_name = "koord-scheduler";
  p->requests.milli_cpu = kPodMilliCpu;
  p->requests.memory = kPodMemory;
  p->non_zero_requests = p->requests;
  p->limits = p->requests;
  const std::size_t g = i / o.gang_size;
  if (m.gangs) {
    p->annotations[std::string(apis::kAnnotationGangName)] = gangName(g);
    p->annotations[std::string(apis::kAnnotationGangMinAvailable)] = std::to_string(o.gang_size);
    p->annotations[std::string(apis::kAnnotationGangMode)] = "Strict";
    // As the informer's projection derives it from the annotation.
    p->gang_id = fmt::format("{}/{}", kNamespace, gangName(g));
  }
  if (m.quotas)
    p->labels[std::string(apis::kLabelQuotaName)] = QuotaTree::leafName(g % tree.leaves);
  return p;
}

// Crosses the pipe from the child as raw bytes, hence trivially copyable and fixed in size.
struct RunResult {
  bool ok = false;
  char error[512] = {};
  char plugins[1024] = {};
  LoopFigures loop;
  std::size_t gangs_whole = 0, gangs_partial = 0;
  // Cycles whose bindings were not one whole gang (B) or more than one pod (A).
  std::size_t bad_cycles = 0;
  std::size_t gangs_waiting_after = 0;
  std::size_t quotas_in_tree = 0;
  std::int64_t leaves_used_milli_cpu = 0;
  char first_failure[512] = {};
};
static_assert(std::is_trivially_copyable_v<RunResult>);

RunResult fail(RunResult r, std::string_view why) {
  r.ok = false;
  copyText(r.error, sizeof r.error, why);
  return r;
}

RunResult runOnce(const JobsOptions& o, bool jobs) {
  using Clock = std::chrono::steady_clock;
  auto seconds = [](Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double>(b - a).count();
  };
  RunResult out;
  if (o.gang_size == 0 || o.pods % o.gang_size != 0)
    return fail(out, "--pods must be a multiple of the gang size");
  const QuotaTree tree = splitQuotas(o.quotas);
  const std::size_t gangs = o.pods / o.gang_size;

  const PluginRegistry& registry = inTreeRegistry();
  const Mode m = modeOf(o, jobs);
  auto cfg = config::parseSchedulerConfigText(configText(o, m), registry);
  if (!cfg)
    return fail(out, "config: " + cfg.error().message);
  copyText(out.plugins, sizeof out.plugins, config::describe(*cfg));

  BenchApi api;
  metrics::Registry metrics_registry;
  const auto s0 = Clock::now();
  Scheduler loop(*cfg, registry, api, metrics_registry);
  coscheduling::Coscheduling* cosched = nullptr;
  elasticquota::ElasticQuotaPlugin* quota = nullptr;
  if (m.gangs) {
    cosched = dynamic_cast<coscheduling::Coscheduling*>(loop.findPlugin("Coscheduling"));
    if (cosched == nullptr)
      return fail(out, "the profile built no Coscheduling plugin");
  }
  if (m.quotas) {
    quota = dynamic_cast<elasticquota::ElasticQuotaPlugin*>(loop.findPlugin("ElasticQuota"));
    if (quota == nullptr)
      return fail(out, "the profile built no ElasticQuota plugin");
  }
  for (std::size_t i = 0; i < o.nodes; ++i) {
    auto n = std::make_shared<Node>();
    n->name = fmt::format("node-{:05}", i);
    n->uid = "uid-" + n->name;
    n->labels = {{"kubernetes.io/hostname", n->name},
                 {"topology.kubernetes.io/zone", fmt::format("zone-{}", i % 3)}};
    n->allocatable.milli_cpu = 4000;
    n->allocatable.memory = 32LL << 30;
    n->allocatable.allowed_pod_number = 110;
    n->capacity = n->allocatable;
    loop.onNodeAdd(std::move(n));
  }
  if (m.quotas) {
    // Each quota's pods (a parent's: its children's), so that mins add up along the tree.
    std::vector<std::int64_t> leaf_pods(tree.leaves), middle_pods(tree.middle), top_pods(tree.top);
    for (std::size_t g = 0; g < gangs; ++g)
      leaf_pods[g % tree.leaves] += static_cast<std::int64_t>(o.gang_size);
    for (std::size_t l = 0; l < tree.leaves; ++l)
      middle_pods[tree.parentOfLeaf(l)] += leaf_pods[l];
    for (std::size_t m = 0; m < tree.middle; ++m)
      top_pods[tree.parentOfMiddle(m)] += middle_pods[m];
    auto put = [&](std::shared_ptr<apis::ElasticQuota> q) {
      std::string key = fmt::format("{}/{}", q->namespace_, q->name);
      api.quotas.set(std::move(key), std::move(q));
    };
    // Parents first, as an operator creates a tree; the manager accepts any order.
    for (std::size_t t = 0; t < tree.top; ++t)
      put(makeQuota(QuotaTree::topName(t), std::string(apis::kRootQuotaName), true, top_pods[t]));
    for (std::size_t m = 0; m < tree.middle; ++m)
      put(makeQuota(QuotaTree::middleName(m), QuotaTree::topName(tree.parentOfMiddle(m)), true,
                    middle_pods[m]));
    for (std::size_t l = 0; l < tree.leaves; ++l)
      put(makeQuota(QuotaTree::leafName(l), QuotaTree::middleName(tree.parentOfLeaf(l)), false,
                    leaf_pods[l]));
    if (auto problems = quota->quotas().treeProblems(); !problems.empty())
      return fail(out, "quota tree: " + problems.front());
    for (const auto& name : quota->quotas().quotaNames())
      out.quotas_in_tree += name.starts_with("bench-q") ? 1 : 0;
  }
  std::vector<std::shared_ptr<const PodInfo>> pods;
  pods.reserve(o.pods);
  std::unordered_map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < o.pods; ++i) {
    auto p = makePod(o, tree, i, m);
    index.emplace(p->key(), i);
    api.pods.emplace(p->key(), p);
    pods.push_back(std::move(p));
  }
  out.loop.setup_s = seconds(s0, Clock::now());

  // The informer's adds: every listener (Coscheduling's gang cache, the quota's request), then
  // the queue. All before the loop, as a job's pods are created at once.
  const auto f0 = Clock::now();
  for (const auto& p : pods) {
    loop.onPodAdd(*p);
    loop.onPendingPodAdd(p);
  }
  out.loop.feed_s = seconds(f0, Clock::now());

  // The loop, on this thread, until every pod is bound. Whatever fails goes to backoff; the
  // housekeeping start() would run is done here when the active queue runs dry.
  std::vector<double> cycle_us;
  cycle_us.reserve(o.pods + o.pods / 4);
  std::vector<std::size_t> gang_bound(gangs);
  std::vector<std::size_t> cycle_gangs;
  std::size_t seen = 0;
  const double cpu0 = processCpuSeconds();
  const auto t0 = Clock::now();
  const auto deadline = t0 + kRunLimit;
  auto progress = t0;
  for (;;) {
    {
      std::lock_guard lock(api.mu);
      if (api.bindings.size() >= o.pods)
        break;
    }
    const auto now = Clock::now();
    if (now > deadline || now - progress > kStallLimit)
      break;
    if (loop.queue().sizes().active == 0) {
      loop.queue().flushBackoffQCompleted();
      if (loop.queue().sizes().active == 0) {
        loop.queue().flushUnschedulableQLeftover();
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
      continue;
    }
    const auto c0 = Clock::now();
    loop.scheduleOne();
    cycle_us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - c0).count());
    ++out.loop.cycles;
    // What this cycle bound: nothing, or one whole gang (its last member's Permit lets all
    // go), or without gangs one pod.
    std::lock_guard lock(api.mu);
    if (api.bindings.size() == seen)
      continue;
    progress = Clock::now();
    cycle_gangs.clear();
    for (; seen < api.bindings.size(); ++seen) {
      const std::size_t g = index.at(api.bindings[seen].first) / o.gang_size;
      ++gang_bound[g];
      cycle_gangs.push_back(g);
    }
    const bool one_gang = std::all_of(cycle_gangs.begin(), cycle_gangs.end(),
                                      [&](std::size_t g) { return g == cycle_gangs.front(); }) &&
                          cycle_gangs.size() == o.gang_size;
    if (m.gangs ? !one_gang : cycle_gangs.size() != 1)
      ++out.bad_cycles;
  }
  out.loop.schedule_s = seconds(t0, Clock::now());
  out.loop.schedule_cpu_s = processCpuSeconds() - cpu0;

  std::vector<std::pair<std::string, std::string>> bindings;
  {
    std::lock_guard lock(api.mu);
    bindings = api.bindings;
    out.loop.failures = api.failures;
    copyText(out.first_failure, sizeof out.first_failure, api.first_failure);
  }
  out.loop.bound = bindings.size();
  for (std::size_t n : gang_bound) {
    if (n == o.gang_size)
      ++out.gangs_whole;
    else if (n != 0)
      ++out.gangs_partial;
  }

  // The informer's confirmations of the bindings, as SchedulerInformers::connect hands an
  // update from pending to bound to the scheduler: timed apart from the loop.
  const auto k0 = Clock::now();
  for (const auto& [key, node] : bindings) {
    const auto& old_pod = pods[index.at(key)];
    auto bound = std::make_shared<PodInfo>(*old_pod);
    bound->node_name = node;
    loop.onPodUpdate(*old_pod, *bound);
    loop.onPendingPodDelete(*old_pod);
    loop.onAssignedPodAdd(std::move(bound));
  }
  out.loop.confirm_s = seconds(k0, Clock::now());

  if (m.gangs)
    out.gangs_waiting_after = cosched->gangs().waitingCount();
  if (m.quotas) {
    for (std::size_t l = 0; l < tree.leaves; ++l) {
      if (auto s = quota->quotas().summary(QuotaTree::leafName(l))) {
        auto it = s->used.find("cpu");
        out.leaves_used_milli_cpu += it == s->used.end() ? 0 : it->second;
      }
    }
  }
  setCyclePercentiles(cycle_us, out.loop);
  out.ok = true;
  return out;
}

// runOnce in a child process of its own, so that neither run inherits the heap the other left
// (as cycle_bench.cpp's runInChild, for the same reason).
RunResult runInChild(const JobsOptions& o, bool jobs) {
  auto r = runInChildProcess<RunResult>([&] { return runOnce(o, jobs); });
  return r ? *r : fail(RunResult{}, r.error().message);
}

// The checks the figures stand on; each failure printed, false when any.
bool check(const JobsOptions& o, Mode m, const RunResult& r) {
  bool good = true;
  auto expect = [&](bool ok, std::string_view what) {
    if (!ok) {
      fmt::print("  CHECK FAILED: {}\n", what);
      good = false;
    }
  };
  expect(r.loop.bound == o.pods, fmt::format("{} of {} pods bound", r.loop.bound, o.pods));
  expect(r.bad_cycles == 0, fmt::format("{} cycles bound other than {}", r.bad_cycles,
                                        m.gangs ? "one whole gang" : "one pod"));
  if (m.gangs) {
    expect(r.gangs_partial == 0, fmt::format("{} gangs partly bound", r.gangs_partial));
    expect(r.gangs_whole == o.pods / o.gang_size,
           fmt::format("{} of {} gangs bound whole", r.gangs_whole, o.pods / o.gang_size));
    expect(r.gangs_waiting_after == 0,
           fmt::format("{} pods still waiting at Permit", r.gangs_waiting_after));
  }
  if (m.quotas) {
    expect(r.quotas_in_tree == o.quotas,
           fmt::format("{} of {} quotas in the tree", r.quotas_in_tree, o.quotas));
    const auto want = static_cast<std::int64_t>(o.pods) * kPodMilliCpu;
    expect(r.leaves_used_milli_cpu == want,
           fmt::format("the leaves' used cpu is {}m, not {}m", r.leaves_used_milli_cpu, want));
  }
  expect(r.loop.failures == 0, fmt::format("{} scheduling failures (first: {})", r.loop.failures,
                                           std::string_view(r.first_failure)));
  return good;
}

void printRun(const JobsOptions& o, std::string_view label, const RunResult& r) {
  printLoopRun(o.pods, label, r.loop);
}

}  // namespace

int runJobs(const JobsOptions& o) {
  const QuotaTree tree = splitQuotas(o.quotas);
  fmt::print(
      "koord scheduler loop, jobs (in process): {} nodes (4 CPU, 32 GiB), {} pods (1 CPU, 2 GiB), "
      "parallelism {}, {} rounds\n"
      "  A: no gangs, no quotas, the default plugins\n"
      "  B:",
      o.nodes, o.pods, o.parallelism, o.rounds);
  if (o.with_gangs)
    fmt::print(" {} gangs of {} (Strict, min-available {}) with Coscheduling;",
               o.pods / std::max<std::size_t>(1, o.gang_size), o.gang_size, o.gang_size);
  if (o.with_quotas)
    fmt::print(" {} ElasticQuotas ({} top, {} middle, {} leaves) with ElasticQuota;", o.quotas,
               tree.top, tree.middle, tree.leaves);
  fmt::print("\n");
  // A then B in each round, so that drift in the machine hits both alike.
  std::vector<RunResult> without, with;
  bool good = true;
  for (int round = 0; round < o.rounds; ++round) {
    for (bool jobs : {false, true}) {
      if (!(jobs ? o.run_with : o.run_without))
        continue;
      RunResult r = runInChild(o, jobs);
      if (!r.ok) {
        fmt::print(stderr, "{}: {}\n", jobs ? "B" : "A", r.error);
        return 1;
      }
      if (round == 0)
        fmt::print("  {} profile: {}\n", jobs ? "B" : "A", r.plugins);
      printRun(o, fmt::format("round {} {}", round + 1, jobs ? "B (jobs)" : "A (plain)"), r);
      good = check(o, modeOf(o, jobs), r) && good;
      std::fflush(stdout);
      (jobs ? with : without).push_back(r);
    }
  }
  if (!without.empty() && !with.empty()) {
    std::vector<LoopFigures> a, b;
    for (const auto& r : without)
      a.push_back(r.loop);
    for (const auto& r : with)
      b.push_back(r.loop);
    printLoopTable(a, b, o.pods, 20);
  }
  if (!good)
    fmt::print("some checks failed\n");
  return good ? 0 : 1;
}

}  // namespace koord::bench::scheduler
