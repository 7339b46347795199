// RemovePodsHavingTooManyRestarts: which pods a pass evicts (a table over restarts, init
// containers, states, namespaces, labels, the evictor's filters and the caps), and the registry.
#include "plugins/removepodshavingtoomanyrestarts/too_many_restarts.h"

#include <boost/json.hpp>

#include <catch2/catch.hpp>

#include <functional>
#include <string>
#include <vector>

#include "eviction_pass.h"
#include "fake_handle.h"
#include "plugins/removepodshavingtoomanyrestarts/register.h"
#include "registry_checks.h"

namespace koord::roles::descheduler::toomanyrestarts {
namespace {

using testkit::FakeHandle;
using testkit::makeNode;
using testkit::makePod;

// A pod with two regular containers restarting `a` and `b` times and an init container `init`.
std::shared_ptr<Pod> restartingPod(std::string name, std::string node, std::int32_t a,
                                   std::int32_t b = 0, std::int32_t init = 0) {
  auto p = makePod(std::move(name), std::move(node));
  p->container_statuses = {
      {"init", true, init, "", ""}, {"app", false, a, "", ""}, {"sidecar", false, b, "", ""}};
  return p;
}

TEST_CASE("RemovePodsHavingTooManyRestarts: restarts summed, init containers when asked",
          "[descheduler]") {
  auto p = restartingPod("p", "n", 2, 3, 7);
  CHECK(totalRestarts(*p, false) == 5);
  CHECK(totalRestarts(*p, true) == 12);
  CHECK(totalRestarts(*makePod("none", "n"), true) == 0);
}

TEST_CASE("RemovePodsHavingTooManyRestarts: states match the phase or a waiting reason",
          "[descheduler]") {
  auto running = makePod("r", "n");
  auto crashing = makePod("c", "n");
  crashing->phase = PodPhase::kPending;
  crashing->container_statuses = {{"app", false, 9, "CrashLoopBackOff", ""}};
  auto init_crashing = makePod("i", "n");
  init_crashing->phase = PodPhase::kPending;
  init_crashing->container_statuses = {{"init", true, 9, "CrashLoopBackOff", ""}};
  const std::vector<std::string> none, run{"Running"}, crash{"CrashLoopBackOff"};
  CHECK(inStates(*running, none));
  CHECK(inStates(*running, run));
  CHECK_FALSE(inStates(*running, crash));
  CHECK(inStates(*crashing, crash));
  CHECK_FALSE(inStates(*crashing, run));
  // Only regular containers' waiting reasons count, as upstream's states filter.
  CHECK_FALSE(inStates(*init_crashing, crash));
}

TEST_CASE("RemovePodsHavingTooManyRestarts: which pods a pass evicts", "[descheduler]") {
  // node-a: hot (3+1), warm (2), init-heavy (0 + init 6), other-ns (5, namespace "batch");
  // node-b: cold (0), hot-b (4).
  const std::vector<testkit::PassCase<RemovePodsHavingTooManyRestartsArgs>> cases = {
      {"at or over the threshold, node by node",
       [](auto&, auto&) {},
       {"default/hot", "batch/other-ns", "default/hot-b"}},
      {"init containers count when asked",
       [](auto& a, auto&) { a.including_init_containers = true; },
       {"default/hot", "default/init-heavy", "batch/other-ns", "default/hot-b"}},
      {"a higher threshold",
       [](auto& a, auto&) { a.pod_restart_threshold = 5; },
       {"batch/other-ns"}},
      {"excluded namespaces stay",
       [](auto& a, auto&) {
         a.common.namespaces = podfilter::Namespaces{{}, {"batch"}};
       },
       {"default/hot", "default/hot-b"}},
      {"only included namespaces",
       [](auto& a, auto&) {
         a.common.namespaces = podfilter::Namespaces{{"batch"}, {}};
       },
       {"batch/other-ns"}},
      {"the labelSelector",
       [](auto& a, auto&) {
         a.common.label_selector = kube::LabelSelector{{{"tier", "b"}}, {}};
       },
       {"default/hot-b"}},
      {"the evictor's filter refuses",
       [](auto&, auto& h) { h.filter_fn = [](const Pod& p) { return p.name != "hot"; }; },
       {"batch/other-ns", "default/hot-b"}},
      {"the evictor's preEvictionFilter refuses",
       [](auto&, auto& h) {
         h.pre_eviction_fn = [](const Pod& p) { return p.namespace_ != "batch"; };
       },
       {"default/hot", "default/hot-b"}},
      {"the node cap moves on to the next node",
       [](auto&, auto& h) { h.max_per_node = 1; },
       {"default/hot", "default/hot-b"}},
      {"the total cap ends the pass",
       [](auto&, auto& h) { h.max_total = 2; },
       {"default/hot", "batch/other-ns"}},
      {"states: only crash-looping pods",
       [](auto& a, auto&) { a.states = {"CrashLoopBackOff"}; },
       {"default/hot-b"}},
  };
  const auto cluster = [](FakeHandle& h) {
    h.snap.addNode(makeNode("node-a"));
    h.snap.addNode(makeNode("node-b"));
    h.snap.addPod(restartingPod("hot", "node-a", 3, 1));
    h.snap.addPod(restartingPod("warm", "node-a", 2));
    h.snap.addPod(restartingPod("init-heavy", "node-a", 0, 0, 6));
    auto other = restartingPod("other-ns", "node-a", 5);
    other->namespace_ = "batch";
    h.snap.addPod(other);
    h.snap.addPod(restartingPod("cold", "node-b", 0));
    auto hot_b = restartingPod("hot-b", "node-b", 4);
    hot_b->labels = {{"tier", "b"}};
    hot_b->container_statuses[1].waiting_reason = "CrashLoopBackOff";
    h.snap.addPod(hot_b);
  };
  RemovePodsHavingTooManyRestartsArgs args;
  args.pod_restart_threshold = 4;
  testkit::checkPasses<RemovePodsHavingTooManyRestarts>(
      {cluster, args, "RemovePodsHavingTooManyRestarts", "restarted"}, cases);
}

TEST_CASE("RemovePodsHavingTooManyRestarts: only the nodes it is given", "[descheduler]") {
  FakeHandle h;
  h.snap.addNode(makeNode("node-a"));
  auto b = makeNode("node-b");
  h.snap.addNode(b);
  h.snap.addPod(restartingPod("a", "node-a", 9));
  h.snap.addPod(restartingPod("b", "node-b", 9));
  RemovePodsHavingTooManyRestartsArgs args;
  args.pod_restart_threshold = 1;
  RemovePodsHavingTooManyRestarts plugin(
      std::make_shared<const RemovePodsHavingTooManyRestartsArgs>(args), h, {});
  REQUIRE(plugin.deschedule({b.get()}).has_value());
  CHECK(h.evicted == std::vector<std::string>{"default/b"});
}

TEST_CASE("RemovePodsHavingTooManyRestarts: the registry entry", "[descheduler]") {
  testkit::checkNeedsArgs<DeschedulePlugin>(
      testkit::registeredEntry(registerRemovePodsHavingTooManyRestarts,
                               "RemovePodsHavingTooManyRestarts"),
      R"({"podRestartThreshold": 3})", "RemovePodsHavingTooManyRestarts");
}

}  // namespace
}  // namespace koord::roles::descheduler::toomanyrestarts
