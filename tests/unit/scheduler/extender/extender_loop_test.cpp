// The scheduling loop (Scheduler::scheduleOne over the default plugins) with `extenders` in its
// configuration and a real extender on loopback: the extender narrows and ranks the nodes, its
// refusals reach FailedScheduling, a required one that fails is a SchedulerError, a binder
// extender binds instead of DefaultBinder, and a preempting extender decides where preemption
// evicts.
#include <catch2/catch.hpp>

#include <boost/json.hpp>

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "config/scheduler_config.h"
#include "extender/extender_json.h"
#include "fake_extender.h"
#include "framework/plugin_registry.h"
#include "koord/core/metrics.h"
#include "scheduler.h"

namespace koord::roles::scheduler {
namespace {

namespace json = boost::json;
using namespace std::chrono_literals;
using testing::FakeExtender;

struct Report {
  std::string pod;
  std::string what;  // "scheduled" or the failure reason
  std::string detail;
  std::string nominated{};
};

class RecordingApi final : public SchedulerApi {
 public:
  void bindPod(std::shared_ptr<const PodInfo> pod, const std::string& node,
               ApiCallback done) const override {
    {
      std::lock_guard lock(mu);
      bindings.emplace_back(pod->key(), node);
    }
    done({});
  }
  std::shared_ptr<const PodInfo> currentPod(const std::string& key) const override {
    std::lock_guard lock(mu);
    auto it = pods.find(key);
    return it == pods.end() ? nullptr : it->second;
  }
  kube::Expected<json::value> getPod(const PodInfo& pod) const override {
    // The API's object carries what the projection drops.
    json::value v = extender::podFromProjection(pod);
    v.as_object()["metadata"].as_object()["annotations"] = json::object{{"team", "search"}};
    return v;
  }
  void reportScheduled(const PodInfo& pod, const std::string& node, const std::string&) override {
    std::lock_guard lock(mu);
    reports.push_back({pod.key(), "scheduled", node});
  }
  void reportFailure(const PodInfo& pod, const std::string&, std::string_view reason,
                     const std::string& message, const std::string& nominated) override {
    std::lock_guard lock(mu);
    reports.push_back({pod.key(), std::string(reason), message, nominated});
  }
  kube::Expected<void> deletePod(const PodInfo& pod) const override {
    std::lock_guard lock(mu);
    deleted.push_back(pod.key());
    return {};
  }

  mutable std::mutex mu;
  std::map<std::string, std::shared_ptr<const PodInfo>> pods;
  mutable std::vector<std::pair<std::string, std::string>> bindings;
  mutable std::vector<std::string> deleted;
  std::vector<Report> reports;
};

std::shared_ptr<const Node> node(const std::string& name) {
  auto n = std::make_shared<Node>();
  n->name = name;
  n->uid = "uid-" + name;
  n->allocatable.milli_cpu = 4000;
  n->allocatable.memory = 32LL << 30;
  n->allocatable.allowed_pod_number = 110;
  return n;
}

std::shared_ptr<PodInfo> pod(const std::string& name) {
  auto p = std::make_shared<PodInfo>();
  p->namespace_ = "default";
  p->name = name;
  p->uid = "uid-" + name;
  p->scheduler_name = "koord-scheduler";
  p->requests.milli_cpu = 1000;
  p->requests.memory = 1 << 30;
  p->non_zero_requests = p->requests;
  return p;
}

config::SchedulerConfig configWith(const std::string& extenders) {
  auto cfg = config::parseSchedulerConfigText(
      "apiVersion: kubescheduler.config.k8s.io/v1beta3\n"
      "kind: KubeSchedulerConfiguration\n"
      "profiles:\n- schedulerName: koord-scheduler\n"
      "extenders:\n" +
          extenders,
      inTreeRegistry());
  INFO((cfg ? std::string() : cfg.error().message));
  REQUIRE(cfg.has_value());
  return std::move(*cfg);
}

struct Fixture {
  explicit Fixture(const std::string& extenders)
      : scheduler(configWith(extenders), inTreeRegistry(), api, registry) {
    for (const char* n : {"n1", "n2", "n3"})
      scheduler.onNodeAdd(node(n));
  }
  void addPending(std::shared_ptr<const PodInfo> p) {
    {
      std::lock_guard lock(api.mu);
      api.pods[p->key()] = p;
    }
    scheduler.onPendingPodAdd(p);
  }
  /// The binding finishes on another thread when an extender binds.
  void waitForBindings() {
    for (int i = 0; i < 500 && scheduler.bindingsInFlight() > 0; ++i)
      std::this_thread::sleep_for(10ms);
    REQUIRE(scheduler.bindingsInFlight() == 0);
  }

