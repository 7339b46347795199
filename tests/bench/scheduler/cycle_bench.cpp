// The scheduling cycle alone, in process: N synthetic nodes (4 CPU / 32 GiB / 110 pods, a
// NodeMetric each), M pods scheduled one after another through a koord-scheduler profile
// (the default plugins this build has plus LoadAwareScheduling), each placement applied to the
// snapshot as the cache would. Prints microseconds per pod; no API server, no binding.
//   koord_bench_scheduler_cycle [--nodes 5000] [--pods 10000] [--parallelism 16]
//                               [--no-loadaware] (the default plugins alone)
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>
#include <string>
#include <string_view>
#include <variant>

#include <fmt/format.h>

#include "config/scheduler_config.h"
#include "framework/plugin_registry.h"
#include "framework/snapshot.h"
#include "koord/apis/node_metric.h"
#include "plugins/loadaware/load_aware.h"
#include "runtime/framework.h"
#include "runtime/parallelizer.h"
#include "runtime/schedule_pod.h"
#include "scheduler/builders.h"
#include "scheduler/fake_cluster.h"

using namespace koord::roles::scheduler;
namespace kube = koord::kube;

namespace {

constexpr std::string_view kConfig = R"(
apiVersion: kubescheduler.config.k8s.io/v1beta1
kind: KubeSchedulerConfiguration
profiles:
  - schedulerName: koord-scheduler
    plugins:
      filter:
        enabled:
          - name: LoadAwareScheduling
      score:
        enabled:
          - name: LoadAwareScheduling
            weight: 1
      reserve:
        enabled:
          - name: LoadAwareScheduling
)";

constexpr std::string_view kDefaultConfig = R"(
apiVersion: kubescheduler.config.k8s.io/v1beta1
kind: KubeSchedulerConfiguration
profiles:
  - schedulerName: koord-scheduler
)";

}  // namespace

