#include "noderesource/batch_resource.h"

#include <boost/json.hpp>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "koord/kube/time.h"

using namespace koord::roles::manager::noderesource;
using koord::apis::CalculatePolicy;
using koord::apis::PriorityClass;
using koord::apis::QoSClass;
using koord::kube::Quantity;
using koord::kube::ResourceList;
using std::chrono::minutes;
using std::chrono::seconds;

namespace {

const auto kNow = *koord::kube::parseTime("2024-05-01T10:00:00Z");

Quantity q(std::string_view text) {
  return Quantity::parse(text).value();
}

ResourceList cpuMem(std::string_view cpu, std::string_view memory) {
  return {{"cpu", q(cpu)}, {"memory", q(memory)}};
}

PodView pod(std::string name, PodPhase phase, PriorityClass priority, QoSClass qos,
            std::string_view cpu, std::string_view memory) {
  PodView p;
  p.namespace_ = "test";
  p.name = std::move(name);
  p.uid = "uid-" + p.name;
  p.node_name = "test-node1";
  p.phase = phase;
  p.priority = priority;
  p.qos = qos;
  p.requests = {q(cpu), q(memory)};
  return p;
}

koord::apis::PodMetricInfo podMetric(std::string name, std::string_view cpu,
                                     std::string_view memory,
                                     PriorityClass priority = PriorityClass::kNone) {
  koord::apis::PodMetricInfo m;
  m.namespace_ = "test";
  m.name = std::move(name);
  m.pod_usage = cpuMem(cpu, memory);
  m.priority = priority;
  return m;
}

// What every case starts from: a 100-core, 120G node with no kubelet reservation; the koordlet
// reported one minute ago a system usage of 7 cores and 12G; both reclaim thresholds are 65%, so
// the safety margin is 35% of capacity: 35000m cpu and 42G memory.
struct Fixture {
  NodeView node;
  std::vector<PodView> pods;
  std::optional<koord::apis::NodeMetric> metric;
  koord::apis::ColocationStrategy strategy;

  Fixture() {
    node.name = "test-node1";
    node.capacity = cpuMem("100", "120G");
    node.allocatable = cpuMem("100", "120G");
    metric.emplace();
    metric->name = "test-node1";
    metric->update_time = kNow - minutes(1);
    metric->node_metric.emplace();
    metric->node_metric->node_usage = cpuMem("50", "55G");
    metric->node_metric->system_usage = cpuMem("7", "12G");
    strategy.enable = true;
    strategy.cpu_reclaim_threshold_percent = 65;
    strategy.memory_reclaim_threshold_percent = 65;
  }

  BatchResult run() const {
    std::vector<const PodView*> ptrs;
    for (const auto& p : pods)
      ptrs.push_back(&p);
    return calculateBatchResource(node, ptrs, metric ? &*metric : nullptr, strategy, kNow);
  }
};

// The pods of Koordinator's own plugin test: A (LS, prod) uses 11/11G of 20/20G, B (BE, batch)
// uses 10/10G, C (no label, Guaranteed -> LSR, prod, Pending) uses 22/22G of 20/40G, D (BE)
// has Succeeded.
void koordinatorPods(Fixture& f) {
  f.pods = {
      pod("podA", PodPhase::kRunning, PriorityClass::kProd, QoSClass::kLS, "20", "20G"),
      pod("podB", PodPhase::kRunning, PriorityClass::kBatch, QoSClass::kBE, "0", "0"),
      pod("podC", PodPhase::kPending, PriorityClass::kProd, QoSClass::kLSR, "20", "40G"),
      pod("podD", PodPhase::kSucceeded, PriorityClass::kBatch, QoSClass::kBE, "10", "10G"),
  };
  f.metric->pods_metric = {podMetric("podA", "11", "11G"), podMetric("podB", "10", "10G"),
                           podMetric("podC", "22", "22G")};
}

struct Case {
  std::string name;
  std::function<void(Fixture&)> setup;
  BatchState state;
  std::string cpu;     // expected batch-cpu (milli-cores); "" when removed
  std::string memory;  // expected batch-memory; "" when removed
};

}  // namespace

