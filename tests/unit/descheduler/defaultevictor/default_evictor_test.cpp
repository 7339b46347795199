// DefaultEvictor: which pods the filter lets go (a table of pods and args to the reasons it
// gives), the priority threshold, nodeFit's other node, the Evict side and the registry entry.
#include "plugins/defaultevictor/default_evictor.h"

#include <boost/json.hpp>

#include <catch2/catch.hpp>

#include <functional>
#include <string>
#include <vector>

#include "eviction_pass.h"
#include "fake_handle.h"
#include "plugins/defaultevictor/register.h"
#include "registry_checks.h"

namespace koord::roles::descheduler::defaultevictor {
namespace {

using testkit::FakeHandle;
using testkit::makeNode;
using testkit::makePod;

Expected<std::int32_t> noLookup(std::string_view name) {
  return invalidArgument("no PriorityClass " + std::string(name));
}

DefaultEvictor build(const DefaultEvictorArgs& args, FakeHandle& h) {
  auto threshold = thresholdPriority(args, noLookup);
  REQUIRE(threshold.has_value());
  return DefaultEvictor(std::make_shared<const DefaultEvictorArgs>(args), h, *threshold);
}

TEST_CASE("DefaultEvictor: filter allows or refuses pods, naming every rule broken",
          "[descheduler]") {
  using ArgsEdit = testkit::ArgsEdit<DefaultEvictorArgs>;
  using testkit::PodEdit;
  const ArgsEdit defaults = [](DefaultEvictorArgs&) {};
  const PodEdit as_is = [](Pod&) {};
  const PodEdit bare = [](Pod& p) { p.owner_refs.clear(); };
  const PodEdit bare_failed = [](Pod& p) {
    p.owner_refs.clear();
    p.phase = PodPhase::kFailed;
  };
  const ArgsEdit threshold_10000 = [](DefaultEvictorArgs& a) {
    a.priority_threshold = PriorityThreshold{10000, ""};
  };
  const ArgsEdit web_only = [](DefaultEvictorArgs& a) {
    a.label_selector = kube::LabelSelector{{{"app", "web"}}, {}};
  };
  const std::vector<testkit::RuleCase<DefaultEvictorArgs>> cases = {
      {"a ReplicaSet pod may go", defaults, as_is, {}},
      {"a DaemonSet pod is kept",
       defaults,
       [](Pod& p) {
         p.owner_refs = {{"apps/v1", "DaemonSet", "ds", "uid-ds", true}};
       },
       {"a DaemonSet pod"}},
      {"a DaemonSet owner that is not the controller still counts",
       defaults,
       [](Pod& p) {
         p.owner_refs.push_back({"apps/v1", "DaemonSet", "ds", "uid-ds", false});
       },
       {"a DaemonSet pod"}},
      {"a mirror pod is kept", defaults, [](Pod& p) { p.mirror = true; }, {"a mirror pod"}},
      {"a static pod is kept", defaults, [](Pod& p) { p.static_pod = true; }, {"a static pod"}},
      {"a pod being deleted is kept",
       defaults,
       [](Pod& p) { p.deletion_timestamp = TimePoint{}; },
       {"being deleted"}},
      {"a bare pod is kept", defaults, bare, {"no owner"}},
      {"a failed bare pod is kept without evictFailedBarePods",
       defaults,
       bare_failed,
       {"no owner"}},
      {"a failed bare pod may go with evictFailedBarePods",
       [](DefaultEvictorArgs& a) { a.evict_failed_bare_pods = true; },
       bare_failed,
       {}},
      {"a running bare pod is kept even with evictFailedBarePods",
       [](DefaultEvictorArgs& a) { a.evict_failed_bare_pods = true; },
       bare,
       {"no owner and not Failed"}},
      {"a system-critical pod is kept",
       defaults,
       [](Pod& p) { p.priority = kSystemCriticalPriority; },
       {"system-critical priority"}},
      {"just below system-critical may go",
       defaults,
       [](Pod& p) { p.priority = kSystemCriticalPriority - 1; },
       {}},
      {"a system-critical pod may go with evictSystemCriticalPods",
       [](DefaultEvictorArgs& a) { a.evict_system_critical_pods = true; },
       [](Pod& p) { p.priority = kSystemCriticalPriority + 1000; },
       {}},
      {"at the threshold is kept",
       threshold_10000,
       [](Pod& p) { p.priority = 10000; },
       {"priority 10000 at or above the threshold 10000"}},
      {"below the threshold may go", threshold_10000, [](Pod& p) { p.priority = 9999; }, {}},
      {"no priority at all passes the threshold", threshold_10000, as_is, {}},
      {"evictSystemCriticalPods turns the threshold off",
       [](DefaultEvictorArgs& a) {
         a.priority_threshold = PriorityThreshold{10000, ""};
         a.evict_system_critical_pods = true;
       },
       [](Pod& p) { p.priority = 50000; },
       {}},
      {"local storage is kept",
       defaults,
       [](Pod& p) { p.has_local_storage = true; },
       {"local storage (emptyDir or hostPath) and evictLocalStoragePods is off"}},
      {"local storage may go with evictLocalStoragePods",
       [](DefaultEvictorArgs& a) { a.evict_local_storage_pods = true; },
       [](Pod& p) { p.has_local_storage = true; },
       {}},
      {"a PVC pod may go by default", defaults, [](Pod& p) { p.has_pvc = true; }, {}},
      {"a PVC pod is kept with ignorePvcPods",
       [](DefaultEvictorArgs& a) { a.ignore_pvc_pods = true; },
       [](Pod& p) { p.has_pvc = true; },
       {"a PersistentVolumeClaim and ignorePvcPods is on"}},
      {"labels outside the labelSelector are kept",
       web_only,
       [](Pod& p) {
         p.labels = {{"app", "db"}};
       },
       {"labels outside the labelSelector"}},
      {"labels inside the labelSelector may go",
       web_only,
       [](Pod& p) {
         p.labels = {{"app", "web"}, {"tier", "front"}};
       },
       {}},
      {"an empty labelSelector selects every pod",
       [](DefaultEvictorArgs& a) { a.label_selector = kube::LabelSelector{}; },
       as_is,
       {}},
      {"the evict annotation lets any pod go",
       defaults,
       [](Pod& p) {
         p.owner_refs = {{"apps/v1", "DaemonSet", "ds", "uid-ds", true}};
         p.mirror = true;
         p.priority = kSystemCriticalPriority;
         p.annotations[std::string(kEvictPodAnnotation)] = "";
       },
       {}},
      {"every rule broken is named, in order",
       defaults,
       [](Pod& p) {
         p.owner_refs.clear();
         p.static_pod = true;
         p.mirror = true;
         p.has_local_storage = true;
       },
       {"a mirror pod", "a static pod", "no owner",
        "local storage (emptyDir or hostPath) and evictLocalStoragePods is off"}},
  };
  for (const auto& c : cases) {
    SECTION(c.name) {
      FakeHandle h;
      DefaultEvictorArgs args;
      c.args(args);
      DefaultEvictor ev = build(args, h);
      auto pod = makePod("p", "node-a");
      c.pod(*pod);
      CHECK(ev.refusals(*pod) == c.refusals);
      CHECK(ev.filter(*pod) == c.refusals.empty());
    }
  }
}

TEST_CASE("DefaultEvictor: the priority threshold from a value or a PriorityClass",
          "[descheduler]") {
  auto lookup = [](std::string_view name) -> Expected<std::int32_t> {
    if (name == "koord-prod")
      return 9000;
    if (name == "huge")
      return kSystemCriticalPriority + 1;
    return invalidArgument("priorityThreshold.name: PriorityClass not found");
  };
  auto threshold = [&](std::optional<PriorityThreshold> t, bool critical = false) {
    DefaultEvictorArgs a;
    a.priority_threshold = std::move(t);
    a.evict_system_critical_pods = critical;
    return thresholdPriority(a, lookup);
  };
  CHECK(threshold(std::nullopt).value() == std::nullopt);
  CHECK(threshold(PriorityThreshold{}).value() == std::nullopt);
  CHECK(threshold(PriorityThreshold{5000, ""}).value() == 5000);
  CHECK(threshold(PriorityThreshold{std::nullopt, "koord-prod"}).value() == 9000);
  // The value wins when both are set (Koordinator does not run upstream's validation).
  CHECK(threshold(PriorityThreshold{5000, "koord-prod"}).value() == 5000);
  CHECK(threshold(PriorityThreshold{kSystemCriticalPriority, ""}).value() ==
        kSystemCriticalPriority);
  CHECK(threshold(PriorityThreshold{5000, ""}, true).value() == std::nullopt);

  auto missing = threshold(PriorityThreshold{std::nullopt, "nope"});
  REQUIRE_FALSE(missing.has_value());
  CHECK_THAT(missing.error().message, Catch::Contains("priorityThreshold.name"));
  for (const auto& t : {PriorityThreshold{kSystemCriticalPriority + 1, ""},
                        PriorityThreshold{std::nullopt, "huge"}}) {
    auto above = threshold(t);
    REQUIRE_FALSE(above.has_value());
    CHECK_THAT(above.error().message, Catch::Contains("priorityThreshold"));
  }
}

TEST_CASE("DefaultEvictor: nodeFit lets a pod go only where another node would take it",
          "[descheduler]") {
  struct Case {
    const char* name;
    bool node_fit;
    std::string node_selector;
    std::function<void(Node& b, Node& c)> nodes;
    bool allowed;
  };
  const std::vector<Case> cases = {
      {"without nodeFit any pod may go", false, "",
       [](Node& b, Node& c) {
         b.unschedulable = true;
         c.unschedulable = true;
       },
       true},
      {"another node with room", true, "", [](Node&, Node&) {}, true},
      {"the other nodes are unschedulable", true, "",
       [](Node& b, Node& c) {
         b.unschedulable = true;
         c.unschedulable = true;
       },
       false},
      {"the other nodes are not Ready", true, "",
       [](Node& b, Node& c) {
         b.ready = false;
         c.ready = false;
       },
       false},
      {"the other nodes are too small", true, "",
       [](Node& b, Node& c) {
         b.allocatable["cpu"] = 50;
         c.allocatable["memory"] = 1 << 20;
       },
       false},
      {"nodeSelector leaves only a tainted node", true, "pool=spare",
       [](Node& b, Node& c) {
         b.labels["pool"] = "general";
         c.labels["pool"] = "spare";
         c.taints.push_back({"dedicated", "gpu", kube::TaintEffect::kNoSchedule});
       },
       false},
      {"nodeSelector selects a node with room", true, "pool=spare",
       [](Node& b, Node& c) {
         b.unschedulable = true;
         c.labels["pool"] = "spare";
       },
       true},
  };
  for (const auto& c : cases) {
    SECTION(c.name) {
      FakeHandle h;
      auto a = makeNode("node-a");
      auto b = makeNode("node-b");
      auto n3 = makeNode("node-c");
      c.nodes(*b, *n3);
      for (const auto& n : {a, b, n3})
        h.snap.addNode(n);
      auto pod = makePod("p", "node-a", 200);
      h.snap.addPod(pod);
      DefaultEvictorArgs args;
      args.node_fit = c.node_fit;
      args.node_selector = c.node_selector;
      DefaultEvictor ev = build(args, h);
      CHECK(ev.preEvictionFilter(*pod) == c.allowed);
    }
  }
}

TEST_CASE("DefaultEvictor: its own node never counts as elsewhere", "[descheduler]") {
  FakeHandle h;
  h.snap.addNode(makeNode("node-a"));
  auto pod = makePod("p", "node-a");
  h.snap.addPod(pod);
  DefaultEvictorArgs args;
  args.node_fit = true;
  CHECK_FALSE(build(args, h).preEvictionFilter(*pod));
}

TEST_CASE("DefaultEvictor: evict goes to the API side with the options", "[descheduler]") {
  FakeHandle h;
  DefaultEvictor ev = build(DefaultEvictorArgs{}, h);
  auto pod = makePod("p", "node-a");
  CHECK(ev.evict(*pod, {"PodLifeTime", "too old"}));
  CHECK(h.api.evicted == std::vector<std::string>{"default/p"});
  h.api.answer = false;
  CHECK_FALSE(ev.evict(*pod, {"PodLifeTime", "too old"}));
}

TEST_CASE("DefaultEvictor: the registry entry decodes, builds and refuses bad thresholds",
          "[descheduler]") {
  const PluginFactory f = testkit::registeredEntry(registerDefaultEvictor, "DefaultEvictor");
  FakeHandle h;
  testkit::checkBuildsWithDefaults<FilterPlugin, EvictPlugin>(f, "DefaultEvictor");

  auto named_args = testkit::decodeEntryArgs(f, R"({"priorityThreshold":{"name":"x"}})");
  REQUIRE(named_args.has_value());
  auto no_cluster = f.create(*named_args, h);
  REQUIRE_FALSE(no_cluster.has_value());
  CHECK_THAT(no_cluster.error().message, Catch::Contains("priorityThreshold.name"));

  auto above_args = testkit::decodeEntryArgs(f, R"({"priorityThreshold":{"value":2000000001}})");
  REQUIRE(above_args.has_value());
  CHECK_FALSE(f.create(*above_args, h).has_value());
}

}  // namespace
}  // namespace koord::roles::descheduler::defaultevictor