int main(int argc, char** argv) {
  std::size_t n_nodes = 5000, n_pods = 10000;
  int parallelism = 16;
  bool loadaware = true;
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    if (a == "--no-loadaware") {
      loadaware = false;
      continue;
    }
    if (i + 1 >= argc)
      break;
    if (a == "--nodes")
      n_nodes = std::strtoul(argv[i + 1], nullptr, 10);
    else if (a == "--pods")
      n_pods = std::strtoul(argv[i + 1], nullptr, 10);
    else if (a == "--parallelism")
      parallelism = std::atoi(argv[i + 1]);
    ++i;
  }

  const PluginRegistry& registry = inTreeRegistry();
  auto cfg = config::parseSchedulerConfigText(loadaware ? kConfig : kDefaultConfig, registry);
  if (!cfg) {
    fmt::print(stderr, "config: {}\n", cfg.error().message);
    return 1;
  }
  // The NodeMetrics as LoadAware's declared source, declared before the plugin is built.
  testkit::FakeCluster cluster;
  auto& metrics = cluster.declare<koord::apis::NodeMetric>(loadaware::kNodeMetricSource);
  Parallelizer parallelizer(parallelism);
  auto fw = Framework::create(cfg->profiles.front(), registry, cluster, parallelizer);
  if (!fw) {
    fmt::print(stderr, "framework: {}\n", fw.error().message);
    return 1;
  }

  std::mt19937_64 rng(42);
  std::vector<std::shared_ptr<const NodeInfo>> nodes;
  nodes.reserve(n_nodes);
  const auto now = std::chrono::system_clock::now();
  for (std::size_t i = 0; i < n_nodes; ++i) {
    auto node = std::make_shared<Node>();
    node->name = fmt::format("node-{:05}", i);
    node->labels = {{"kubernetes.io/hostname", node->name},
                    {"topology.kubernetes.io/zone", fmt::format("zone-{}", i % 3)}};
    kube::ResourceList alloc{{"cpu", testkit::quantity("4")},
                             {"memory", testkit::quantity("32Gi")},
                             {"pods", testkit::quantity("110")},
                             {"kubernetes.io/batch-cpu", testkit::quantity("2000")},
                             {"kubernetes.io/batch-memory", testkit::quantity("8Gi")}};
    node->allocatable = Resource::fromList(alloc);
    node->capacity = node->allocatable;
    auto info = std::make_shared<NodeInfo>();
    info->node = node;
    nodes.push_back(info);

    auto metric = std::make_shared<koord::apis::NodeMetric>();
    metric->name = node->name;
    metric->update_time = now;
    koord::apis::NodeMetricInfo usage;
    usage.node_usage = {
        {"cpu", kube::Quantity::fromMilli(static_cast<std::int64_t>(rng() % 2400))},
        {"memory", kube::Quantity::fromInt(static_cast<std::int64_t>((rng() % 16) * (1LL << 30)))}};
    metric->node_metric = usage;
    // As the cache attaches it; the cluster view keeps it too, for anything that asks by name.
    info->node_metric = metric;
    metrics.set(node->name, metric);
  }
  Snapshot snapshot(std::move(nodes));
  std::map<std::string, std::size_t, std::less<>> index;
  for (std::size_t i = 0; i < snapshot.nodes().size(); ++i)
    index.emplace(snapshot.nodes()[i]->name(), i);

  PodScheduler scheduler(**fw, 0, 7);
  std::size_t placed = 0, unschedulable = 0;
  std::vector<double> cycle_us;
  cycle_us.reserve(n_pods);
  const auto t0 = std::chrono::steady_clock::now();
  for (std::size_t i = 0; i < n_pods; ++i) {
    auto pod = std::make_shared<PodInfo>();
    pod->namespace_ = "bench";
    pod->name = fmt::format("pod-{:06}", i);
    pod->uid = fmt::format("00000000-0000-0000-0000-{:012}", i);
    pod->scheduler_name = "koord-scheduler";
    pod->requests = Resource::fromList(
        {{"cpu", testkit::quantity("100m")}, {"memory", testkit::quantity("256Mi")}});
    pod->non_zero_requests = pod->requests;
    pod->limits = pod->requests;
    const auto c0 = std::chrono::steady_clock::now();
    CycleState state;
    auto out = scheduler.schedule(state, *pod, snapshot);
    if (auto* r = std::get_if<ScheduleResult>(&out)) {
      auto st = (*fw)->runReservePlugins(state, *pod, r->node);
      if (!st.ok()) {
        fmt::print(stderr, "reserve: {}\n", st.message());
        return 1;
      }
      // As the cache's assume: a new NodeInfo for the chosen node, the snapshot's entry replaced.
      const std::size_t at = index.at(r->node);
      auto copy = std::make_shared<NodeInfo>(*snapshot.nodes()[at]);
      copy->addPod(pod);
      snapshot.mutableNodes()[at] = std::move(copy);
      ++placed;
    } else {
      ++unschedulable;
    }
    cycle_us.push_back(
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - c0).count());
  }
  const double total_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::sort(cycle_us.begin(), cycle_us.end());
  auto pct = [&](double p) {
    return cycle_us.empty() ? 0.0
                            : cycle_us[std::min(cycle_us.size() - 1,
                                                static_cast<std::size_t>(p * cycle_us.size()))];
  };
  fmt::print(
      "koord scheduler cycle (in process): {} nodes, {} pods, parallelism {} ({} workers)\n"
      "plugins: {}\n"
      "placed {}, unschedulable {}; {:.1f} us/pod mean, p50 {:.1f} us, p99 {:.1f} us; "
      "{:.0f} pods/s\n",
      n_nodes, n_pods, parallelism, parallelizer.workers(), config::describe((*fw)->plugins()),
      placed, unschedulable, total_s * 1e6 / static_cast<double>(n_pods), pct(0.5), pct(0.99),
      static_cast<double>(n_pods) / total_s);
  return 0;
}
