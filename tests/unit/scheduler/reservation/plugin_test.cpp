// The Reservation plugin's points over one cycle: which reservations an owner pod matches, the
// room it gets back, the allocate policies, affinity, and the reservation it takes at Reserve.
#include <catch2/catch.hpp>

#include "catch_expected.h"

#include "fixture.h"
#include "framework/pod_changes.h"
#include "framework/snapshot.h"
#include "plugins/reservation/reservation_plugin.h"
#include "scheduler/fake_handle.h"

using namespace reservation_test;
using koord::roles::scheduler::reservation::ReservationArgs;
using koord::roles::scheduler::reservation::ReservationPlugin;

namespace {

// One 4-core node n1 whose other pods take 2 cores, and the reservations given on it.
struct Cycle {
  explicit Cycle(std::vector<std::shared_ptr<apis::Reservation>> rs, std::int64_t used = 2000)
      : plugin(std::make_shared<const ReservationArgs>(), handle) {
    auto n1 = std::make_shared<NodeInfo>();
    n1->node = node("n1", 4000);
    n1->addPod(pod("busy", used, "n1"));
    auto n2 = std::make_shared<NodeInfo>();
    n2->node = node("n2", 4000);
    for (const auto& r : rs) {
      (r->node_name == "n1" ? n1 : n2)->addReservation(infoOf(r));
      auto state = std::make_shared<ReservationState>();
      state->object = r;
      plugin.onReservationAvailable(state);
    }
    handle.setSnapshot(Snapshot({n1, n2}));
  }

  // BeforePreFilter, then the snapshot with the replacements swapped in, as the scheduler does.
  Status begin(const PodInfo& p) {
    std::vector<std::shared_ptr<const NodeInfo>> replacements;
    auto s = plugin.beforePreFilter(state, p, handle.snapshot(), replacements);
    restored = replacements.size();
    std::vector<std::shared_ptr<const NodeInfo>> nodes = handle.snapshot().nodes();
    for (auto& r : replacements) {
      for (auto& n : nodes) {
        if (n->name() == r->name())
          n = r;
      }
    }
    handle.setSnapshot(Snapshot(nodes));
    return s;
  }
  const NodeInfo& n1() const { return handle.node("n1"); }

  koord::roles::scheduler::testkit::FakeHandle handle;
  ReservationPlugin plugin;
  CycleState state;
  std::size_t restored = 0;
};

std::string allocatedName(const CycleState& state) {
  const PodChanges* changes = findPodChanges(state);
  if (changes == nullptr)
    return "";
  const std::string* v = changes->annotation(apis::kAnnotationReservationAllocated);
  return v == nullptr ? "" : *v;
}

}  // namespace

TEST_CASE("a pod that owns no reservation leaves the plugin out of its cycle") {
  Cycle c({makeReservation("r1", "n1", 2000)});
  auto p = pod("stranger", 1000);
  REQUIRE(c.begin(*p).ok());
  CHECK(c.restored == 0);
  CHECK(c.plugin.preFilter(c.state, *p).isSkip());
  CHECK(c.plugin.preScore(c.state, *p, {}).isSkip());
  // The reserved room is still counted on n1: 2 busy + 2 reserved of 4.
  CHECK(c.n1().requested.milli_cpu == 4000);
}

TEST_CASE("an owner pod gets its reservation's room back and takes the reservation") {
  auto r = makeReservation("r1", "n1", 2000);
  Cycle c({r});
  auto p = owner("web-1", 2000);
  REQUIRE(c.begin(*p).ok());
  CHECK(c.restored == 1);
  CHECK(c.n1().requested.milli_cpu == 2000);
  // One Default reservation on the node: NodeResourcesFit on the restored node decides alone.
  CHECK(c.plugin.preFilter(c.state, *p).isSkip());
  CHECK(c.plugin.filter(c.state, *p, c.n1()).ok());
  std::int64_t score = -1;
  REQUIRE(c.plugin.preScore(c.state, *p, {}).ok());
  REQUIRE(c.plugin.score(c.state, *p, c.n1(), score).ok());
  CHECK(score == kMaxNodeScore);
  REQUIRE(c.plugin.score(c.state, *p, c.handle.node("n2"), score).ok());
  CHECK(score == 0);
  c.plugin.nominateReservation(c.state, *p, "n1");
  REQUIRE(c.plugin.reserve(c.state, *p, "n1").ok());
  CHECK(allocatedName(c.state) == apis::reservationAllocatedValue("r1", "uid-r1"));
  c.plugin.unreserve(c.state, *p, "n1");
  CHECK(allocatedName(c.state).empty());
}

