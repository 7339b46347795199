// RemoveFailedPods: the rules on one Failed pod (a table: age, owner kinds, reasons from the pod
// and its containers), which pods a pass evicts, and the registry entry.
#include "plugins/removefailedpods/failed_pods.h"

#include <boost/json.hpp>

#include <catch2/catch.hpp>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "eviction_pass.h"
#include "fake_handle.h"
#include "plugins/removefailedpods/register.h"
#include "registry_checks.h"

namespace koord::roles::descheduler::failedpods {
namespace {

using std::chrono::seconds;
using testkit::FakeHandle;
using testkit::makeNode;
using testkit::makePod;

const TimePoint kNow = TimePoint{} + std::chrono::hours(24 * 365);

// A Failed pod created `age` before kNow.
std::shared_ptr<Pod> failedPod(std::string name, std::string node, seconds age = seconds(7200)) {
  auto p = makePod(std::move(name), std::move(node));
  p->phase = PodPhase::kFailed;
  p->creation_timestamp = kNow - age;
  return p;
}

TEST_CASE("RemoveFailedPods: the rules on one Failed pod", "[descheduler]") {
  using ArgsEdit = testkit::ArgsEdit<RemoveFailedPodsArgs>;
  using testkit::PodEdit;
  const ArgsEdit defaults = [](RemoveFailedPodsArgs&) {};
  const ArgsEdit oom_only = [](RemoveFailedPodsArgs& a) { a.reasons = {"OOMKilled"}; };
  const std::vector<testkit::RuleCase<RemoveFailedPodsArgs>> cases = {
      {"old enough, any reason", defaults, [](Pod&) {}, {}},
      {"exactly the minimum age",
       defaults,
       [](Pod& p) { p.creation_timestamp = kNow - seconds(3600); },
       {}},
      {"a second too young",
       defaults,
       [](Pod& p) { p.creation_timestamp = kNow - seconds(3599); },
       {"younger than minPodLifetimeSeconds (3600s)"}},
      {"created in the future",
       defaults,
       [](Pod& p) { p.creation_timestamp = kNow + seconds(5); },
       {"younger than minPodLifetimeSeconds (3600s)"}},
      {"no creationTimestamp",
       defaults,
       [](Pod& p) { p.creation_timestamp.reset(); },
       {"younger than minPodLifetimeSeconds (3600s)"}},
      {"a zero minimum takes any age",
       [](RemoveFailedPodsArgs& a) { a.min_pod_lifetime_seconds = 0; },
       [](Pod& p) { p.creation_timestamp = kNow; },
       {}},
      {"an excluded owner kind",
       [](RemoveFailedPodsArgs& a) {
         a.exclude_owner_kinds = {"Job", "ReplicaSet"};
       },
       [](Pod&) {},
       {"owned by a ReplicaSet, an excluded kind"}},
      {"an owner kind not excluded",
       [](RemoveFailedPodsArgs& a) { a.exclude_owner_kinds = {"Job"}; },
       [](Pod&) {},
       {}},
      {"the pod's own reason",
       [](RemoveFailedPodsArgs& a) { a.reasons = {"NodeAffinity"}; },
       [](Pod& p) { p.reason = "NodeAffinity"; },
       {}},
      {"a container's terminated reason",
       oom_only,
       [](Pod& p) {
         p.container_statuses = {{"app", false, 0, "", "OOMKilled"}};
       },
       {}},
      {"a container's waiting reason",
       [](RemoveFailedPodsArgs& a) { a.reasons = {"CreateContainerConfigError"}; },
       [](Pod& p) {
         p.container_statuses = {{"app", false, 0, "CreateContainerConfigError", ""}};
       },
       {}},
      {"an init container's reason without includingInitContainers",
       oom_only,
       [](Pod& p) {
         p.container_statuses = {{"init", true, 0, "", "OOMKilled"}};
       },
       {"none of the listed reasons"}},
      {"an init container's reason with includingInitContainers",
       [](RemoveFailedPodsArgs& a) {
         a.reasons = {"OOMKilled"};
         a.including_init_containers = true;
       },
       [](Pod& p) {
         p.container_statuses = {{"init", true, 0, "", "OOMKilled"}};
       },
       {}},
      {"no listed reason",
       oom_only,
       [](Pod& p) {
         p.reason = "Evicted";
         p.container_statuses = {{"app", false, 0, "", "Error"}};
       },
       {"none of the listed reasons"}},
      {"every rule broken is named",
       [](RemoveFailedPodsArgs& a) {
         a.reasons = {"OOMKilled"};
         a.exclude_owner_kinds = {"ReplicaSet"};
       },
       [](Pod& p) { p.creation_timestamp = kNow; },
       {"younger than minPodLifetimeSeconds (3600s)", "owned by a ReplicaSet, an excluded kind",
        "none of the listed reasons"}},
  };
  for (const auto& c : cases) {
    SECTION(c.name) {
      RemoveFailedPodsArgs args;
      c.args(args);
      auto pod = failedPod("p", "n");
      c.pod(*pod);
      CHECK(failedPodRefusals(*pod, args, kNow) == c.refusals);
    }
  }
}

TEST_CASE("RemoveFailedPods: which pods a pass evicts", "[descheduler]") {
  // node-a: running (Running), young (Failed, 10 min), f1, f2 (Failed, 2 h, f2 in "batch");
  // node-b: f3 (Failed, 2 h, labelled), done (Succeeded).
  const std::vector<testkit::PassCase<RemoveFailedPodsArgs>> cases = {
      {"Failed and old enough", [](auto&, auto&) {}, {"default/f1", "batch/f2", "default/f3"}},
      {"a shorter minimum takes the young one",
       [](auto& a, auto&) { a.min_pod_lifetime_seconds = 60; },
       {"default/young", "default/f1", "batch/f2", "default/f3"}},
      {"excluded namespaces stay",
       [](auto& a, auto&) {
         a.common.namespaces = podfilter::Namespaces{{}, {"batch"}};
       },
       {"default/f1", "default/f3"}},
      {"the labelSelector",
       [](auto& a, auto&) {
         a.common.label_selector = kube::LabelSelector{{{"app", "x"}}, {}};
       },
       {"default/f3"}},
      {"the evictor's filters",
       [](auto&, auto& h) {
         h.filter_fn = [](const Pod& p) { return p.name != "f1"; };
         h.pre_eviction_fn = [](const Pod& p) { return p.name != "f3"; };
       },
       {"batch/f2"}},
      {"the node cap moves on to the next node",
       [](auto&, auto& h) { h.max_per_node = 1; },
       {"default/f1", "default/f3"}},
      {"the total cap ends the pass", [](auto&, auto& h) { h.max_total = 1; }, {"default/f1"}},
  };
  const auto cluster = [](FakeHandle& h) {
    h.snap.now = kNow;
    h.snap.addNode(makeNode("node-a"));
    h.snap.addNode(makeNode("node-b"));
    auto running = makePod("running", "node-a");
    running->creation_timestamp = kNow - seconds(7200);
    h.snap.addPod(running);
    h.snap.addPod(failedPod("young", "node-a", seconds(600)));
    h.snap.addPod(failedPod("f1", "node-a"));
    auto f2 = failedPod("f2", "node-a");
    f2->namespace_ = "batch";
    h.snap.addPod(f2);
    auto f3 = failedPod("f3", "node-b");
    f3->labels = {{"app", "x"}};
    h.snap.addPod(f3);
    auto done = failedPod("done", "node-b");
    done->phase = PodPhase::kSucceeded;
    h.snap.addPod(done);
  };
  testkit::checkPasses<RemoveFailedPods>({cluster, {}, "RemoveFailedPods", ""}, cases);
}

TEST_CASE("RemoveFailedPods: the registry entry builds with the defaults", "[descheduler]") {
  const PluginFactory f = testkit::registeredEntry(registerRemoveFailedPods, "RemoveFailedPods");
  testkit::checkBuildsWithDefaults<DeschedulePlugin>(f, "RemoveFailedPods");
  CHECK_FALSE(testkit::decodeEntryArgs(f, R"({"minPodLifetimeSeconds": -5})").has_value());
}

}  // namespace
}  // namespace koord::roles::descheduler::failedpods
