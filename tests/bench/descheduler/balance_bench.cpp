// One descheduling pass in process: N nodes, M pods spread over them, a NodeMetric each (a share
// of the nodes hot), the pass run as koord descheduler runs it (a profile with LowNodeLoad at
// balance and an Evict plugin that only records), timed, with the process's peak RSS. No API
// server: the pass alone.
//   koord_bench_descheduler_balance [--nodes 5000] [--pods 50000] [--hot-percent 10]
//                                   [--rounds 3]
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "config/descheduler_config.h"
#include "descheduler.h"
#include "framework/plugin_registry.h"

using namespace koord::roles::descheduler;
namespace apis = koord::apis;
namespace kube = koord::kube;

namespace {

struct Options {
  std::size_t nodes = 5000;
  std::size_t pods = 50000;
  std::size_t hot_percent = 10;
  int rounds = 3;
};

// Counts what the pass would evict.
struct CountingEvict final : PodEvictionApi {
  std::size_t evictions = 0;
  bool evict(const Pod&, const EvictOptions&) override {
    ++evictions;
    return true;
  }
};

// An Evict plugin that hands every eviction to the counting API side.
class BenchEvict final : public EvictPlugin {
 public:
  explicit BenchEvict(FrameworkHandle& h) : h_(h) {}
  std::string_view name() const override { return "BenchEvict"; }
  bool evict(const Pod& pod, const EvictOptions& o) override {
    return h_.podEvictor().evict(pod, o);
  }

 private:
  FrameworkHandle& h_;
};

struct NoArgs final : PluginArgs {};

Snapshot makeSnapshot(const Options& o) {
  Snapshot s;
  s.now = std::chrono::system_clock::now();
  const std::size_t hot = o.nodes * o.hot_percent / 100;
  const std::size_t per_node = o.pods / o.nodes;
  for (std::size_t i = 0; i < o.nodes; ++i) {
    auto n = std::make_shared<Node>();
    n->name = fmt::format("node-{:05}", i);
    n->allocatable = {{"cpu", 32000}, {"memory", std::int64_t{128} << 30}, {"pods", 110}};
    n->labels = {{"kubernetes.io/hostname", n->name}};
    auto metric = std::make_shared<apis::NodeMetric>();
    metric->name = n->name;
    metric->update_time = s.now;
    apis::NodeMetricInfo info;
    info.system_usage["cpu"] = kube::Quantity::fromMilli(1000);
    info.system_usage["memory"] = kube::Quantity::fromInt(std::int64_t{4} << 30);
    metric->node_metric = info;
    // Hot nodes' pods use most of what they ask for; the others little.
    const std::int64_t pod_milli = i < hot ? 2800 : 300;
    for (std::size_t k = 0; k < per_node; ++k) {
      auto p = std::make_shared<Pod>();
      p->namespace_ = "bench";
      p->name = fmt::format("pod-{:05}-{:02}", i, k);
      p->uid = p->name;
      p->node_name = n->name;
      p->phase = PodPhase::kRunning;
      p->requests = {{"cpu", 2000}, {"memory", std::int64_t{4} << 30}};
      p->owner_refs.push_back({"apps/v1", "ReplicaSet", fmt::format("rs-{}", k), "rs", true});
      p->creation_timestamp = s.now - std::chrono::hours(1);
      apis::PodMetricInfo pm;
      pm.namespace_ = p->namespace_;
      pm.name = p->name;
      pm.pod_usage["cpu"] = kube::Quantity::fromMilli(pod_milli);
      pm.pod_usage["memory"] = kube::Quantity::fromInt(std::int64_t{2} << 30);
      metric->pods_metric.push_back(std::move(pm));
      s.addPod(std::move(p));
    }
    s.node_metrics[n->name] = std::move(metric);
    s.addNode(std::move(n));
  }
  return s;
}

long peakRssKiB() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string_view a = argv[i];
    const auto v = std::strtoul(argv[i + 1], nullptr, 10);
    if (a == "--nodes")
      o.nodes = v;
    else if (a == "--pods")
      o.pods = v;
    else if (a == "--hot-percent")
      o.hot_percent = v;
    else if (a == "--rounds")
      o.rounds = static_cast<int>(v);
  }
  PluginRegistry registry = inTreeRegistry();
  registry.add("BenchEvict",
               makePluginFactory<NoArgs>(
                   [](const boost::json::value*) -> koord::Expected<NoArgs> { return NoArgs{}; },
                   [](std::shared_ptr<const NoArgs>, FrameworkHandle& h) {
                     return std::make_shared<BenchEvict>(h);
                   },
                   "wrong args"));
  // As Koordinator's load-aware guide enables it, with the anomaly detector off (one pass).
  auto cfg = config::parseDeschedulerConfigText(R"(
profiles:
- name: bench
  plugins:
    balance: {enabled: [{name: LowNodeLoad}]}
    evict: {disabled: [{name: "*"}], enabled: [{name: BenchEvict}]}
    filter: {disabled: [{name: "*"}], enabled: [{name: DefaultEvictor}]}
  pluginConfig:
  - name: LowNodeLoad
    args:
      lowThresholds: {cpu: 45, memory: 55}
      highThresholds: {cpu: 75, memory: 80}
      anomalyCondition: {consecutiveAbnormalities: 1}
)",
                                                registry);
  if (!cfg) {
    fmt::print(stderr, "config: {}\n", cfg.error().message);
    return 1;
  }
  const auto t0 = std::chrono::steady_clock::now();
  const Snapshot snapshot = makeSnapshot(o);
  const double build_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  fmt::print(
      "koord descheduler balance pass (in process): {} nodes, {} pods, {}% hot; snapshot "
      "built in {:.2f} s\n",
      o.nodes, snapshot.pods_by_node.size() * (o.pods / o.nodes), o.hot_percent, build_s);
  CountingEvict api;
  koord::metrics::Registry metrics;
  Descheduler d(
      *cfg, registry, [&](TimePoint) { return snapshot; }, api, metrics);
  for (int r = 0; r < o.rounds; ++r) {
    api.evictions = 0;
    const auto start = std::chrono::steady_clock::now();
    auto result = d.runOnce(snapshot.now);
    const double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!result) {
      fmt::print(stderr, "pass: {}\n", result.error().message);
      return 1;
    }
    fmt::print(
        "round {}: pass {:.3f} s (snapshot copy included), {} evictions, peak RSS {:.1f} MiB\n",
        r + 1, s, api.evictions, static_cast<double>(peakRssKiB()) / 1024.0);
  }
  return 0;
}