TEST_CASE("Filter runs only where it checks more than NodeResourcesFit") {
  struct Case {
    const char* name;
    apis::ReservationAllocatePolicy policy;
    int reservations_on_n1;
    bool affinity;
    bool filter_runs;
  };
  const Case cases[] = {
      {"one Default reservation", apis::ReservationAllocatePolicy::kDefault, 1, false, false},
      {"one Aligned reservation", apis::ReservationAllocatePolicy::kAligned, 1, false, false},
      {"one Restricted reservation", apis::ReservationAllocatePolicy::kRestricted, 1, false, true},
      {"two reservations on the node", apis::ReservationAllocatePolicy::kDefault, 2, false, true},
      {"reservation affinity", apis::ReservationAllocatePolicy::kDefault, 1, true, true},
  };
  for (const auto& tc : cases) {
    SECTION(tc.name) {
      std::vector<std::shared_ptr<apis::Reservation>> rs;
      for (int i = 0; i < tc.reservations_on_n1; ++i) {
        auto r = makeReservation(i == 0 ? "r1" : "r2", "n1", 1000);
        r->allocate_policy = tc.policy;
        rs.push_back(r);
      }
      Cycle c(rs);
      auto p = owner("web-1", 1000);
      if (tc.affinity)
        p->reservation_affinity = apis::ReservationAffinity{};
      REQUIRE(c.begin(*p).ok());
      auto s = c.plugin.preFilter(c.state, *p);
      CHECK(s.ok() == tc.filter_runs);
      CHECK(s.isSkip() == !tc.filter_runs);
    }
  }
}

TEST_CASE("owners are matched by object, controller and labels") {
  struct Case {
    const char* name;
    apis::ReservationOwner owner;
    bool matches;
  };
  auto objectUid = [](std::string uid) {
    apis::ReservationOwner o;
    o.object = apis::ObjectReference{"", "", "", "", std::move(uid)};
    return o;
  };
  auto controllerUid = [](std::string uid) {
    apis::ReservationOwner o;
    o.controller =
        apis::ReservationControllerReference{"", "", "", std::move(uid), std::nullopt, ""};
    return o;
  };
  // Indexed under no key: matched against every pod.
  auto expressionsOnly = [](std::string key, std::string value) {
    apis::ReservationOwner o;
    kube::LabelSelector ls;
    ls.match_expressions.push_back({key, kube::LabelSelectorOperator::kIn, {value}});
    o.label_selector = ls;
    o.selector = kube::toSelector(ls).value();
    return o;
  };
  auto web = owner("web-1", 100);
  web->uid = "uid-web-1";
  web->controller_kind = "ReplicaSet";
  web->controller_name = "web-abc";
  web->controller_uid = "uid-rs";
  const Case cases[] = {
      {"labels", ownerByLabel("app", "web"), true},
      {"other labels", ownerByLabel("app", "db"), false},
      {"object", ownerByObject("default", "web-1"), true},
      {"object in another namespace", ownerByObject("team", "web-1"), false},
      {"controller", ownerByController("ReplicaSet", "web-abc"), true},
      {"another controller kind", ownerByController("StatefulSet", "web-abc"), false},
      {"object by UID", objectUid("uid-web-1"), true},
      {"object by another UID", objectUid("uid-web-2"), false},
      {"object without a namespace", ownerByObject("", "web-1"), true},
      {"controller by UID", controllerUid("uid-rs"), true},
      {"controller by another UID", controllerUid("uid-rs-2"), false},
      {"matchExpressions only", expressionsOnly("app", "web"), true},
      {"matchExpressions only, other value", expressionsOnly("app", "db"), false},
  };
  for (const auto& tc : cases) {
    SECTION(tc.name) {
      auto r = makeReservation("r1", "n1", 2000);
      r->owners = {tc.owner};
      Cycle c({r});
      REQUIRE(c.begin(*web).ok());
      CHECK((c.restored == 1) == tc.matches);
    }
  }
}

