// CPUEvict and MemoryEvict rounds on hand-built states and a real metric cache: which opted-in
// pods go, in Koordinator's order, and what keeps a round from evicting (config, policy, cool
// down). The RestClient's io_context never runs: the round's choice is checked, not the API's.
#include <boost/asio/io_context.hpp>
#include <boost/json.hpp>

#include <catch2/catch.hpp>

#include "koord/kube/event_recorder.h"
#include "koord/kube/rest_client.h"
#include "metriccache/metric_cache.h"
#include "qosmanager/priorityevict/priority_evict_round.h"
#include "qosmanager/qos_evictors.h"
#include "statesinformer/states_snapshot.h"

using namespace koord::roles::koordlet;
using namespace koord::roles::koordlet::qosmanager;
namespace mc = koord::roles::koordlet::metriccache;
namespace json = boost::json;
using namespace std::chrono_literals;

namespace {

PodMeta pod(std::string name, std::int32_t priority, bool opted_in = true) {
  PodMeta p;
  p.namespace_ = "ns";
  p.name = name;
  p.uid = "uid-" + name;
  p.phase = PodPhase::kRunning;
  p.priority_value = priority;
  p.priority = koord::apis::priorityClassByValue(priority);
  p.kube_qos = koord::apis::KubeQoS::kBurstable;
  if (opted_in)
    p.labels["koordinator.sh/eviction-enabled"] = "true";
  return p;
}

StatesSnapshot states(std::string_view threshold_json, std::vector<PodMeta> pods) {
  StatesSnapshot s;
  auto node = std::make_shared<NodeInfo>();
  node->name = "node-a";
  node->capacity.emplace("cpu", koord::kube::Quantity::parse("4").value());
  node->capacity.emplace("memory", koord::kube::Quantity::parse("10Gi").value());
  s.node = node;
  auto slo = std::make_shared<NodeSLOInfo>();
  slo->resource_used_threshold_with_be =
      std::make_shared<const json::object>(json::parse(threshold_json).as_object());
  s.node_slo = slo;
  s.pods = std::make_shared<std::vector<PodMeta>>(std::move(pods));
  s.synced = true;
  return s;
}

koord::kube::RestConfig config() {
  koord::kube::RestConfig c;
  c.host = "https://127.0.0.1:1";
  return c;
}

struct Fixture {
  boost::asio::io_context io;  // never run: nothing reaches an API server
  koord::kube::RestClient client{io, config()};
  koord::kube::EventRecorder recorder{client, io, {"koordlet", "node-a"}};
  koord::metrics::Registry registry;
  PodEvictor evictor{client, recorder, registry, "node-a"};
  mc::MetricCache cache;
  const mc::TimePoint now{std::chrono::seconds(1'800'000'000)};
};

constexpr double kGiB = 1024.0 * 1024 * 1024;

}  // namespace

TEST_CASE("MemoryEvict: opted-in pods up to the priority threshold go, lowest priority first") {
  Fixture f;
  PriorityEvictRound round(f.cache, f.evictor, EvictResource::kMemory, 1000ms, 4s);
  REQUIRE(f.cache.append(mc::MetricKind::kNodeMemoryUsage, "", f.now - 1s, 8.0 * kGiB));
  for (auto [uid, gib] : {std::pair{"uid-prod", 4.0}, std::pair{"uid-mid", 0.5},
                          std::pair{"uid-batch", 0.3}, std::pair{"uid-shy", 2.0}})
    REQUIRE(f.cache.append(mc::MetricKind::kPodMemoryUsage, uid, f.now - 1s, gib * kGiB));
  // 80 % used, threshold 75 %, lower 73 %: 7 % of 10 GiB (0.7 GiB) to free.
  const auto threshold =
      R"({"enable": true, "memoryEvictThresholdPercent": 75, "evictEnabledPriorityThreshold": 7999})";
  auto s = states(threshold, {pod("prod", 9500), pod("mid", 7500), pod("batch", 5500),
                              pod("shy", 5000, /*opted_in=*/false)});
  auto r = round.runOnce(s, f.now);
  REQUIRE(r.ran);
  CHECK(r.release == static_cast<std::int64_t>(10 * kGiB * 7 / 100));
  // batch (0.3) then mid (0.5) reach 0.7 GiB; prod is above the threshold, shy did not opt in.
  CHECK(r.evicted == std::vector<std::string>{"ns/batch", "ns/mid"});
  // Cool down: the next round within memory-evict-cool-time-seconds does nothing.
  CHECK_FALSE(round.runOnce(s, f.now + 2s).ran);
}

TEST_CASE("MemoryEvict: does nothing without evictEnabledPriorityThreshold or when disabled") {
  Fixture f;
  REQUIRE(f.cache.append(mc::MetricKind::kNodeMemoryUsage, "", f.now - 1s, 9.0 * kGiB));
  REQUIRE(f.cache.append(mc::MetricKind::kPodMemoryUsage, "uid-batch", f.now - 1s, 1.0 * kGiB));
  for (const char* threshold :
       {R"({"enable": true})", R"({"enable": false, "evictEnabledPriorityThreshold": 7999})",
        R"({"enable": true, "evictEnabledPriorityThreshold": "x"})"}) {
    INFO(threshold);
    PriorityEvictRound round(f.cache, f.evictor, EvictResource::kMemory, 1000ms, 4s);
    auto r = round.runOnce(states(threshold, {pod("batch", 5500)}), f.now);
    CHECK_FALSE(r.ran);
    CHECK(r.evicted.empty());
    CHECK_FALSE(r.skipped_because.empty());
  }
}

TEST_CASE("CPUEvict: the window's average node CPU decides; eviction-priority and policy order") {
  Fixture f;
  PriorityEvictRound round(f.cache, f.evictor, EvictResource::kCPU, 1000ms, 20s);
  // 30 s of a 4-core node at 3.75 cores: 93 % (truncated) against 90 %, lower 80 %: free 520m.
  for (int i = 30; i >= 1; --i)
    REQUIRE(
        f.cache.append(mc::MetricKind::kNodeCPUUsage, "", f.now - std::chrono::seconds(i), 3.75));
  for (auto [uid, cores] : {std::pair{"uid-a", 0.4}, std::pair{"uid-b", 0.4},
                            std::pair{"uid-c", 0.4}, std::pair{"uid-d", 0.4}})
    REQUIRE(f.cache.append(mc::MetricKind::kPodCPUUsage, uid, f.now - 1s, cores));
  auto a = pod("a", 5500);
  a.annotations["koordinator.sh/eviction-priority"] = "100";  // last among the opted in
  auto b = pod("b", 5500);
  b.annotations["koordinator.sh/eviction-policy"] = R"(["BECPUEvict"])";  // not for CPUEvict
  auto c = pod("c", 5900);
  auto d = pod("d", 5100);
  auto s = states(R"({"enable": true, "cpuEvictThresholdPercent": 90, "cpuEvictLowerPercent": 80,
                      "evictEnabledPriorityThreshold": 5999, "cpuEvictTimeWindowSeconds": 30})",
                  {a, b, c, d});
  auto r = round.runOnce(s, f.now);
  REQUIRE(r.ran);
  CHECK(r.release == 520);
  CHECK(r.evicted == std::vector<std::string>{"ns/d", "ns/c"});
}