TEST_CASE("batch resources follow Koordinator's formula", "[manager][noderesource][batch]") {
  const std::vector<Case> cases = {
      // HPUsed = A 11 + C 22 = 33 cores, 11G + 22G = 33G (B is batch, D has terminated).
      // cpu = 100 - 35 - max(7, 0) - 33 = 25 -> 25000m; memory = 120 - 42 - 12 - 33 = 33G.
      {"usage policy (Koordinator's plugin test)", koordinatorPods, BatchState::kCalculated,
       "25000", "33G"},
      // HPReq memory = A 20G + C 40G = 60G; NodeReserved = 0.
      // memory = 120 - 42 - 0 - 60 = 18G; cpu stays on usage: 25000m.
      {"request policy for memory",
       [](Fixture& f) {
         koordinatorPods(f);
         f.strategy.memory_calculate_policy = CalculatePolicy::kRequest;
       },
       BatchState::kCalculated, "25000", "18G"},
      // Koordinator has no request policy for cpu: it falls back to usage (25000m).
      {"request policy for cpu is usage",
       [](Fixture& f) {
         koordinatorPods(f);
         f.strategy.cpu_calculate_policy = CalculatePolicy::kRequest;
       },
       BatchState::kCalculated, "25000", "33G"},
      // HPMaxUsedReq = A max(20, 11) + C max(20, 22) = 42 cores; A max(20G, 11G) + C
      // max(40G, 22G) = 60G. cpu = 100 - 35 - 7 - 42 = 16 -> 16000m; memory = 120 - 42 - 12 -
      // 60 = 6G.
      {"maxUsageRequest policy",
       [](Fixture& f) {
         koordinatorPods(f);
         f.strategy.cpu_calculate_policy = CalculatePolicy::kMaxUsageRequest;
         f.strategy.memory_calculate_policy = CalculatePolicy::kMaxUsageRequest;
       },
       BatchState::kCalculated, "16000", "6G"},
      // LSE pod requests 8/8G and uses 2/3G: its cpu counts as the request (8), memory as used
      // (3G). cpu = 100 - 35 - 7 - 8 = 50 -> 50000m; memory = 120 - 42 - 12 - 3 = 63G.
      {"LSE pod counts its cpu request",
       [](Fixture& f) {
         f.pods = {
             pod("podE", PodPhase::kRunning, PriorityClass::kProd, QoSClass::kLSE, "8", "8G")};
         f.metric->pods_metric = {podMetric("podE", "2", "3G")};
       },
       BatchState::kCalculated, "50000", "63G"},
      // F has no metric (counts its request 10/16G); G uses 1/1G. HPUsed = 11 cores, 17G.
      // cpu = 100 - 35 - 7 - 11 = 47 -> 47000m; memory = 120 - 42 - 12 - 17 = 49G.
      {"pods without metrics count their request",
       [](Fixture& f) {
         f.pods = {
             pod("podF", PodPhase::kPending, PriorityClass::kProd, QoSClass::kLS, "10", "16G"),
             pod("podG", PodPhase::kRunning, PriorityClass::kMid, QoSClass::kLS, "4", "4G")};
         f.metric->pods_metric = {podMetric("podG", "1", "1G")};
       },
       BatchState::kCalculated, "47000", "49G"},
      // As Koordinator, a pod without a metric is left out of HPMaxUsedReq: only G's
      // max(4, 1) = 4 cores and max(4G, 1G) = 4G count. cpu = 100 - 35 - 7 - 4 = 54 ->
      // 54000m; memory = 120 - 42 - 12 - 4 = 62G.
      {"maxUsageRequest leaves pods without metrics out",
       [](Fixture& f) {
         f.pods = {
             pod("podF", PodPhase::kPending, PriorityClass::kProd, QoSClass::kLS, "10", "16G"),
             pod("podG", PodPhase::kRunning, PriorityClass::kMid, QoSClass::kLS, "4", "4G")};
         f.metric->pods_metric = {podMetric("podG", "1", "1G")};
         f.strategy.cpu_calculate_policy = CalculatePolicy::kMaxUsageRequest;
         f.strategy.memory_calculate_policy = CalculatePolicy::kMaxUsageRequest;
       },
       BatchState::kCalculated, "54000", "62G"},
      // No pods listed; metrics for X (prod, 5/5G), Y (batch, skipped) and Z (no priority,
      // 1/2G). Dangling HP = 6 cores, 7G. cpu = 100 - 35 - 7 - 6 = 52 -> 52000m; memory =
      // 120 - 42 - 12 - 7 = 59G.
      {"dangling pod metrics count by their priority",
       [](Fixture& f) {
         f.metric->pods_metric = {podMetric("podX", "5", "5G", PriorityClass::kProd),
                                  podMetric("podY", "9", "9G", PriorityClass::kBatch),
                                  podMetric("podZ", "1", "2G")};
       },
       BatchState::kCalculated, "52000", "59G"},
      // Only batch and free pods, using 30/30G and 20/20G: no HP usage at all.
      // cpu = 100 - 35 - 7 = 58 -> 58000m; memory = 120 - 42 - 12 = 66G.
      {"batch and free pods are excluded",
       [](Fixture& f) {
         f.pods = {
             pod("batch", PodPhase::kRunning, PriorityClass::kBatch, QoSClass::kLS, "30", "30G"),
             pod("free", PodPhase::kRunning, PriorityClass::kFree, QoSClass::kBE, "20", "20G")};
         f.metric->pods_metric = {podMetric("batch", "30", "30G"), podMetric("free", "20", "20G")};
       },
       BatchState::kCalculated, "58000", "66G"},
      // Succeeded S (metric 3/3G) and Failed T (no metric) are skipped as pods; S's metric is
      // still reported, so it counts as dangling (no priority in the metric): 3/3G.
      // cpu = 100 - 35 - 7 - 3 = 55 -> 55000m; memory = 120 - 42 - 12 - 3 = 63G.
      {"terminated pods are excluded (their metrics dangle)",
       [](Fixture& f) {
         f.pods = {
             pod("podS", PodPhase::kSucceeded, PriorityClass::kProd, QoSClass::kLS, "10", "10G"),
             pod("podT", PodPhase::kFailed, PriorityClass::kProd, QoSClass::kLS, "10", "10G")};
         f.metric->pods_metric = {podMetric("podS", "3", "3G")};
       },
       BatchState::kCalculated, "55000", "63G"},
      // Kubelet reserves 100 - 98 = 2 cores and 2G; the annotation 10 cores and 4G: NodeReserved
      // = 10 / 4G. SystemUsed = max(7, 10) = 10 cores, max(12G, 4G) = 12G.
      // cpu = 100 - 35 - 10 = 55 -> 55000m; memory = 120 - 42 - 12 = 66G.
      {"reservation annotation above capacity - allocatable",
       [](Fixture& f) {
         f.node.allocatable = cpuMem("98", "118G");
         f.node.reservation = cpuMem("10", "4G");
       },
       BatchState::kCalculated, "55000", "66G"},
      // Same node, memory by request: 120 - 42 - NodeReserved 4G - HPReq 0 = 74G.
      {"reservation annotation with the request policy",
       [](Fixture& f) {
         f.node.allocatable = cpuMem("98", "118G");
         f.node.reservation = cpuMem("10", "4G");
         f.strategy.memory_calculate_policy = CalculatePolicy::kRequest;
       },
       BatchState::kCalculated, "55000", "74G"},
      // Kubelet reserves 10 cores and 20G, the annotation only 1 core: SystemUsed = max(7, 10) =
      // 10 cores, max(12G, 20G) = 20G. cpu = 100 - 35 - 10 = 55 -> 55000m; memory = 120 - 42 -
      // 20 = 58G.
      {"kubelet reservation above the annotation",
       [](Fixture& f) {
         f.node.allocatable = cpuMem("90", "100G");
         f.node.reservation = ResourceList{{"cpu", q("1")}};
       },
       BatchState::kCalculated, "55000", "58G"},
      // Host applications: prod 3/2G and mid 1/1G count as system usage, batch 5/5G does not.
      // SystemUsed = 7 + 3 + 1 = 11 cores, 12G + 2G + 1G = 15G.
      // cpu = 100 - 35 - 11 = 54 -> 54000m; memory = 120 - 42 - 15 = 63G.
      {"host applications above batch are system usage",
       [](Fixture& f) {
         auto app = [](std::string name, PriorityClass p, std::string_view cpu,
                       std::string_view mem) {
           koord::apis::HostApplicationMetricInfo a;
           a.name = std::move(name);
           a.priority = p;
           a.usage = cpuMem(cpu, mem);
           return a;
         };
         f.metric->host_application_metric = {app("nginx", PriorityClass::kProd, "3", "2G"),
                                              app("yarn", PriorityClass::kBatch, "5", "5G"),
                                              app("agent", PriorityClass::kMid, "1", "1G")};
       },
       BatchState::kCalculated, "54000", "63G"},
      // Uncapped: 58 cores and 66G (as "batch and free pods are excluded"). Caps: 100 * 20% =
      // 20 cores -> 20000m; 120G * 30% = 36G.
      {"threshold caps",
       [](Fixture& f) {
         f.strategy.batch_cpu_threshold_percent = 20;
         f.strategy.batch_memory_threshold_percent = 30;
       },
       BatchState::kCalculated, "20000", "36G"},
      // Caps above the result change nothing: min(80, 58) = 58 cores, min(90G... 108G, 66G).
      {"threshold caps above the result",
       [](Fixture& f) {
         f.strategy.batch_cpu_threshold_percent = 80;
         f.strategy.batch_memory_threshold_percent = 90;
       },
       BatchState::kCalculated, "58000", "66G"},
      // maxUsageRequest with a cap: 16 cores and 6G uncapped (see above); caps 10% = 10 cores,
      // 4% = 4.8G -> 10000m and 4800M.
      {"threshold caps with maxUsageRequest",
       [](Fixture& f) {
         koordinatorPods(f);
         f.strategy.cpu_calculate_policy = CalculatePolicy::kMaxUsageRequest;
         f.strategy.memory_calculate_policy = CalculatePolicy::kMaxUsageRequest;
         f.strategy.batch_cpu_threshold_percent = 10;
         f.strategy.batch_memory_threshold_percent = 4;
       },
       BatchState::kCalculated, "10000", "4800M"},
      // A prod pod using 90 cores and 100G: 100 - 35 - 7 - 90 < 0 and 120 - 42 - 12 - 100 < 0.
      {"result floored at zero",
       [](Fixture& f) {
         f.pods = {
             pod("hog", PodPhase::kRunning, PriorityClass::kProd, QoSClass::kLS, "90", "100G")};
         f.metric->pods_metric = {podMetric("hog", "90", "100G")};
       },
       BatchState::kCalculated, "0", "0"},
      // Capacity 3 cores / 8Gi: margin 3000m * 0.35 = 1050m, 8589934592 * 0.35 = 3006477107
      // (truncated). System 250m / 512Mi, one LS pod using 333m / 1Gi.
      // cpu = 3000 - 1050 - 250 - 333 = 1367m; memory = 8589934592 - 3006477107 - 536870912 -
      // 1073741824 = 3972844749 bytes.
      {"milli-cores and binary memory",
       [](Fixture& f) {
         f.node.capacity = f.node.allocatable = cpuMem("3", "8Gi");
         f.metric->node_metric->system_usage = cpuMem("250m", "512Mi");
         f.pods = {
             pod("small", PodPhase::kRunning, PriorityClass::kProd, QoSClass::kLS, "500m", "2Gi")};
         f.metric->pods_metric = {podMetric("small", "333m", "1Gi")};
       },
       BatchState::kCalculated, "1367", "3972844749"},
      // updateTime 15 minutes ago is not yet past degradeTimeMinutes (strictly after).
      {"metric exactly degradeTimeMinutes old",
       [](Fixture& f) { f.metric->update_time = kNow - minutes(15); }, BatchState::kCalculated,
       "58000", "66G"},
      {"stale metric degrades (resources removed)",
       [](Fixture& f) { f.metric->update_time = kNow - minutes(15) - seconds(1); },
       BatchState::kDegraded, "", ""},
      {"missing metric degrades", [](Fixture& f) { f.metric.reset(); }, BatchState::kDegraded, "",
       ""},
      {"metric never updated degrades", [](Fixture& f) { f.metric->update_time.reset(); },
       BatchState::kDegraded, "", ""},
      {"colocation disabled resets",
       [](Fixture& f) {
         koordinatorPods(f);
         f.strategy.enable = false;
       },
       BatchState::kReset, "", ""},
  };

  for (const auto& c : cases) {
    INFO("case: " << c.name);
    Fixture f;
    c.setup(f);
    BatchResult r = f.run();
    CHECK(r.state == c.state);
    if (c.cpu.empty()) {
      CHECK_FALSE(r.desired.cpu.has_value());
      CHECK_FALSE(r.desired.memory.has_value());
      CHECK_FALSE(r.reason.empty());
      continue;
    }
    REQUIRE(r.desired.cpu.has_value());
    REQUIRE(r.desired.memory.has_value());
    // batch-cpu is an integer count of milli-cores (printed canonically: 25000 is "25k").
    CHECK(*r.desired.cpu == q(c.cpu));
    CHECK(r.desired.cpu->milliValue() % 1000 == 0);
    CHECK(*r.desired.memory == q(c.memory));
    CHECK(r.reason.empty());
  }
}