TEST_CASE("allocate policies decide what an owner may take beyond its reservation") {
  // n1: 4 cores, 1 busy, a 2-core reservation: 1 core of its own free, 2 in the reservation.
  struct Case {
    const char* name;
    apis::ReservationAllocatePolicy policy;
    std::int64_t request;
    bool fits;
  };
  const Case cases[] = {
      {"Default within the reservation", apis::ReservationAllocatePolicy::kDefault, 2000, true},
      {"Default with the node's free room too", apis::ReservationAllocatePolicy::kDefault, 3000,
       true},
      {"Default beyond both", apis::ReservationAllocatePolicy::kDefault, 3500, false},
      {"Aligned with the node's free room", apis::ReservationAllocatePolicy::kAligned, 3000, true},
      {"Restricted within the reservation", apis::ReservationAllocatePolicy::kRestricted, 2000,
       true},
      {"Restricted beyond the reservation", apis::ReservationAllocatePolicy::kRestricted, 3000,
       false},
  };
  for (const auto& tc : cases) {
    SECTION(tc.name) {
      auto r = makeReservation("r1", "n1", 2000);
      r->allocate_policy = tc.policy;
      r->owners = {ownerByLabel("app", "web")};
      Cycle c({r}, 1000);
      auto p = owner("web-1", tc.request);
      // The pod carries reservation affinity, so it may only go into a reservation.
      p->reservation_affinity = apis::ReservationAffinity{};
      REQUIRE(c.begin(*p).ok());
      CHECK(c.plugin.filter(c.state, *p, c.n1()).ok() == tc.fits);
    }
  }
}

TEST_CASE("an owner that fits no reservation may still use the node's own room") {
  // Restricted: the 2.5 cores cannot come from the 1-core reservation (Default would take 1
  // from it and 1.5 from the node, and place the pod into it).
  auto r = makeReservation("r1", "n1", 1000);
  r->allocate_policy = apis::ReservationAllocatePolicy::kRestricted;
  Cycle c({r}, 0);  // 4 cores: 1 reserved, 3 free
  auto p = owner("web-1", 2500);
  REQUIRE(c.begin(*p).ok());
  CHECK(c.plugin.filter(c.state, *p, c.n1()).ok());
  c.plugin.nominateReservation(c.state, *p, "n1");
  REQUIRE(c.plugin.reserve(c.state, *p, "n1").ok());
  CHECK(allocatedName(c.state).empty());  // a plain pod: it took no reservation
}

TEST_CASE("reservation affinity restricts a pod to the reservations it names") {
  auto r1 = makeReservation("r1", "n1", 2000);
  auto r2 = makeReservation("r2", "n2", 2000);
  r2->labels["tier"] = "gold";
  SECTION("by name") {
    Cycle c({r1, r2});
    auto p = owner("web-1", 1000);
    p->reservation_affinity = apis::ReservationAffinity{};
    p->reservation_affinity->name = "r2";
    REQUIRE(c.begin(*p).ok());
    CHECK_FALSE(c.plugin.filter(c.state, *p, c.n1()).ok());
    CHECK(c.plugin.filter(c.state, *p, c.handle.node("n2")).ok());
  }
  SECTION("by selector, none matching") {
    Cycle c({r1, r2});
    auto p = owner("web-1", 1000);
    p->reservation_affinity = apis::ReservationAffinity{};
    p->reservation_affinity->reservation_selector["tier"] = "silver";
    auto s = c.begin(*p);
    CHECK(s.isUnschedulable());
  }
  SECTION("a malformed annotation is the pod's reason to wait") {
    Cycle c({r1});
    auto p = owner("web-1", 1000);
    p->reservation_affinity_error = "not JSON";
    auto s = c.begin(*p);
    CHECK(s.isUnschedulable());
    CHECK(s.message().find("reservation-affinity") != std::string::npos);
  }
}