  RecordingApi api;
  metrics::Registry registry;
  Scheduler scheduler;
};

}  // namespace

TEST_CASE("extender loop: the extender's filter decides the node and sees the API's pod",
          "[extender][loop]") {
  FakeExtender server({"/ext/filter"});
  server.answer("/ext/filter",
                R"({"NodeNames":["n2"],"FailedNodes":{"n1":"n1 drained","n3":"n3 drained"}})");
  Fixture f("- urlPrefix: " + server.url("/ext") +
            "\n  filterVerb: filter\n  nodeCacheCapable: true\n");
  f.addPending(pod("web"));
  REQUIRE(f.scheduler.scheduleOne());
  REQUIRE(f.api.bindings.size() == 1);
  CHECK(f.api.bindings[0].second == "n2");
  auto calls = server.callsTo("/ext/filter");
  REQUIRE(calls.size() == 1);
  CHECK(calls[0].body.at("Pod").at("metadata").at("annotations").at("team") == "search");
  CHECK(calls[0].body.at("NodeNames").as_array().size() == 3);
}

TEST_CASE("extender loop: nodes the extender refuses are counted in FailedScheduling",
          "[extender][loop]") {
  FakeExtender server({"/ext/filter"});
  server.answer("/ext/filter", R"({"NodeNames":[],"FailedNodes":{"n1":"no license",)"
                               R"("n2":"no license","n3":"rack full"}})");
  Fixture f("- urlPrefix: " + server.url("/ext") +
            "\n  filterVerb: filter\n  nodeCacheCapable: true\n");
  f.addPending(pod("web"));
  REQUIRE(f.scheduler.scheduleOne());
  CHECK(f.api.bindings.empty());
  REQUIRE(f.api.reports.size() == 1);
  CHECK(f.api.reports[0].what == "Unschedulable");
  CHECK(f.api.reports[0].detail == "0/3 nodes are available: 1 rack full, 2 no license.");
}

TEST_CASE(
    "extender loop: a required extender that fails is a SchedulerError, an ignorable one "
    "is passed over",
    "[extender]") {
  FakeExtender server({"/ext/filter"});
  server.answer("/ext/filter", "{}", 500);
  SECTION("required") {
    Fixture f("- urlPrefix: " + server.url("/ext") + "\n  filterVerb: filter\n");
    f.addPending(pod("web"));
    REQUIRE(f.scheduler.scheduleOne());
    CHECK(f.api.bindings.empty());
    REQUIRE(f.api.reports.size() == 1);
    CHECK(f.api.reports[0].what == "SchedulerError");
    CHECK(f.api.reports[0].detail ==
          "Failed filter with extender at URL " + server.url("/ext") + "/filter, code 500");
  }
  SECTION("ignorable") {
    Fixture f("- urlPrefix: " + server.url("/ext") + "\n  filterVerb: filter\n  ignorable: true\n");
    f.addPending(pod("web"));
    REQUIRE(f.scheduler.scheduleOne());
    CHECK(f.api.bindings.size() == 1);
  }
}

TEST_CASE("extender loop: a heavy extender score wins over the plugins'", "[extender][loop]") {
  FakeExtender server({"/ext/prioritize"});
  server.answer("/ext/prioritize", R"([{"Host":"n3","Score":10}])");
  Fixture f("- urlPrefix: " + server.url("/ext") +
            "\n  prioritizeVerb: prioritize\n  weight: 1000\n");
  // n1 and n2 are emptier, so the plugins alone would pick one of them.
  auto busy = pod("busy");
  busy->node_name = "n3";
  f.scheduler.onAssignedPodAdd(busy);
  for (int i = 0; i < 3; ++i) {
    f.addPending(pod("web-" + std::to_string(i)));
    REQUIRE(f.scheduler.scheduleOne());
  }
  REQUIRE(f.api.bindings.size() == 3);
  for (const auto& b : f.api.bindings)
    CHECK(b.second == "n3");
}

TEST_CASE("extender loop: a binder extender binds instead of DefaultBinder", "[extender][loop]") {
  FakeExtender server({"/ext/bind"});
  Fixture f("- urlPrefix: " + server.url("/ext") + "\n  bindVerb: bind\n");
  f.addPending(pod("web"));
  REQUIRE(f.scheduler.scheduleOne());
  f.waitForBindings();
  CHECK(f.api.bindings.empty());
  auto calls = server.callsTo("/ext/bind");
  REQUIRE(calls.size() == 1);
  CHECK(calls[0].body.at("PodName") == "web");
  CHECK(calls[0].body.at("PodNamespace") == "default");
  CHECK(calls[0].body.at("PodUID") == "uid-web");
  const std::string chosen(calls[0].body.at("Node").as_string());
  REQUIRE(f.api.reports.size() == 1);
  CHECK(f.api.reports[0].what == "scheduled");
  CHECK(f.api.reports[0].detail == chosen);
  CHECK(f.scheduler.cache().isAssumedPod("uid-web"));
}

TEST_CASE("extender loop: a binder extender's Error refuses the binding", "[extender][loop]") {
  FakeExtender server({"/ext/bind"});
  server.answer("/ext/bind", R"({"Error":"quota exceeded"})");
  Fixture f("- urlPrefix: " + server.url("/ext") + "\n  bindVerb: bind\n");
  f.addPending(pod("web"));
  REQUIRE(f.scheduler.scheduleOne());
  f.waitForBindings();
  CHECK(f.api.bindings.empty());
  REQUIRE(f.api.reports.size() == 1);
  CHECK(f.api.reports[0].what == "SchedulerError");
  CHECK(f.api.reports[0].detail == "binding rejected: quota exceeded");
  CHECK_FALSE(f.scheduler.cache().isAssumedPod("uid-web"));
}

TEST_CASE("extender loop: a higher-priority pod preempts only where the extender allows",
          "[extender][loop][preempt]") {
  FakeExtender server({"/ext/preempt"});
  server.answer("/ext/preempt",
                R"({"NodeNameToMetaVictims":{"n2":{"Pods":[{"UID":"uid-low-n2"}]}}})");
  const std::string config =
      "- urlPrefix: " + server.url("/ext") + "\n  preemptVerb: preempt\n  nodeCacheCapable: true\n";
  auto fill = [](Fixture& f) {
    // Each node is full with one low-priority pod, so any node would do for the dry run.
    for (const char* n : {"n1", "n2", "n3"}) {
      auto low = pod(std::string("low-") + n);
      low->node_name = n;
      low->requests.milli_cpu = 4000;
      low->non_zero_requests = low->requests;
      f.scheduler.onAssignedPodAdd(low);
    }
    auto high = pod("high");
    high->priority = 1000;
    f.addPending(high);
  };

  SECTION("the extender's node and victim are preempted") {
    Fixture f(config);
    fill(f);
    REQUIRE(f.scheduler.scheduleOne());
    CHECK(f.api.bindings.empty());
    CHECK(f.api.deleted == std::vector<std::string>{"default/low-n2"});
    REQUIRE(f.api.reports.size() == 1);
    CHECK(f.api.reports[0].what == "Unschedulable");
    CHECK(f.api.reports[0].nominated == "n2");
    // Every candidate was offered, as victims' UIDs.
    auto calls = server.callsTo("/ext/preempt");
    REQUIRE(calls.size() == 1);
    const json::object& offered = calls[0].body.at("NodeNameToMetaVictims").as_object();
    CHECK(offered.size() == 3);
    CHECK(offered.at("n1").at("Pods").at(0).at("UID") == "uid-low-n1");
    CHECK(calls[0].body.at("Pod").at("metadata").at("annotations").at("team") == "search");
  }
  SECTION("a required extender's failure nominates nothing and evicts nothing") {
    server.answer("/ext/preempt", "{}", 500);
    Fixture f(config);
    fill(f);
    REQUIRE(f.scheduler.scheduleOne());
    CHECK(f.api.deleted.empty());
    REQUIRE(f.api.reports.size() == 1);
    CHECK(f.api.reports[0].what == "Unschedulable");
    CHECK(f.api.reports[0].nominated.empty());
  }
  SECTION("an ignorable extender's failure leaves preemption to the plugins") {
    server.answer("/ext/preempt", "{}", 500);
    Fixture f(config + "  ignorable: true\n");
    fill(f);
    REQUIRE(f.scheduler.scheduleOne());
    CHECK(f.api.deleted.size() == 1);
    REQUIRE(f.api.reports.size() == 1);
    CHECK_FALSE(f.api.reports[0].nominated.empty());
  }
}

}  // namespace koord::roles::scheduler