TEST_CASE("batch result keeps Koordinator's terms and messages", "[manager][noderesource][batch]") {
  Fixture f;
  koordinatorPods(f);
  BatchResult r = f.run();
  CHECK(r.cpu_message ==
        "batchAllocatable[CPU(Milli-Core)]:25000 = nodeCapacity:100000 - nodeSafetyMargin:35000 "
        "- systemUsageOrNodeReserved:7000 - podHPUsed:33000");
  CHECK(r.memory_message ==
        "batchAllocatable[Mem(GB)]:33 = nodeCapacity:120 - nodeSafetyMargin:42 - "
        "systemUsage:12 - podHPUsed:33");
  const BatchTerms& t = r.terms;
  CHECK(t.safety_margin.cpu == q("35"));
  CHECK(t.safety_margin.memory == q("42G"));
  CHECK(t.hp_request.cpu == q("40"));
  CHECK(t.hp_request.memory == q("60G"));
  CHECK(t.hp_used.cpu == q("33"));
  CHECK(t.hp_max_used_request.cpu == q("42"));
  CHECK(t.system_used.cpu == q("7"));
  CHECK(t.by_request.memory == q("18G"));
  CHECK(t.hp_pods == 2);
  CHECK(t.dangling_pods == 0);
  CHECK_FALSE(t.cpu_threshold.has_value());

  f.strategy.batch_cpu_threshold_percent = 20;
  r = f.run();
  CHECK(r.cpu_message ==
        "batchAllocatable[CPU(Milli-Core)]:20000 = min(nodeCapacity:100000 * thresholdRatio:0.2, "
        "nodeCapacity:100000 - nodeSafetyMargin:35000 - systemUsageOrNodeReserved:7000 - "
        "podHPUsed:33000)");
  REQUIRE(r.terms.cpu_threshold.has_value());
  CHECK(*r.terms.cpu_threshold == q("20"));
}

