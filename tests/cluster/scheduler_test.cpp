// koord scheduler end to end against the real apiserver: nodes created through the API (no
// kubelet needed to bind), pods with schedulerName koord-scheduler bound by the koord binary,
// LoadAware filtering a hot node, batch resources, FailedScheduling reasons and preemption.
#include <unistd.h>

#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <chrono>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <thread>

#include "cluster_api.h"
#include "cluster_env.h"
#include "koord/kube/time.h"
#include "loopback_http.h"
#include "manifests.h"
#include "scheduler_process.h"
#include "subprocess.h"

using namespace std::chrono_literals;
namespace json = boost::json;
using koord::kube::ResourceRef;
using koord::testing::eventually;
using koord::testing::koordBinary;
using koord::testing::KubeApi;
using koord::testing::loopbackGet;
using koord::testing::named;
using koord::testing::nodeOf;
using koord::testing::ok;
using koord::testing::str;
using koord::testing::TestNamespace;
using koord::testing::tokenConfig;
using koord::testing::uniqueName;
using namespace koord::testing::resources;

namespace {

// An API-only node: 4 CPU / 32Gi / 110 pods (plus `extra` allocatable), labelled for this test.
json::object node(const std::string& name, const std::string& id, json::object extra = {}) {
  json::object alloc{{"cpu", "4"}, {"memory", "32Gi"}, {"pods", "110"}};
  for (const auto& kv : extra)
    alloc[kv.key()] = kv.value();
  return json::object{{"apiVersion", "v1"},
                      {"kind", "Node"},
                      {"metadata", {{"name", name}, {"labels", {{"koord-e2e-sched", id}}}}},
                      {"status", {{"capacity", alloc}, {"allocatable", alloc}}}};
}

// A pause pod for koord-scheduler confined to this test's nodes; it tolerates every taint, since
// the node lifecycle controller taints nodes that no kubelet reports for.
json::object pod(const std::string& name, const std::string& ns, const std::string& id,
                 json::object requests, json::object labels = {},
                 const std::string& priority_class = "") {
  return koord::testing::schedulerTestPod(name, ns, "koord-e2e-sched", id, std::move(requests),
                                          std::move(labels), priority_class);
}

// The pod's PodScheduled condition as "status/reason/message"; empty when it has none.
std::string scheduledCondition(koord::kube::RestClient& api, const std::string& ns,
                               const std::string& name) {
  auto p = api.getSync(named(kPods, name, ns));
  if (!p)
    return "";
  const auto* conds = p->as_object().if_contains("status");
  if (!conds || !conds->as_object().contains("conditions"))
    return "";
  for (const auto& c : conds->as_object().at("conditions").as_array()) {
    if (str(c, {"type"}) == "PodScheduled")
      return str(c, {"status"}) + "/" + str(c, {"reason"}) + "/" + str(c, {"message"});
  }
  return "";
}

// Messages of the Events about a pod with a reason.
std::vector<std::string> events(koord::kube::RestClient& api, const std::string& ns,
                                const std::string& pod, const std::string& reason) {
  koord::kube::ListOptions o;
  o.field_selector = "involvedObject.name=" + pod + ",reason=" + reason;
  auto list = api.listSync(named(kEvents, "", ns), o);
  std::vector<std::string> out;
  if (!list)
    return out;
  for (const auto& e : list->at("items").as_array())
    out.push_back(str(e, {"message"}) + " [" + str(e, {"source", "component"}) + "]");
  return out;
}

using Scheduler = koord::testing::SchedulerProcess;

}  // namespace

