// How a reservation's room is counted on its node (NodeInfo) and in the scheduler cache.
#include <boost/json.hpp>

#include <catch2/catch.hpp>

#include "catch_expected.h"

#include "cache/scheduler_cache.h"
#include "fixture.h"

using namespace reservation_test;

TEST_CASE("a reservation's room stays requested until its owners take it") {
  NodeInfo info;
  info.node = node("n1", 4000);
  auto r = makeReservation("r1", "n1", 2000);
  info.addReservation(infoOf(r));
  CHECK(info.requested.milli_cpu == 2000);

  info.addPod(allocatedTo(owner("web-1", 1500, "n1"), *r));
  CHECK(info.requested.milli_cpu == 2000);  // 1500 taken from the reservation, 500 left there
  REQUIRE(info.reservation(r->uid) != nullptr);
  CHECK(info.reservation(r->uid)->allocated.milli_cpu == 1500);
  CHECK(info.reservation(r->uid)->owner_uids == std::vector<std::string>{"uid-web-1"});

  info.addPod(pod("other", 1000, "n1"));  // not an owner: the node's own room
  CHECK(info.requested.milli_cpu == 3000);

  CHECK(info.removePod("uid-web-1"));
  CHECK(info.requested.milli_cpu == 3000);  // the reservation has all 2000 back
  CHECK(info.reservation(r->uid)->allocated.milli_cpu == 0);

  CHECK(info.removeReservation(r->uid));
  CHECK(info.requested.milli_cpu == 1000);
  CHECK_FALSE(info.removeReservation(r->uid));
}

TEST_CASE("owner pods already on the node count when their reservation arrives") {
  NodeInfo info;
  info.node = node("n1", 4000);
  auto r = makeReservation("r1", "n1", 2000);
  info.addPod(allocatedTo(owner("web-1", 500, "n1"), *r));
  CHECK(info.requested.milli_cpu == 500);
  info.addReservation(infoOf(r));
  CHECK(info.requested.milli_cpu == 2000);
  CHECK(info.reservation(r->uid)->allocated.milli_cpu == 500);
}

TEST_CASE("an owner larger than its reservation counts in full, the reservation at zero") {
  NodeInfo info;
  info.node = node("n1", 8000);
  auto r = makeReservation("r1", "n1", 2000);
  info.addReservation(infoOf(r));
  info.addPod(allocatedTo(owner("web-1", 3000, "n1"), *r));
  CHECK(info.requested.milli_cpu == 3000);
  CHECK(info.reservation(r->uid)->remaining().milli_cpu == 0);
}

TEST_CASE("a pod naming a reservation that is not on its node counts as any pod") {
  NodeInfo info;
  info.node = node("n1", 8000);
  auto elsewhere = makeReservation("r2", "n2", 2000);
  info.addPod(allocatedTo(owner("web-1", 1000, "n1"), *elsewhere));
  CHECK(info.requested.milli_cpu == 1000);
}

TEST_CASE("the cache confirms an assumed reserve pod with its Available reservation") {
  SchedulerCache cache;
  REQUIRE(cache.addNode(node("n1", 4000)));
  auto pending = makeReservation("r1", "", 2000);
  pending->allocatable.clear();
  // The reserve pod asks what the template asks; here, as the status will say, 2 cores.
  auto reserve = std::make_shared<PodInfo>(*stateOf(pending).reserve_pod);
  reserve->requests.milli_cpu = 2000;
  reserve->node_name = "n1";
  REQUIRE(cache.assumePod(reserve));
  CHECK(cache.isAssumedPod("uid-r1"));
  CHECK(cache.nodeInfo("n1")->requested.milli_cpu == 2000);

  REQUIRE(cache.addReservation(infoOf(makeReservation("r1", "n1", 2000))));
  CHECK_FALSE(cache.isAssumedPod("uid-r1"));
  auto n1 = cache.nodeInfo("n1");
  CHECK(n1->pods.empty());
  CHECK(n1->reservations.size() == 1);
  CHECK(n1->requested.milli_cpu == 2000);
  CHECK(cache.reservationCount() == 1);

  // Re-added on another node (a changed status), it moves.
  REQUIRE(cache.addNode(node("n2", 4000)));
  REQUIRE(cache.addReservation(infoOf(makeReservation("r1", "n2", 2000))));
  CHECK(cache.nodeInfo("n1")->requested.milli_cpu == 0);
  CHECK(cache.nodeInfo("n2")->requested.milli_cpu == 2000);

  cache.removeReservation("uid-r1");
  CHECK(cache.nodeInfo("n2")->requested.milli_cpu == 0);
  CHECK(cache.reservationCount() == 0);
  cache.removeReservation("uid-r1");  // absent: nothing happens
}

TEST_CASE("the cache keeps a reservation's room across owner pods coming and going") {
  SchedulerCache cache;
  REQUIRE(cache.addNode(node("n1", 4000)));
  auto r = makeReservation("r1", "n1", 2000);
  REQUIRE(cache.addReservation(infoOf(r)));
  auto web = allocatedTo(owner("web-1", 1000, "n1"), *r);
  REQUIRE(cache.addPod(web));
  CHECK(cache.nodeInfo("n1")->requested.milli_cpu == 2000);
  REQUIRE(cache.removePod(*web));
  CHECK(cache.nodeInfo("n1")->requested.milli_cpu == 2000);
  // A relist brings the same reservation again: nothing counted twice.
  REQUIRE(cache.addReservation(infoOf(r)));
  CHECK(cache.nodeInfo("n1")->requested.milli_cpu == 2000);
}

TEST_CASE("a reserve pod is built from the template and pinned by its nodeName") {
  auto r = makeReservation("r1", "", 0);
  r->pod_template = std::make_shared<boost::json::value>(boost::json::parse(R"({
    "metadata": {"namespace": "team", "labels": {"app": "web"}},
    "spec": {"nodeName": "n7", "schedulerName": "koord-scheduler",
             "containers": [{"name": "c", "resources": {"requests": {"cpu": "2", "memory": "1Gi"}}}]}
  })"));
  auto p = reservePodOf(*r);
  REQUIRE(p.has_value());
  CHECK(p->reserve_pod);
  CHECK(p->name == "r1");
  CHECK(p->uid == "uid-r1");
  CHECK(p->namespace_ == "team");
  CHECK(p->key() == "@reservation/r1");
  CHECK(p->node_name.empty());
  CHECK(p->scheduler_name == "koord-scheduler");
  CHECK(p->requests.milli_cpu == 2000);
  REQUIRE(p->node_affinity);
  REQUIRE(p->node_affinity->required);
  CHECK(p->node_affinity->required->matches({}, "n7"));
  CHECK_FALSE(p->node_affinity->required->matches({}, "n8"));

  r->pod_template = std::make_shared<boost::json::value>(boost::json::parse(
      R"({"spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "x"}}}]}})"));
  auto bad = reservePodOf(*r);
  REQUIRE_FALSE(bad.has_value());
  CHECK(bad.error().message.rfind("spec.template: ", 0) == 0);
}
