// PodLifeTime: ages against the snapshot's clock, states, which pods a pass evicts and in what
// order (oldest first across nodes, under the caps), and the registry entry.
#include "plugins/podlifetime/pod_lifetime.h"

#include <boost/json.hpp>

#include <catch2/catch.hpp>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "eviction_pass.h"
#include "fake_handle.h"
#include "plugins/podlifetime/register.h"
#include "registry_checks.h"

namespace koord::roles::descheduler::podlifetime {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using testkit::FakeHandle;
using testkit::makeNode;
using testkit::makePod;

const TimePoint kNow = TimePoint{} + std::chrono::hours(24 * 365);

std::shared_ptr<Pod> agedPod(std::string name, std::string node, seconds age) {
  auto p = makePod(std::move(name), std::move(node));
  p->creation_timestamp = kNow - age;
  return p;
}

TEST_CASE("PodLifeTime: age in whole seconds against the snapshot's clock", "[descheduler]") {
  auto p = makePod("p", "n");
  CHECK_FALSE(ageSeconds(*p, kNow));
  p->creation_timestamp = kNow - seconds(90) - milliseconds(999);
  CHECK(ageSeconds(*p, kNow) == 90u);
  p->creation_timestamp = kNow + seconds(30);
  CHECK(ageSeconds(*p, kNow) == 0u);
}

TEST_CASE("PodLifeTime: states match the phase or a container's waiting reason", "[descheduler]") {
  auto pending = makePod("p", "n");
  pending->phase = PodPhase::kPending;
  pending->container_statuses = {{"init", true, 0, "PodInitializing", ""},
                                 {"app", false, 0, "ContainerCreating", ""}};
  CHECK(inStates(*pending, {}));
  CHECK(inStates(*pending, {"Pending"}));
  CHECK(inStates(*pending, {"ContainerCreating"}));
  CHECK_FALSE(inStates(*pending, {"Running"}));
  // Init containers' reasons do not count, as upstream's states filter.
  CHECK_FALSE(inStates(*pending, {"PodInitializing"}));
  CHECK(inStates(*makePod("r", "n"), {"Running"}));
}

TEST_CASE("PodLifeTime: which pods a pass evicts, oldest first", "[descheduler]") {
  // Limit 3600 s. node-a: a-old (5 h), a-limit (exactly 1 h), a-new (10 min), a-mid (3 h,
  // Pending, ContainerCreating); node-b: b-older (6 h, namespace "batch"), b-old (4 h,
  // app=web), b-none (no creationTimestamp).
  const std::vector<testkit::PassCase<PodLifeTimeArgs>> cases = {
      {"older than the limit, oldest first across nodes",
       [](auto&, auto&) {},
       {"batch/b-older", "default/a-old", "default/b-old", "default/a-mid"}},
      {"a lower limit takes the pod at the old limit",
       [](auto& a, auto&) { a.max_pod_lifetime_seconds = 3599; },
       {"batch/b-older", "default/a-old", "default/b-old", "default/a-mid", "default/a-limit"}},
      {"states: Pending pods only",
       [](auto& a, auto&) { a.states = {"Pending"}; },
       {"default/a-mid"}},
      {"states: a waiting reason",
       [](auto& a, auto&) {
         a.states = {"ContainerCreating", "PodInitializing"};
       },
       {"default/a-mid"}},
      {"excluded namespaces stay",
       [](auto& a, auto&) {
         a.common.namespaces = podfilter::Namespaces{{}, {"batch"}};
       },
       {"default/a-old", "default/b-old", "default/a-mid"}},
      {"the labelSelector",
       [](auto& a, auto&) {
         a.common.label_selector = kube::LabelSelector{{{"app", "web"}}, {}};
       },
       {"default/b-old"}},
      {"the evictor's filters",
       [](auto&, auto& h) {
         h.filter_fn = [](const Pod& p) { return p.name != "b-older"; };
         h.pre_eviction_fn = [](const Pod& p) { return p.name != "a-mid"; };
       },
       {"default/a-old", "default/b-old"}},
      {"a node at its cap is skipped, the others go on",
       [](auto&, auto& h) { h.max_per_node = 1; },
       {"batch/b-older", "default/a-old"}},
      {"the total cap ends the pass with the oldest evicted",
       [](auto&, auto& h) { h.max_total = 2; },
       {"batch/b-older", "default/a-old"}},
  };
  const auto cluster = [](FakeHandle& h) {
    h.snap.now = kNow;
    h.snap.addNode(makeNode("node-a"));
    h.snap.addNode(makeNode("node-b"));
    h.snap.addPod(agedPod("a-old", "node-a", seconds(5 * 3600)));
    h.snap.addPod(agedPod("a-limit", "node-a", seconds(3600)));
    h.snap.addPod(agedPod("a-new", "node-a", seconds(600)));
    auto mid = agedPod("a-mid", "node-a", seconds(3 * 3600));
    mid->phase = PodPhase::kPending;
    mid->container_statuses = {{"app", false, 0, "ContainerCreating", ""}};
    h.snap.addPod(mid);
    auto older = agedPod("b-older", "node-b", seconds(6 * 3600));
    older->namespace_ = "batch";
    h.snap.addPod(older);
    auto old = agedPod("b-old", "node-b", seconds(4 * 3600));
    old->labels = {{"app", "web"}};
    h.snap.addPod(old);
    h.snap.addPod(makePod("b-none", "node-b"));
  };
  PodLifeTimeArgs args;
  args.max_pod_lifetime_seconds = 3600;
  testkit::checkPasses<PodLifeTime>({cluster, args, "PodLifeTime", "maxPodLifeTimeSeconds"}, cases);
}

TEST_CASE("PodLifeTime: the registry entry needs maxPodLifeTimeSeconds", "[descheduler]") {
  testkit::checkNeedsArgs<DeschedulePlugin>(
      testkit::registeredEntry(registerPodLifeTime, "PodLifeTime"),
      R"({"maxPodLifeTimeSeconds": 600})", "PodLifeTime");
}

}  // namespace
}  // namespace koord::roles::descheduler::podlifetime
