// The eviction rounds' decisions: which BE pods a round evicts, in order, from the cache's usage.
// The RestClient's io_context never runs here, so the Eviction API calls are made but never sent:
// what is checked is the round's choice, not the API's answer (cluster/koordlet covers that).
#include <boost/asio/io_context.hpp>
#include <boost/json.hpp>

#include <catch2/catch.hpp>

#include "koord/kube/event_recorder.h"
#include "koord/kube/rest_client.h"
#include "metriccache/metric_cache.h"
#include "qosmanager/qos_evictors.h"
#include "statesinformer/states_snapshot.h"

using namespace koord::roles::koordlet;
namespace mc = koord::roles::koordlet::metriccache;
namespace json = boost::json;
using namespace std::chrono_literals;

namespace {

PodMeta pod(std::string name, std::string uid, bool be, std::int32_t priority,
            std::int64_t batch_cpu_request) {
  PodMeta p;
  p.namespace_ = "ns";
  p.name = std::move(name);
  p.uid = std::move(uid);
  p.phase = PodPhase::kRunning;
  p.priority_value = priority;
  p.kube_qos = be ? koord::apis::KubeQoS::kBestEffort : koord::apis::KubeQoS::kBurstable;
  if (be)
    p.labels["koordinator.sh/qosClass"] = "BE";
  ContainerMeta c;
  c.name = "main";
  if (batch_cpu_request > 0) {
    c.requests.emplace("kubernetes.io/batch-cpu",
                       koord::kube::Quantity::fromInt(batch_cpu_request));
  }
  p.containers.push_back(c);
  return p;
}

StatesSnapshot states(std::string_view threshold_json) {
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
  s.pods = std::make_shared<std::vector<PodMeta>>(std::vector<PodMeta>{
      pod("ls", "uid-ls", false, 9000, 0), pod("be-high", "uid-be-high", true, 5900, 1000),
      pod("be-low", "uid-be-low", true, 5100, 1000)});
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
  qosmanager::PodEvictor evictor{client, recorder, registry, "node-a"};
  mc::MetricCache cache;
  const mc::TimePoint now{std::chrono::seconds(1'800'000'000)};
};

}  // namespace

TEST_CASE(
    "BEMemoryEvict: above the threshold the BE pods go, lowest priority first; then cool down") {
  Fixture f;
  qosmanager::QoSEvictors e(f.cache, f.evictor, 1000ms, 4s, 20s);
  const double gib = 1024.0 * 1024 * 1024;
  REQUIRE(f.cache.append(mc::MetricKind::kNodeMemoryUsage, "", f.now - 1s, 7.5 * gib));
  REQUIRE(f.cache.append(mc::MetricKind::kPodMemoryUsage, "uid-be-high", f.now - 1s, 1.0 * gib));
  REQUIRE(f.cache.append(mc::MetricKind::kPodMemoryUsage, "uid-be-low", f.now - 1s, 0.2 * gib));
  // 75 % used, threshold 70 %, lower 68 %: 7 % of 10 GiB to free, more than either pod uses.
  auto s = states(R"({"enable": true, "memoryEvictThresholdPercent": 70})");
  auto round = e.memoryEvictOnce(s, f.now);
  REQUIRE(round.ran);
  CHECK(round.release == static_cast<std::int64_t>(0.07 * 10 * gib));
  CHECK(round.evicted == std::vector<std::string>{"ns/be-low", "ns/be-high"});
  // Within memory-evict-cool-time-seconds nothing more happens.
  auto again = e.memoryEvictOnce(s, f.now + 2s);
  CHECK_FALSE(again.ran);
  CHECK(again.evicted.empty());
  // Below the threshold: nothing to evict.
  qosmanager::QoSEvictors calm(f.cache, f.evictor, 1000ms, 4s, 20s);
  CHECK(
      calm.memoryEvictOnce(states(R"({"enable": true, "memoryEvictThresholdPercent": 80})"), f.now)
          .evicted.empty());
}

TEST_CASE("BECPUEvict: BE pods starved below the satisfaction lower percent are evicted") {
  Fixture f;
  qosmanager::QoSEvictors e(f.cache, f.evictor, 1000ms, 4s, 20s);
  // 60 s of BE pods asking for 2 cores, held to 0.5 and using all of it: satisfaction 25 %.
  for (int i = 60; i >= 1; --i) {
    auto t = f.now - std::chrono::seconds(i);
    REQUIRE(f.cache.append(mc::MetricKind::kBECPUUsage, "", t, 0.5));
    REQUIRE(f.cache.append(mc::MetricKind::kBECPURequest, "", t, 2.0));
    REQUIRE(f.cache.append(mc::MetricKind::kBECPULimit, "", t, 0.5));
  }
  REQUIRE(f.cache.append(mc::MetricKind::kPodCPUUsage, "uid-be-high", f.now - 1s, 0.4));
  REQUIRE(f.cache.append(mc::MetricKind::kPodCPUUsage, "uid-be-low", f.now - 1s, 0.1));
  auto s = states(R"({"enable": true, "cpuEvictBESatisfactionLowerPercent": 40,
                      "cpuEvictBESatisfactionUpperPercent": 60, "cpuEvictTimeWindowSeconds": 30})");
  auto round = e.cpuEvictOnce(s, f.now);
  REQUIRE(round.ran);
  // Release 2000m * (60 % - 25 %) = 700m of batch-cpu requests: the lower-priority pod (1000m).
  CHECK(round.release == 700);
  CHECK(round.evicted == std::vector<std::string>{"ns/be-low"});

  qosmanager::QoSEvictors satisfied(f.cache, f.evictor, 1000ms, 4s, 20s);
  auto ok =
      satisfied.cpuEvictOnce(states(R"({"enable": true, "cpuEvictBESatisfactionLowerPercent": 20,
                 "cpuEvictBESatisfactionUpperPercent": 60})"),
                             f.now);
  CHECK(ok.evicted.empty());
}
