// The gang state machine from tables: gangs from pod annotations and PodGroups, PreFilter's
// refusals and Strict rounds, Permit's waits and group decisions, Unreserve and PostFilter
// rejections, match policies, and the PodGroup status the controller writes.
#include <catch2/catch.hpp>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "koord/apis/gang.h"
#include "plugins/coscheduling/gang_cache.h"
#include "plugins/coscheduling/podgroup_controller.h"

namespace koord::roles::scheduler::coscheduling {
namespace {

using namespace std::chrono_literals;

struct PodSpec {
  std::string name;
  std::string gang = "g";
  std::string min = "3";
  std::string mode = "";
  std::string policy = "";
  std::string groups = "";
  std::string total = "";
  std::string node = "";
  bool pod_group = false;
};

PodInfo pod(const PodSpec& s) {
  PodInfo p;
  p.namespace_ = "ns";
  p.name = s.name;
  p.uid = "uid-" + s.name;
  p.node_name = s.node;
  p.gang_id = "ns/" + s.gang;
  if (s.pod_group) {
    p.labels[std::string(apis::kLabelPodGroup)] = s.gang;
    return p;
  }
  p.annotations[std::string(apis::kAnnotationGangName)] = s.gang;
  p.annotations[std::string(apis::kAnnotationGangMinAvailable)] = s.min;
  if (!s.mode.empty())
    p.annotations[std::string(apis::kAnnotationGangMode)] = s.mode;
  if (!s.policy.empty())
    p.annotations[std::string(apis::kAnnotationGangMatchPolicy)] = s.policy;
  if (!s.groups.empty())
    p.annotations[std::string(apis::kAnnotationGangGroups)] = s.groups;
  if (!s.total.empty())
    p.annotations[std::string(apis::kAnnotationGangTotalNumber)] = s.total;
  return p;
}

struct Cache {
  SteadyTime now{};
  GangCache cache{600s, [this] { return now; }};
};

TEST_CASE("gang cache: PreFilter refuses a member until min-available members exist",
          "[coscheduling][gang]") {
  Cache c;
  auto a = pod({.name = "a"});
  auto b = pod({.name = "b"});
  auto d = pod({.name = "d"});
  CHECK(c.cache.onPodAdd(a).empty());
  auto out = c.cache.preFilter(a, false);
  CHECK(out.error == "gang child pod not collect enough, gangName: ns/g, podName: ns/a");
  CHECK(out.skip_set_cycle_invalid);
  CHECK(c.cache.onPodAdd(b).empty());
  // The third completes the gang: every member not placed yet is to be activated.
  auto activate = c.cache.onPodAdd(d);
  CHECK(activate.size() == 3);
  CHECK(c.cache.preFilter(a, false).error.empty());
}

TEST_CASE("gang cache: a PodGroup's gang is refused until its PodGroup is seen",
          "[coscheduling][gang]") {
  Cache c;
  auto a = pod({.name = "a", .gang = "pg", .pod_group = true});
  c.cache.onPodAdd(a);
  CHECK(c.cache.preFilter(a, false).error == "gang has not init, gangName: ns/pg, podName: ns/a");
  apis::PodGroup g;
  g.namespace_ = "ns";
  g.name = "pg";
  g.min_member = 1;
  auto activate = c.cache.onPodGroupAdd(g);
  CHECK(activate == std::vector<std::string>{"ns/a"});
  CHECK(c.cache.preFilter(a, false).error.empty());
  auto gang = c.cache.gang("ns/pg");
  REQUIRE(gang.has_value());
  CHECK(gang->spec.wait_time == 600s);
  c.cache.onPodGroupDelete(g);
  CHECK_FALSE(c.cache.gang("ns/pg").has_value());
}

TEST_CASE("gang cache: Strict rounds: each member once per round, a failed round refused",
          "[coscheduling][gang]") {
  Cache c;
  std::vector<PodInfo> pods = {pod({.name = "a"}), pod({.name = "b"}), pod({.name = "d"})};
  for (auto& p : pods)
    c.cache.onPodAdd(p);
  // Round 1: each member once; a second try of the same member is refused.
  CHECK(c.cache.preFilter(pods[0], false).error.empty());
  CHECK(c.cache.scheduleCycle("ns/g") == std::make_pair(1, true));
  auto again = c.cache.preFilter(pods[0], false);
  CHECK(again.error.find("pod's schedule cycle too large") != std::string::npos);
  CHECK_FALSE(again.skip_reject);
  // b fails at Filter: PostFilter rejects the group and marks the round invalid.
  CHECK(c.cache.preFilter(pods[1], false).error.empty());
  auto rejection = c.cache.postFilter(pods[1], nullptr, "Insufficient cpu");
  REQUIRE(rejection.has_value());
  CHECK(rejection->group_gangs.contains("ns/g"));
  CHECK(rejection->message.find("member Pod \"b\" is unschedulable") != std::string::npos);
  CHECK(c.cache.scheduleCycle("ns/g") == std::make_pair(1, false));
  // d, in the invalid round: refused without rejecting again.
  auto invalid = c.cache.preFilter(pods[2], false);
  CHECK(invalid.error.find("gang scheduleCycle not valid") != std::string::npos);
  CHECK(invalid.skip_reject);
  CHECK_FALSE(c.cache.postFilter(pods[2], &invalid, "x").has_value());
  // Every member had its turn: the next try opens a new, valid round.
  CHECK(c.cache.preFilter(pods[0], false).error.empty());
  CHECK(c.cache.scheduleCycle("ns/g") == std::make_pair(2, true));
  // skipCheckScheduleCycle lets a member through whatever the round.
  CHECK(c.cache.preFilter(pods[0], true).error.empty());
}

TEST_CASE("gang cache: Permit waits until min-available are assumed, then allows the group",
          "[coscheduling][gang]") {
  Cache c;
  std::vector<PodInfo> pods = {pod({.name = "a"}), pod({.name = "b"}), pod({.name = "d"})};
  for (auto& p : pods)
    c.cache.onPodAdd(p);
  auto first = c.cache.permit(pods[0]);
  CHECK(first.verdict == PermitVerdict::kWait);
  CHECK(first.wait == 600s);
  CHECK(first.siblings.size() == 2);
  auto second = c.cache.permit(pods[1]);
  CHECK(second.verdict == PermitVerdict::kWait);
  CHECK(second.siblings.empty());  // the first one brought them forward already
  CHECK(c.cache.waitingCount() == 2);
  auto last = c.cache.permit(pods[2]);
  CHECK(last.verdict == PermitVerdict::kAllow);
  CHECK(last.group_gangs == std::unordered_set<std::string>{"ns/g"});
  for (auto& p : pods)
    c.cache.postBind(p);
  CHECK(c.cache.waitingCount() == 0);
  auto gang = c.cache.gang("ns/g");
  REQUIRE(gang.has_value());
  CHECK(gang->once_resource_satisfied);
  // Once satisfied (once-satisfied policy), a member goes alone and failures reject nothing.
  auto extra = pod({.name = "e"});
  c.cache.onPodAdd(extra);
  CHECK(c.cache.permit(extra).verdict == PermitVerdict::kAllow);
  CHECK_FALSE(c.cache.unreserve(extra).has_value());
}

TEST_CASE("gang cache: Unreserve fails a Strict gang as a whole, not a NonStrict one",
          "[coscheduling][gang]") {
  Cache c;
  auto a = pod({.name = "a"});
  c.cache.onPodAdd(a);
  c.cache.onPodAdd(pod({.name = "b"}));
  c.cache.onPodAdd(pod({.name = "d"}));
  c.cache.permit(a);
  auto r = c.cache.unreserve(a);
  REQUIRE(r.has_value());
  CHECK(r->message == "Gang \"ns/g\" gets rejected due to Pod \"a\" in Unreserve");
  CHECK(c.cache.waitingCount() == 0);

  auto n = pod({.name = "n1", .gang = "loose", .min = "2", .mode = "NonStrict"});
  c.cache.onPodAdd(n);
  c.cache.onPodAdd(pod({.name = "n2", .gang = "loose", .min = "2", .mode = "NonStrict"}));
  c.cache.permit(n);
  CHECK_FALSE(c.cache.unreserve(n).has_value());
  CHECK_FALSE(c.cache.postFilter(n, nullptr, "x").has_value());
}

TEST_CASE("gang cache: match policies count waiting and bound members differently",
          "[coscheduling][gang]") {
  for (auto [policy, allowed] :
       {std::pair{"only-waiting", false}, std::pair{"waiting-and-running", true}}) {
    INFO(policy);
    Cache c;
    // One member bound already (seen by the informer on a node), two to go, min 2.
    auto bound = pod({.name = "a", .min = "2", .policy = policy, .node = "n1"});
    auto b = pod({.name = "b", .min = "2", .policy = policy});
    c.cache.onPodAdd(bound);
    c.cache.onPodAdd(b);
    auto gang = c.cache.gang("ns/g");
    REQUIRE(gang.has_value());
    CHECK(gang->spec.match_policy != apis::GangMatchPolicy::kOnceSatisfied);
    CHECK((c.cache.permit(b).verdict == PermitVerdict::kAllow) == allowed);
  }
}

TEST_CASE("gang cache: a gang of gangs waits for every gang of its group", "[coscheduling][gang]") {
  Cache c;
  const std::string groups = R"(["ns/x","ns/y"])";
  auto x = pod({.name = "x1", .gang = "x", .min = "1", .groups = groups});
  auto y = pod({.name = "y1", .gang = "y", .min = "1", .groups = groups});
  c.cache.onPodAdd(x);
  CHECK(c.cache.permit(x).verdict == PermitVerdict::kWait);
  c.cache.onPodAdd(y);
  auto out = c.cache.permit(y);
  REQUIRE(out.verdict == PermitVerdict::kAllow);
  CHECK(out.group_gangs == std::unordered_set<std::string>{"ns/x", "ns/y"});
  // Both gangs share one round: a failure in y invalidates x's too.
  c.cache.postFilter(y, nullptr, "x");
  CHECK(c.cache.scheduleCycle("ns/x")->second == false);
}

TEST_CASE("gang cache: the queue keeps a group's members together, in round order",
          "[coscheduling][gang]") {
  Cache c;
  c.now = SteadyTime{} + 10s;
  auto a = pod({.name = "a", .gang = "first", .min = "1"});
  c.cache.onPodAdd(a);
  c.now = SteadyTime{} + 20s;
  auto b = pod({.name = "b", .gang = "second", .min = "1"});
  c.cache.onPodAdd(b);
  auto qa = QueuedPodInfo{std::make_shared<PodInfo>(a), SteadyTime{} + 30s, {}, 0};
  auto qb = QueuedPodInfo{std::make_shared<PodInfo>(b), SteadyTime{} + 1s, {}, 0};
  // The groups' round times order them, not the queue times.
  CHECK(c.cache.less(qa, qb));
  CHECK_FALSE(c.cache.less(qb, qa));
  // A member that had its turn starts the next round later: the other group goes first.
  c.now = SteadyTime{} + 40s;
  c.cache.preFilter(a, false);
  CHECK(c.cache.less(qb, qa));
}

TEST_CASE("gang cache: the queue's handles give the order a lookup gives, stale ones too",
          "[coscheduling][gang]") {
  Cache c;
  std::vector<PodInfo> pods;
  for (const char* gang : {"x", "y"}) {
    for (int i = 0; i < 3; ++i) {
      c.now += 1s;
      pods.push_back(pod({.name = std::string(gang) + std::to_string(i), .gang = gang}));
      c.cache.onPodAdd(pods.back());
    }
  }
  pods.push_back(pod({.name = "loner", .gang = ""}));
  pods.back().gang_id.clear();
  std::vector<QueuedPodInfo> with, without;
  for (const auto& p : pods) {
    auto ptr = std::make_shared<PodInfo>(p);
    with.push_back(QueuedPodInfo{ptr, c.now, {}, 0, c.cache.sortHandle(p)});
    without.push_back(QueuedPodInfo{ptr, c.now, {}, 0, nullptr});
  }
  CHECK(with.front().sort_handle != nullptr);
  CHECK(with.back().sort_handle == nullptr);  // outside gangs: nothing to keep
  auto sameOrder = [&] {
    for (std::size_t i = 0; i < pods.size(); ++i) {
      for (std::size_t j = 0; j < pods.size(); ++j) {
        INFO(pods[i].name << " < " << pods[j].name);
        CHECK(c.cache.less(with[i], with[j]) == c.cache.less(without[i], without[j]));
      }
    }
  };
  sameOrder();
  // Rounds move on: the handles see the members' new round times and cycles.
  c.now += 10s;
  c.cache.preFilter(pods[0], false);
  c.cache.preFilter(pods[4], false);
  sameOrder();
  CHECK(c.cache.less(with[3], with[0]));
  // Every member of y deleted: its gang is dropped while the queue still holds the handles.
  for (std::size_t i = 3; i < 6; ++i)
    c.cache.onPodDelete(pods[i]);
  CHECK_FALSE(c.cache.gang("ns/y").has_value());
  sameOrder();
  // y comes back as a new gang: the old handles are stale, the lookup finds the new entries.
  c.now += 10s;
  for (std::size_t i = 3; i < 6; ++i)
    c.cache.onPodAdd(pods[i]);
  sameOrder();
}

TEST_CASE("gang cache: deleting the last member of an annotation gang forgets it",
          "[coscheduling][gang]") {
  Cache c;
  auto a = pod({.name = "a", .min = "1"});
  c.cache.onPodAdd(a);
  c.cache.permit(a);
  CHECK(c.cache.waitingCount() == 1);
  c.cache.onPodDelete(a);
  CHECK_FALSE(c.cache.gang("ns/g").has_value());
  CHECK(c.cache.waitingCount() == 0);
}

TEST_CASE("gang cache: malformed gang annotations leave the gang refused, not the scheduler",
          "[coscheduling][gang]") {
  Cache c;
  auto a = pod({.name = "a", .min = "three"});
  c.cache.onPodAdd(a);
  CHECK(c.cache.preFilter(a, false).error.find("gang has not init") != std::string::npos);
  PodInfo bad = pod({.name = "b"});
  bad.gang_id.clear();
  bad.gang_error = "gang.scheduling.koordinator.sh/name: longer than 253 bytes";
  auto out = c.cache.preFilter(bad, false);
  CHECK(out.error == bad.gang_error);
}

TEST_CASE("podgroup status: Koordinator's phase steps from the gang's members",
          "[coscheduling][podgroup]") {
  const auto now = std::chrono::system_clock::time_point{} + 100s;
  apis::PodGroup g;
  g.namespace_ = "ns";
  g.name = "pg";
  g.min_member = 2;
  GangMembers two;
  two.phases = {{"ns/a", PodPhase::kPending}, {"ns/b", PodPhase::kPending}};

  auto s = nextPodGroupStatus(g, two, now);
  CHECK(s.phase == apis::PodGroupPhase::kPending);
  g.status = s;
  g.status = nextPodGroupStatus(g, std::nullopt, now);
  CHECK(g.status.phase == apis::PodGroupPhase::kPending);  // no member yet
  g.status = nextPodGroupStatus(g, two, now);
  CHECK(g.status.phase == apis::PodGroupPhase::kPreScheduling);
  g.status = nextPodGroupStatus(g, two, now);
  CHECK(g.status.phase == apis::PodGroupPhase::kScheduling);
  CHECK(g.status.schedule_start_time == now);
  two.bound = 2;
  g.status = nextPodGroupStatus(g, two, now + 5s);
  CHECK(g.status.phase == apis::PodGroupPhase::kScheduled);
  CHECK(g.status.scheduled == 2);
  CHECK(g.status.schedule_start_time == now);  // kept from the first time
  two.phases = {{"ns/a", PodPhase::kRunning}, {"ns/b", PodPhase::kRunning}};
  g.status = nextPodGroupStatus(g, two, now);
  CHECK(g.status.phase == apis::PodGroupPhase::kRunning);
  CHECK(g.status.running == 2);
  two.phases = {{"ns/a", PodPhase::kFailed}, {"ns/b", PodPhase::kRunning}};
  g.status = nextPodGroupStatus(g, two, now);
  CHECK(g.status.phase == apis::PodGroupPhase::kFailed);
  two.phases = {{"ns/a", PodPhase::kSucceeded}, {"ns/b", PodPhase::kSucceeded}};
  g.status = nextPodGroupStatus(g, two, now);
  CHECK(g.status.phase == apis::PodGroupPhase::kFinished);
  GangMembers none;
  g.status = nextPodGroupStatus(g, none, now);
  CHECK(g.status.phase == apis::PodGroupPhase::kPending);
}

}  // namespace
}  // namespace koord::roles::scheduler::coscheduling
