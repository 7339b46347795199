// The scheduling loop step by step (Scheduler::scheduleOne) over the default v1beta1 plugins,
// with a SchedulerApi that records what the loop reports and answers bindings as told: the
// outcome paths (bound, unschedulable with reasons, binding refused) and what each leaves in the
// cache and the queue. The same loop against a real apiserver is cluster/scheduler.
#include <catch2/catch.hpp>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "config/scheduler_config.h"
#include "framework/plugin_registry.h"
#include "koord/core/metrics.h"
#include "loop_objects.h"
#include "scheduler.h"

namespace koord::roles::scheduler {
namespace {

struct Report {
  std::string pod;
  std::string what;  // "scheduled" or the failure reason
  std::string detail;
};

class RecordingApi final : public SchedulerApi {
 public:
  void bindPod(std::shared_ptr<const PodInfo> pod, const std::string& node,
               ApiCallback done) const override {
    bindings.emplace_back(pod->key(), node);
    if (hold_binding)
      held.push_back(std::move(done));
    else if (refuse_binding)
      done(kube::makeKubeError("Operation cannot be fulfilled on pods/binding: conflict"));
    else
      done({});
  }
  std::shared_ptr<const PodInfo> currentPod(const std::string& key) const override {
    auto it = pods.find(key);
    return it == pods.end() ? nullptr : it->second;
  }
  void reportScheduled(const PodInfo& pod, const std::string& node, const std::string&) override {
    reports.push_back({pod.key(), "scheduled", node});
  }
  void reportFailure(const PodInfo& pod, const std::string&, std::string_view reason,
                     const std::string& message, const std::string&) override {
    reports.push_back({pod.key(), std::string(reason), message});
  }

  std::map<std::string, std::shared_ptr<const PodInfo>> pods;
  mutable std::vector<std::pair<std::string, std::string>> bindings;
  bool refuse_binding = false;
  /// Keeps the answers back (in `held`) until the test gives them.
  bool hold_binding = false;
  mutable std::vector<ApiCallback> held;
  std::vector<Report> reports;
};

std::shared_ptr<const Node> node(const std::string& name, std::int64_t milli_cpu) {
  return testing::loopNode(name, milli_cpu);
}

std::shared_ptr<const PodInfo> pod(const std::string& name, std::int64_t milli_cpu) {
  return testing::loopPod(name, milli_cpu);
}

config::SchedulerConfig defaultConfig() {
  auto cfg = config::parseSchedulerConfigText(
      "apiVersion: kubescheduler.config.k8s.io/v1beta1\n"
      "kind: KubeSchedulerConfiguration\n"
      "profiles:\n- schedulerName: koord-scheduler\n",
      inTreeRegistry());
  REQUIRE(cfg.has_value());
  return std::move(*cfg);
}

struct Fixture {
  RecordingApi api;
  metrics::Registry registry;
  Scheduler scheduler{defaultConfig(), inTreeRegistry(), api, registry};