TEST_CASE("BE eviction honours koordinator.sh/eviction-policy now that the koordlet keeps it") {
  Fixture f;
  QoSEvictors e(f.cache, f.evictor, 1000ms, 4s, 20s);
  REQUIRE(f.cache.append(mc::MetricKind::kNodeMemoryUsage, "", f.now - 1s, 7.5 * kGiB));
  auto be = [](std::string name, std::string policy) {
    auto p = pod(std::move(name), 5500, false);
    p.kube_qos = koord::apis::KubeQoS::kBestEffort;
    p.labels["koordinator.sh/qosClass"] = "BE";
    if (!policy.empty())
      p.annotations["koordinator.sh/eviction-policy"] = policy;
    return p;
  };
  REQUIRE(f.cache.append(mc::MetricKind::kPodMemoryUsage, "uid-listed", f.now - 1s, 1.0 * kGiB));
  REQUIRE(f.cache.append(mc::MetricKind::kPodMemoryUsage, "uid-other", f.now - 1s, 1.0 * kGiB));
  auto r = e.memoryEvictOnce(
      states(R"({"enable": true, "memoryEvictThresholdPercent": 70})",
             {be("listed", R"(["BEMemoryEvict"])"), be("other", R"(["MemoryEvict"])")}),
      f.now);
  REQUIRE(r.ran);
  CHECK(r.evicted == std::vector<std::string>{"ns/listed"});
}