TEST_CASE("scheduler: binds pods, LoadAware, batch resources, failures, preemption",
          "[cluster][scheduler]") {
  KubeApi api(tokenConfig());
  koord::testing::applyCrds(*api);
  const std::string id = uniqueName("ks");
  TestNamespace sys(*api, "koord-sched-sys");
  TestNamespace work(*api, "koord-sched");
  const std::string node_a = id + "-a";
  const std::string node_b = id + "-b";
  struct Cleanup {
    KubeApi& api;
    std::vector<ResourceRef> refs;
    ~Cleanup() {
      for (const auto& r : refs)
        (void)api->removeSync(r);
    }
  } cleanup{api, {}};
  for (const auto& n : {node_a, node_b}) {
    cleanup.refs.push_back(named(kNodes, n));
    cleanup.refs.push_back(named(kNodeMetrics, n));
  }
  cleanup.refs.push_back(named(kPriorityClasses, id + "-low"));
  cleanup.refs.push_back(named(kPriorityClasses, id + "-high"));
  ok(api->createSync(kNodes, node(node_a, id)), "create node a");
  ok(api->createSync(kNodes, node(node_b, id,
                                  {{"kubernetes.io/batch-cpu", "2000"},
                                   {"kubernetes.io/batch-memory", "4Gi"}})),
     "create node b");

  const auto env = koord::testing::readClusterEnv();
  const auto config_path = std::filesystem::temp_directory_path() / (id + "-scheduler.yaml");
  {
    std::ofstream f(config_path);
    f << "apiVersion: kubescheduler.config.k8s.io/v1beta1\n"
         "kind: KubeSchedulerConfiguration\n"
         "clientConnection:\n"
         "  kubeconfig: "
      << koord::testing::needEnv(env, "KOORD_KUBECONFIG")
      << "\n"
         "  qps: 500\n"
         "  burst: 1000\n"
         "leaderElection:\n"
         "  leaderElect: true\n"
         "  resourceName: koord-scheduler\n"
         "  resourceNamespace: "
      << sys.name()
      << "\n"
         "profiles:\n"
         "- schedulerName: koord-scheduler\n"
         "  plugins:\n"
         "    preFilter: {enabled: [{name: LoadAwareScheduling}]}\n"
         "    filter: {enabled: [{name: LoadAwareScheduling}]}\n"
         "    score: {enabled: [{name: LoadAwareScheduling, weight: 1}]}\n"
         "    reserve: {enabled: [{name: LoadAwareScheduling}]}\n";
  }
  Scheduler scheduler(config_path.string());

  // Leading, caches synced, serving its probes and metrics.
  REQUIRE(eventually(60s, [&] {
    return api->getSync(named(kLeases, "koord-scheduler", sys.name())).has_value();
  }));
  REQUIRE(eventually(30s, [&] { return loopbackGet(scheduler.port, "/healthz") == "ok"; }));

  SECTION("bind, load, batch, failures") {
    // 1. A plain pod is bound to one of the two nodes, with a Scheduled Event from the profile.
    ok(api->createSync(named(kPods, "", work.name()),
                       pod("first", work.name(), id, {{"cpu", "1"}, {"memory", "1Gi"}})),
       "create first");
    REQUIRE(eventually(30s, [&] { return !nodeOf(*api, work.name(), "first").empty(); }));
    const std::string first_node = nodeOf(*api, work.name(), "first");
    CHECK((first_node == node_a || first_node == node_b));
    CHECK(eventually(20s, [&] {
      auto ev = events(*api, work.name(), "first", "Scheduled");
      return ev.size() == 1 && ev[0] == "Successfully assigned " + work.name() + "/first to " +
                                            first_node + " [koord-scheduler]";
    }));

    // 2. BE pods land only where batch-cpu allocatable fits: node b has 2000, node a none.
    ok(api->createSync(named(kPods, "", work.name()), pod("be-1", work.name(), id,
                                                          {{"kubernetes.io/batch-cpu", "1500"},
                                                           {"kubernetes.io/batch-memory", "1Gi"}},
                                                          {{"koordinator.sh/qosClass", "BE"}})),
       "create be-1");
    REQUIRE(eventually(30s, [&] { return !nodeOf(*api, work.name(), "be-1").empty(); }));
    CHECK(nodeOf(*api, work.name(), "be-1") == node_b);
    // A second one no longer fits anywhere: FailedScheduling with each node's reason, and the
    // PodScheduled=False condition.
    ok(api->createSync(named(kPods, "", work.name()), pod("be-2", work.name(), id,
                                                          {{"kubernetes.io/batch-cpu", "1500"},
                                                           {"kubernetes.io/batch-memory", "1Gi"}},
                                                          {{"koordinator.sh/qosClass", "BE"}})),
       "create be-2");
    REQUIRE(eventually(30s, [&] {
      return scheduledCondition(*api, work.name(), "be-2").rfind("False/Unschedulable/", 0) == 0;
    }));
    const std::string condition = scheduledCondition(*api, work.name(), "be-2");
    CHECK_THAT(condition, Catch::Contains("2 Insufficient kubernetes.io/batch-cpu"));
    CHECK_THAT(condition, Catch::Contains("nodes are available"));
    CHECK(eventually(20s, [&] {
      for (const auto& e : events(*api, work.name(), "be-2", "FailedScheduling")) {
        if (e.find("Insufficient kubernetes.io/batch-cpu") != std::string::npos &&
            e.find("[koord-scheduler]") != std::string::npos)
          return true;
      }
      return false;
    }));
    CHECK(nodeOf(*api, work.name(), "be-2").empty());

    // 3. A pod that fits nowhere names the resource.
    ok(api->createSync(named(kPods, "", work.name()),
                       pod("huge", work.name(), id, {{"cpu", "64"}, {"memory", "1Gi"}})),
       "create huge");
    REQUIRE(eventually(30s, [&] {
      return scheduledCondition(*api, work.name(), "huge").find("2 Insufficient cpu") !=
             std::string::npos;
    }));

    // 4. Node a reports 90% CPU in its NodeMetric: LoadAware (threshold 65%) filters it, so
    //    every new pod goes to node b.
    ok(api->createSync(kNodeMetrics, json::object{{"apiVersion", "slo.koordinator.sh/v1alpha1"},
                                                  {"kind", "NodeMetric"},
                                                  {"metadata", {{"name", node_a}}}}),
       "create NodeMetric");
    auto report = [&](const std::string& n, const char* cpu) {
      json::object status{
          {"updateTime", koord::kube::formatTime(std::chrono::system_clock::now())},
          {"nodeMetric", {{"nodeUsage", {{"resources", {{"cpu", cpu}, {"memory", "2Gi"}}}}}}}};
      ok(api->patchSync(koord::testing::subresource(kNodeMetrics, "status", n),
                        koord::kube::PatchType::kMergePatch, json::object{{"status", status}}),
         "report NodeMetric");
    };
    report(node_a, "3600m");
    std::this_thread::sleep_for(2s);  // the informer's watch delivers it
    for (int i = 0; i < 4; ++i) {
      const std::string name = "hot-" + std::to_string(i);
      ok(api->createSync(named(kPods, "", work.name()),
                         pod(name, work.name(), id, {{"cpu", "100m"}, {"memory", "128Mi"}})),
         "create pod");
    }
    for (int i = 0; i < 4; ++i) {
      const std::string name = "hot-" + std::to_string(i);
      REQUIRE(eventually(30s, [&] { return !nodeOf(*api, work.name(), name).empty(); }));
      CHECK(nodeOf(*api, work.name(), name) == node_b);
    }

    // Metrics: attempts by result and the e2e latency histogram.
    const std::string metrics = loopbackGet(scheduler.port, "/metrics");
    CHECK_THAT(metrics, Catch::Contains("scheduler_schedule_attempts_total{result=\"scheduled\","
                                        "profile=\"koord-scheduler\"}"));
    CHECK_THAT(metrics,
               Catch::Contains("scheduler_schedule_attempts_total{result=\"unschedulable\","
                               "profile=\"koord-scheduler\"}"));
    CHECK_THAT(metrics, Catch::Contains("scheduler_e2e_scheduling_duration_seconds_bucket"));
  }

  SECTION("a higher-priority pod preempts a lower one") {
    auto priority_class = [&](const std::string& name, int value) {
      ok(api->createSync(kPriorityClasses, json::object{{"apiVersion", "scheduling.k8s.io/v1"},
                                                        {"kind", "PriorityClass"},
                                                        {"metadata", {{"name", name}}},
                                                        {"value", value}}),
         "create PriorityClass");
    };
    priority_class(id + "-low", 100);
    priority_class(id + "-high", 1000);
    // Each low pod takes 3 of a node's 4 CPUs.
    for (const char* name : {"low-0", "low-1"}) {
      ok(api->createSync(
             named(kPods, "", work.name()),
             pod(name, work.name(), id, {{"cpu", "3"}, {"memory", "1Gi"}}, {}, id + "-low")),
         "create low pod");
    }
    for (const char* name : {"low-0", "low-1"})
      REQUIRE(eventually(30s, [&] { return !nodeOf(*api, work.name(), name).empty(); }));
    ok(api->createSync(
           named(kPods, "", work.name()),
           pod("high", work.name(), id, {{"cpu", "2"}, {"memory", "1Gi"}}, {}, id + "-high")),
       "create high pod");
    // The scheduler deletes one victim and nominates its node for the preemptor.
    std::string victim;
    REQUIRE(eventually(30s, [&] {
      for (const char* name : {"low-0", "low-1"}) {
        auto p = api->getSync(named(kPods, name, work.name()));
        if (!p || p->at("metadata").as_object().contains("deletionTimestamp")) {
          victim = name;
          return true;
        }
      }
      return false;
    }));
    const std::string victim_node = nodeOf(*api, work.name(), victim);
    CHECK(eventually(20s, [&] {
      auto h = api->getSync(named(kPods, "high", work.name()));
      return h && str(*h, {"status", "nominatedNodeName"}) == victim_node;
    }));
    // No kubelet runs these nodes: finish the victim's graceful deletion as a kubelet would.
    (void)koord::testing::removePodNow(*api, work.name(), victim);
    REQUIRE(eventually(60s, [&] { return !nodeOf(*api, work.name(), "high").empty(); }));
    CHECK(nodeOf(*api, work.name(), "high") == victim_node);
    // The other low pod was not touched.
    const std::string other = victim == "low-0" ? "low-1" : "low-0";
    auto o = ok(api->getSync(named(kPods, other, work.name())), "get other low pod");
    CHECK_FALSE(o.at("metadata").as_object().contains("deletionTimestamp"));
  }

  // Pods left on the API-only nodes are removed at once (no kubelet would ever confirm).
  koord::testing::removeAllPodsNow(*api, work.name());
  std::filesystem::remove(config_path);
}