TEST_CASE("batch calculation from pods decoded as the API server sends them",
          "[manager][noderesource][batch]") {
  // Koordinator's plugin test again, this time through the pod projection: podC has no QoS
  // label and requests == limits, so it is Guaranteed -> LSR -> prod.
  auto decode = [](std::string_view text) { return decodePodView(boost::json::parse(text)); };
  std::vector<PodView> pods;
  for (
      std::string_view text : {
          R"({"metadata":{"namespace":"test","name":"podA","labels":{"koordinator.sh/qosClass":"LS"}},
               "spec":{"nodeName":"test-node1","containers":[{"resources":{
                 "requests":{"cpu":"20","memory":"20G"},"limits":{"cpu":"20","memory":"20G"}}}]},
               "status":{"phase":"Running"}})",
          R"({"metadata":{"namespace":"test","name":"podB","labels":{"koordinator.sh/qosClass":"BE"}},
               "spec":{"nodeName":"test-node1","containers":[{}]},"status":{"phase":"Running"}})",
          R"({"metadata":{"namespace":"test","name":"podC"},
               "spec":{"nodeName":"test-node1","containers":[
                 {"resources":{"requests":{"cpu":"10","memory":"20G"},"limits":{"cpu":"10","memory":"20G"}}},
                 {"resources":{"requests":{"cpu":"10","memory":"20G"},"limits":{"cpu":"10","memory":"20G"}}}]},
               "status":{"phase":"Pending"}})",
          R"({"metadata":{"namespace":"test","name":"podD","labels":{"koordinator.sh/qosClass":"BE"}},
               "spec":{"nodeName":"test-node1","containers":[{"resources":{
                 "requests":{"cpu":"10","memory":"10G"},"limits":{"cpu":"10","memory":"10G"}}}]},
               "status":{"phase":"Succeeded"}})",
      }) {
    auto p = decode(text);
    REQUIRE(p.has_value());
    pods.push_back(*p);
  }
  CHECK(pods[2].qos == QoSClass::kLSR);
  CHECK(pods[2].priority == PriorityClass::kProd);
  Fixture f;
  koordinatorPods(f);
  f.pods = pods;
  BatchResult r = f.run();
  REQUIRE(r.state == BatchState::kCalculated);
  CHECK(r.desired.cpu->toString() == "25k");
  CHECK(*r.desired.memory == q("33G"));
}