  void addPending(std::shared_ptr<const PodInfo> p) {
    api.pods[p->key()] = p;
    scheduler.onPendingPodAdd(p);
  }
};

TEST_CASE("scheduler loop: a pod is assumed on the node with room and bound there",
          "[scheduler][loop]") {
  Fixture f;
  f.scheduler.onNodeAdd(node("small", 1000));
  f.scheduler.onNodeAdd(node("big", 4000));
  f.addPending(pod("web", 2000));
  REQUIRE(f.scheduler.queue().sizes().active == 1);

  REQUIRE(f.scheduler.scheduleOne());
  REQUIRE(f.api.bindings.size() == 1);
  CHECK(f.api.bindings[0] == std::make_pair(std::string("default/web"), std::string("big")));
  REQUIRE(f.api.reports.size() == 1);
  CHECK(f.api.reports[0].what == "scheduled");
  CHECK(f.api.reports[0].detail == "big");
  // Bound but not yet confirmed by the informer: still assumed, counted on its node.
  CHECK(f.scheduler.cache().isAssumedPod("uid-web"));
  CHECK(f.scheduler.cache().nodeInfo("big")->requested.milli_cpu == 2000);
  CHECK(f.scheduler.queue().sizes().active == 0);
  CHECK(f.scheduler.bindingsInFlight() == 0);
  CHECK_THAT(
      f.registry.render(),
      Catch::Contains(
          R"(scheduler_schedule_attempts_total{result="scheduled",profile="koord-scheduler"} 1)"));
}

TEST_CASE("scheduler loop: the default profile of every config version builds and binds",
          "[scheduler][loop]") {
  // Each version's defaults list the plugins at the points of its kube-scheduler release
  // (v1beta2+ have NodeAffinity at preFilter, NodeResourcesFit at score): every plugin must
  // implement the points it is listed at, and a plain pod must still be bound.
  for (const char* version : {"v1beta1", "v1beta2", "v1beta3", "v1"}) {
    INFO(version);
    auto cfg = config::parseSchedulerConfigText(
        std::string("apiVersion: kubescheduler.config.k8s.io/") + version +
            "\nkind: KubeSchedulerConfiguration\nprofiles:\n- schedulerName: koord-scheduler\n",
        inTreeRegistry());
    REQUIRE(cfg.has_value());
    RecordingApi api;
    metrics::Registry registry;
    Scheduler scheduler{std::move(*cfg), inTreeRegistry(), api, registry};
    scheduler.onNodeAdd(node("only", 4000));
    auto p = pod("web", 1000);
    api.pods[p->key()] = p;
    scheduler.onPendingPodAdd(p);
    REQUIRE(scheduler.scheduleOne());
    REQUIRE(api.bindings.size() == 1);
    CHECK(api.bindings[0].second == "only");
  }
}

TEST_CASE("scheduler loop: assumed room is not given twice before the informer confirms",
          "[scheduler][loop]") {
  Fixture f;
  f.scheduler.onNodeAdd(node("only", 3000));
  f.addPending(pod("a", 2000));
  f.addPending(pod("b", 2000));
  REQUIRE(f.scheduler.scheduleOne());
  REQUIRE(f.scheduler.scheduleOne());
  REQUIRE(f.api.bindings.size() == 1);
  REQUIRE(f.api.reports.size() == 2);
  CHECK(f.api.reports[1].what == "Unschedulable");
  CHECK(f.api.reports[1].detail == "0/1 nodes are available: 1 Insufficient cpu.");
  // The second pod waits in unschedulableQ for a cluster event.
  CHECK(f.scheduler.queue().sizes().unschedulable == 1);
  // The bound pod's own informer event confirms it; deleting it frees the room and moves the
  // waiting pod back to be retried.
  auto bound = std::make_shared<PodInfo>(*f.api.pods["default/a"]);
  bound->node_name = f.api.bindings[0].second;
  f.scheduler.onAssignedPodAdd(bound);
  CHECK_FALSE(f.scheduler.cache().isAssumedPod("uid-a"));
  f.scheduler.onAssignedPodDelete(*bound);
  CHECK(f.scheduler.queue().sizes().unschedulable == 0);
}

TEST_CASE("scheduler loop: a refused binding forgets the assumed pod and requeues it",
          "[scheduler][loop]") {
  Fixture f;
  f.api.refuse_binding = true;
  f.scheduler.onNodeAdd(node("n", 4000));
  f.addPending(pod("web", 1000));
  REQUIRE(f.scheduler.scheduleOne());
  REQUIRE(f.api.bindings.size() == 1);
  REQUIRE(f.api.reports.size() == 1);
  CHECK(f.api.reports[0].what == "SchedulerError");
  CHECK_THAT(f.api.reports[0].detail, Catch::StartsWith("binding rejected: "));
  CHECK_FALSE(f.scheduler.cache().isAssumedPod("uid-web"));
  CHECK(f.scheduler.cache().nodeInfo("n")->requested.milli_cpu == 0);
  // Retried after its backoff, not left in unschedulableQ until some event or the minute's
  // flush.
  const auto sizes = f.scheduler.queue().sizes();
  CHECK(sizes.backoff == 1);
  CHECK(sizes.active + sizes.unschedulable == 0);
}

TEST_CASE("scheduler loop: a refused binding frees its room for the pods it kept out",
          "[scheduler][loop]") {
  Fixture f;
  f.api.hold_binding = true;
  f.scheduler.onNodeAdd(node("only", 3000));
  f.addPending(pod("a", 2000));
  f.addPending(pod("b", 2000));
  REQUIRE(f.scheduler.scheduleOne());
  // a's binding is in flight: its room is taken, so b is refused and waits for an event.
  REQUIRE(f.scheduler.scheduleOne());
  REQUIRE(f.api.held.size() == 1);
  REQUIRE(f.api.reports.size() == 1);
  CHECK(f.api.reports[0].what == "Unschedulable");
  CHECK(f.scheduler.queue().sizes().unschedulable == 1);

  f.api.held[0](kube::makeKubeError("admission webhook denied the request"));
  CHECK(f.scheduler.cache().nodeInfo("only")->requested.milli_cpu == 0);
  // Both try again once their backoff is over.
  const auto sizes = f.scheduler.queue().sizes();
  CHECK(sizes.unschedulable == 0);
  CHECK(sizes.backoff == 2);
}

TEST_CASE("scheduler loop: a pod deleted meanwhile is neither requeued nor reported",
          "[scheduler][loop]") {
  Fixture f;
  f.scheduler.onNodeAdd(node("n", 500));
  f.addPending(pod("web", 1000));
  f.api.pods.clear();  // the informer saw it go while the cycle ran
  REQUIRE(f.scheduler.scheduleOne());
  CHECK(f.api.reports.empty());
  const auto sizes = f.scheduler.queue().sizes();
  CHECK(sizes.active + sizes.backoff + sizes.unschedulable == 0);
}

TEST_CASE("scheduler loop: only its profiles' pods are its own", "[scheduler][loop]") {
  Fixture f;
  CHECK(f.scheduler.responsibleFor("koord-scheduler"));
  CHECK_FALSE(f.scheduler.responsibleFor("default-scheduler"));
}

}  // namespace
}  // namespace koord::roles::scheduler