TEST_CASE("reservations an owner may not use are left out") {
  SECTION("a spent allocate-once reservation") {
    auto r = makeReservation("r1", "n1", 2000);
    Cycle c({r});
    // Its first owner is bound already.
    auto n1 = std::make_shared<NodeInfo>(c.n1());
    n1->addPod(allocatedTo(owner("web-0", 500, "n1"), *r));
    c.handle.setSnapshot(Snapshot({n1}));
    auto p = owner("web-1", 1000);
    REQUIRE(c.begin(*p).ok());
    CHECK(c.restored == 0);
  }
  SECTION("an unschedulable reservation") {
    auto r = makeReservation("r1", "n1", 2000);
    r->unschedulable = true;
    Cycle c({r});
    REQUIRE(c.begin(*owner("web-1", 1000)).ok());
    CHECK(c.restored == 0);

    // Unless the pod names it.
    Cycle named({r});
    auto p = owner("web-2", 1000);
    p->reservation_affinity = apis::ReservationAffinity{};
    p->reservation_affinity->name = "r1";
    REQUIRE(named.begin(*p).ok());
    CHECK(named.restored == 1);
  }
  SECTION("a tainted reservation, for a pod with reservation affinity but no toleration") {
    auto r = makeReservation("r1", "n1", 2000);
    r->taints.push_back({"dedicated", "batch", kube::TaintEffect::kNoSchedule});
    Cycle c({r});
    auto p = owner("web-1", 1000);
    p->reservation_affinity = apis::ReservationAffinity{};
    CHECK(c.begin(*p).isUnschedulable());
    CHECK(c.restored == 0);

    // As Koordinator: a pod without reservation affinity is not held back by the taints.
    Cycle plain({r});
    REQUIRE(plain.begin(*owner("web-3", 1000)).ok());
    CHECK(plain.restored == 1);

    Cycle tolerated({r});
    auto q = owner("web-2", 1000);
    q->reservation_affinity = apis::ReservationAffinity{};
    q->reservation_affinity->tolerations.push_back(
        {"dedicated", kube::TolerationOperator::kEqual, "batch", kube::TaintEffect::kAll, {}});
    REQUIRE(tolerated.begin(*q).ok());
    CHECK(tolerated.restored == 1);
  }
  SECTION("a pod labelled reservation-ignored") {
    Cycle c({makeReservation("r1", "n1", 2000)});
    auto p = owner("web-1", 1000);
    p->reservation_ignored = true;
    REQUIRE(c.begin(*p).ok());
    CHECK(c.restored == 0);
    CHECK(c.plugin.preFilter(c.state, *p).isSkip());
  }
  SECTION("a reservation that went away") {
    auto r = makeReservation("r1", "n1", 2000);
    Cycle c({r});
    c.plugin.onReservationGone(r->uid);
    REQUIRE(c.begin(*owner("web-1", 1000)).ok());
    CHECK(c.restored == 0);
  }
}

TEST_CASE("among fitting reservations the lowest reservation-order wins, then the tightest") {
  auto big = makeReservation("big", "n1", 2000);
  auto small = makeReservation("small", "n1", 1000);
  SECTION("tightest") {
    Cycle c({big, small}, 0);
    auto p = owner("web-1", 800);
    REQUIRE(c.begin(*p).ok());
    c.plugin.nominateReservation(c.state, *p, "n1");
    REQUIRE(c.plugin.reserve(c.state, *p, "n1").ok());
    CHECK(allocatedName(c.state) == apis::reservationAllocatedValue("small", "uid-small"));
  }
  SECTION("ordered") {
    big->labels[std::string(apis::kLabelReservationOrder)] = "1";
    Cycle c({big, small}, 0);
    auto p = owner("web-1", 800);
    REQUIRE(c.begin(*p).ok());
    c.plugin.nominateReservation(c.state, *p, "n1");
    REQUIRE(c.plugin.reserve(c.state, *p, "n1").ok());
    CHECK(allocatedName(c.state) == apis::reservationAllocatedValue("big", "uid-big"));
  }
}