TEST_CASE("batch calculation survives absurd input", "[manager][noderesource][batch]") {
  Fixture f;
  // Quantities near the 1000E limit summed many times must saturate, not throw.
  for (int i = 0; i < 5; ++i) {
    f.pods.push_back(pod("big" + std::to_string(i), PodPhase::kRunning, PriorityClass::kProd,
                         QoSClass::kLS, "900E", "900E"));
  }
  f.metric->node_metric->system_usage = cpuMem("900E", "900E");
  f.strategy.cpu_reclaim_threshold_percent = -9'000'000'000'000'000'000;
  f.strategy.degrade_time_minutes = 9'000'000'000'000'000'000;
  BatchResult r;
  REQUIRE_NOTHROW(r = f.run());
  CHECK(r.state == BatchState::kCalculated);
  CHECK(r.desired.cpu->isZero());

  f.strategy.degrade_time_minutes = -9'000'000'000'000'000'000;
  REQUIRE_NOTHROW(r = f.run());
  CHECK(r.state == BatchState::kDegraded);

  // A null pod pointer and a duplicated metric key: the last metric entry wins, as a Go map.
  Fixture g;
  g.pods = {pod("dup", PodPhase::kRunning, PriorityClass::kProd, QoSClass::kLS, "1", "1G")};
  g.metric->pods_metric = {podMetric("dup", "50", "50G"), podMetric("dup", "2", "2G")};
  std::vector<const PodView*> ptrs = {nullptr, &g.pods[0]};
  r = calculateBatchResource(g.node, ptrs, &*g.metric, g.strategy, kNow);
  CHECK(r.terms.hp_used.cpu == q("2"));
  CHECK(r.terms.dangling_pods == 0);
}

// A node whose status claims a negative capacity (the API server stores what the kubelet or a
// hand-made patch sends) scales the thresholds below zero; the result must still not be.
TEST_CASE("batch resources stay at zero for a node with negative capacity",
          "[manager][noderesource][batch]") {
  Fixture f;
  f.node.capacity = cpuMem("-4", "-8Gi");
  f.node.allocatable = cpuMem("-4", "-8Gi");
  f.strategy.batch_cpu_threshold_percent = 80;
  f.strategy.batch_memory_threshold_percent = 70;
  for (auto policy :
       {CalculatePolicy::kUsage, CalculatePolicy::kRequest, CalculatePolicy::kMaxUsageRequest}) {
    f.strategy.memory_calculate_policy = policy;
    BatchResult r = f.run();
    REQUIRE(r.state == BatchState::kCalculated);
    CHECK(r.desired.cpu->isZero());
    CHECK(r.desired.memory->isZero());
  }
}
