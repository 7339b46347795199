#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "fixture.h"
#include "queue/scheduling_queue.h"

namespace koord::roles::scheduler::queue_testing {
namespace {

kube::Selector selector(std::string_view text) {
  auto s = kube::Selector::parse(text);
  REQUIRE(s.has_value());
  return *s;
}

PodAffinityTerm term(std::string_view labels, std::vector<std::string> namespaces = {}) {
  return PodAffinityTerm{.label_selector = selector(labels),
                         .namespaces = std::move(namespaces),
                         .topology_key = "kubernetes.io/hostname"};
}

TEST_CASE("a bound pod moves the unschedulable pods whose required affinity it matches",
          "[scheduler][queue][affinity]") {
  struct Case {
    std::string name;
    std::function<void(PodInfo&)> waiting;  // the unschedulable pod's affinity
    bool want_moved;
  };
  const std::vector<Case> cases = {
      {"required term matches labels in its own namespace",
       [](PodInfo& p) { p.pod_affinity.required.push_back(term("app=web")); }, true},
      {"second term matches",
       [](PodInfo& p) {
         p.pod_affinity.required.push_back(term("app=db"));
         p.pod_affinity.required.push_back(term("tier in (frontend)"));
       },
       true},
      {"term names the bound pod's namespace",
       [](PodInfo& p) {
         p.pod_affinity.required.push_back(term("app=web", {"x", "web-ns"}));
       },
       true},
      {"labels do not match", [](PodInfo& p) { p.pod_affinity.required.push_back(term("app=db")); },
       false},
      {"another namespace",
       [](PodInfo& p) { p.pod_affinity.required.push_back(term("app=web", {"other"})); }, false},
      {"preferred affinity only",
       [](PodInfo& p) {
         p.pod_affinity.preferred.push_back({.weight = 10, .term = term("app=web")});
       },
       false},
      {"anti-affinity only",
       [](PodInfo& p) { p.pod_anti_affinity.required.push_back(term("app=web")); }, false},
      {"no affinity", [](PodInfo&) {}, false},
      {"nil selector matches nothing",
       [](PodInfo& p) {
         p.pod_affinity.required.push_back(
             PodAffinityTerm{.label_selector = kube::Selector::nothing(),
                             .namespaces = {},
                             .topology_key = "kubernetes.io/hostname"});
       },
       false},
  };
  auto bound = makePod("bound", 0, "web-ns");
  bound->labels = {{"app", "web"}, {"tier", "frontend"}};
  bound->node_name = "node-1";

  for (bool update : {false, true}) {
    for (const auto& c : cases) {
      INFO((update ? "assignedPodUpdated: " : "assignedPodAdded: ") << c.name);
      FakeNow clock;
      std::vector<std::string> events;
      SchedulingQueueOptions options;
      options.on_incoming = [&](std::string_view, QueueEvent e) {
        events.emplace_back(toString(e));
      };
      auto q = makeQueue(clock, options);
      auto waiting = makePod("waiting", 0, "web-ns");
      c.waiting(*waiting);
      makeUnschedulable(*q, waiting, 1);
      clock.advance(2s);  // backoff over: a moved pod goes straight to activeQ
      events.clear();
      if (update) {
        q->assignedPodUpdated(*bound);
      } else {
        q->assignedPodAdded(*bound);
      }
      CHECK(q->sizes().active == (c.want_moved ? 1u : 0u));
      CHECK(q->sizes().unschedulable == (c.want_moved ? 0u : 1u));
      if (c.want_moved) {
        CHECK(events == std::vector<std::string>{update ? "AssignedPodUpdate" : "AssignedPodAdd"});
      } else {
        CHECK(events.empty());
      }
    }
  }
}

TEST_CASE("an affinity move respects the remaining backoff and leaves other pods alone",
          "[scheduler][queue][affinity]") {
  FakeNow clock;
  auto q = makeQueue(clock);
  auto fresh = makePod("fresh");
  fresh->pod_affinity.required.push_back(term("app=web"));
  auto unrelated = makePod("unrelated");
  makeUnschedulable(*q, fresh, 3);  // 4 s backoff
  makeUnschedulable(*q, unrelated, 1);
  auto bound = makePod("bound");
  bound->labels = {{"app", "web"}};
  q->assignedPodAdded(*bound);
  CHECK(q->sizes().backoff == 1);
  CHECK(q->sizes().unschedulable == 1);
  CHECK(q->sizes().active == 0);
}

TEST_CASE("an assigned pod event is a move request even when it moves nothing",
          "[scheduler][queue][affinity]") {
  FakeNow clock;
  auto q = makeQueue(clock);
  REQUIRE(q->add(makePod("p")).has_value());
  QueuedPodInfo p = popNow(*q);
  q->assignedPodAdded(*makePod("bound"));  // while p is being scheduled
  REQUIRE(q->addUnschedulableIfNotPresent(p, q->schedulingCycle()).has_value());
  CHECK(q->sizes().backoff == 1);
}

}  // namespace
}  // namespace koord::roles::scheduler::queue_testing
