// The QoS manager and its strategy table: a strategy whose gate is off is never built, each
// built one runs on its own loop whose first round waits one interval, and a strategy that is not
// ready skips its round before any snapshot is taken.
#include <boost/asio/io_context.hpp>

#include <catch2/catch.hpp>

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "koord/apis/features.h"
#include "koord/cgroup/cpu_topology.h"
#include "koord/cgroup/resource_executor.h"
#include "koord/core/feature_gate.h"
#include "koord/core/metrics.h"
#include "koord/kube/event_recorder.h"
#include "koord/kube/rest_client.h"
#include "koordlet_options.h"
#include "metriccache/metric_cache.h"
#include "qosmanager/evict/pod_evictor.h"
#include "qosmanager/qos_manager.h"
#include "statesinformer/states_snapshot.h"
#include "temp_tree.h"

using namespace koord::roles::koordlet;
using namespace std::chrono_literals;
using qosmanager::QoSManager;
using qosmanager::QoSStrategy;
using qosmanager::StrategyContext;
using qosmanager::StrategySpec;

namespace {

// Everything a strategy may be built from, none of it reachable: the API server is a closed
// port and the cgroup tree an empty temp dir.
struct Modules {
  boost::asio::io_context io;
  koord::testing::TempTree tree{"koord-qos-manager"};
  koord::cgroup::ResourceExecutor cgroups{
      {tree.root(), koord::cgroup::CgroupVersion::kV1, koord::cgroup::CgroupDriver::kCgroupfs}};
  koord::cgroup::CpuTopology topology;
  metriccache::MetricCache cache;
  koord::metrics::Registry registry;
  koord::kube::RestClient client{io, [] {
                                   koord::kube::RestConfig config;
                                   config.host = "https://127.0.0.1:1";
                                   return config;
                                 }()};
  koord::kube::EventRecorder recorder{client, io, {"koordlet", "node-a"}};
  qosmanager::PodEvictor evictor{client, recorder, registry, "node-a"};
  KoordletOptions options;

  StrategyContext context() {
    return {.cache = cache,
            .cgroups = cgroups,
            .topology = topology,
            .evictor = evictor,
            .options = options,
            .metrics = registry};
  }
};

std::vector<std::string_view> built(Modules& m, const std::map<std::string, bool>& gate_values) {
  koord::FeatureGate gates(koord::apis::koordletFeatures());
  gates.set(gate_values);
  QoSManager manager(
      m.io, [] { return StatesSnapshot(); }, gates, m.context());
  return manager.strategies();
}

// Fakes, counted in globals: a table's factories are plain function pointers.
int g_built = 0;
int g_rounds = 0;
int g_not_ready_rounds = 0;

class Counting final : public QoSStrategy {
 public:
  void runOnce(const StatesSnapshot&, std::chrono::system_clock::time_point) override {
    ++g_rounds;
  }
};

class NeverReady final : public QoSStrategy {
 public:
  bool ready() const override { return false; }
  void runOnce(const StatesSnapshot&, std::chrono::system_clock::time_point) override {
    ++g_not_ready_rounds;
  }
};

std::chrono::milliseconds every100ms(const KoordletOptions&) {
  return 100ms;
}
std::chrono::milliseconds every10ms(const KoordletOptions&) {
  return 10ms;
}

const StrategySpec kFakeTable[] = {
    {.name = "counting",
     .gate = "FakeOn",
     .interval = every100ms,
     .make = [](const StrategyContext&) -> std::unique_ptr<QoSStrategy> {
       ++g_built;
       return std::make_unique<Counting>();
     }},
    {.name = "gated off",
     .gate = "FakeOff",
     .interval = every10ms,
     .make = [](const StrategyContext&) -> std::unique_ptr<QoSStrategy> {
       ++g_built;
       return std::make_unique<Counting>();
     }},
    {.name = "never ready",
     .gate = "FakeOn",
     .interval = every10ms,
     .make = [](const StrategyContext&) -> std::unique_ptr<QoSStrategy> {
       ++g_built;
       return std::make_unique<NeverReady>();
     }},
};

}  // namespace

TEST_CASE("qos manager: the koordlet's strategies are built only where their gates are on",
          "[koordlet][qosmanager]") {
  Modules m;
  // Koordinator's defaults: BECPUSuppress, RdtResctrl and CPUBurst on (beta), the evictions,
  // SystemConfig and CgroupReconcile off (alpha).
  CHECK(built(m, {}) == std::vector<std::string_view>{"cpu suppress", "resctrl", "cpu burst"});
  const std::map<std::string, bool> none{
      {"BECPUSuppress", false}, {"RdtResctrl", false}, {"CPUBurst", false}};
  CHECK(built(m, none).empty());
  auto with = [&](std::initializer_list<std::pair<const std::string, bool>> on) {
    auto gates = none;
    for (const auto& [k, v] : on)
      gates[k] = v;
    return built(m, gates);
  };
  CHECK(with({{"BECPUEvict", true}}) == std::vector<std::string_view>{"cpu evict"});
  CHECK(with({{"BECPUSuppress", true}, {"BEMemoryEvict", true}, {"BECPUEvict", true}}) ==
        std::vector<std::string_view>{"cpu suppress", "memory evict", "cpu evict"});
  CHECK(with({{"RdtResctrl", true}, {"SystemConfig", true}}) ==
        std::vector<std::string_view>{"resctrl", "system config"});
  CHECK(with({{"MemoryEvict", true}, {"CPUEvict", true}}) ==
        std::vector<std::string_view>{"memory evict by priority", "cpu evict by priority"});
  CHECK(with({{"CPUBurst", true}, {"CgroupReconcile", true}}) ==
        std::vector<std::string_view>{"cpu burst", "cgroup reconcile"});
}

TEST_CASE("qos manager: a gate off builds nothing; rounds wait an interval, skip when not ready",
          "[koordlet][qosmanager]") {
  Modules m;
  koord::FeatureGate gates({{"FakeOn", true}, {"FakeOff", false}});
  g_built = g_rounds = g_not_ready_rounds = 0;
  int snapshots = 0;
  QoSManager manager(
      m.io,
      [&] {
        ++snapshots;
        return StatesSnapshot();
      },
      gates, m.context(), kFakeTable);
  CHECK(g_built == 2);
  CHECK(manager.strategies() == std::vector<std::string_view>{"counting", "never ready"});

  manager.start();
  m.io.run_for(30ms);
  CHECK(g_rounds == 0);  // the first round is one interval (100ms) away
  m.io.run_for(400ms);
  manager.stop();
  m.io.run_for(10ms);
  CHECK(g_rounds >= 1);
  // The strategy that is never ready had rounds every 10ms, none of them reached it or took a
  // snapshot.
  CHECK(g_not_ready_rounds == 0);
  CHECK(snapshots == g_rounds);
}
