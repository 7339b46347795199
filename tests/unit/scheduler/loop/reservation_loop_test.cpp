// The scheduling loop with reservations, step by step: a pending Reservation is placed and bound
// by a status write, an owner pod is placed into it (the annotation carried by its Binding), a pod
// that owns nothing never gets the reserved room, and an unplaceable Reservation says why.
#include <boost/json.hpp>

#include <catch2/catch.hpp>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "config/scheduler_config.h"
#include "framework/plugin_registry.h"
#include "koord/core/metrics.h"
#include "scheduler.h"

namespace koord::roles::scheduler {
namespace {

namespace json = boost::json;

class RecordingApi final : public SchedulerApi {
 public:
  void bindPod(std::shared_ptr<const PodInfo> pod, const std::string& node,
               ApiCallback done) const override {
    calls.push_back("bind " + pod->key() + " " + node);
    bound.push_back(pod);
    if (refuse_binding)
      done(kube::makeKubeError("Operation cannot be fulfilled on pods/binding: conflict"));
    else
      done({});
  }
  void patchPod(std::shared_ptr<const PodInfo> pod, json::value patch,
                ApiCallback done) const override {
    calls.push_back("patch " + pod->key() + " " + json::serialize(patch));
    done({});
  }
  std::shared_ptr<const PodInfo> currentPod(const std::string& key) const override {
    auto it = pods.find(key);
    return it == pods.end() ? nullptr : it->second;
  }
  void reportScheduled(const PodInfo& pod, const std::string& node, const std::string&) override {
    calls.push_back("scheduled " + pod.key() + " " + node);
  }
  void reportFailure(const PodInfo& pod, const std::string&, std::string_view,
                     const std::string& message, const std::string&) override {
    calls.push_back("failed " + pod.key() + ": " + message);
  }
  std::shared_ptr<const ReservationState> currentReservation(
      const std::string& name) const override {
    auto it = reservations.find(name);
    return it == reservations.end() ? nullptr : it->second;
  }
  void patchReservationStatus(const apis::Reservation& r, json::value patch,
                              ApiCallback done) override {
    calls.push_back("status " + r.name + " " + json::serialize(patch));
    done({});
  }
  void reservationEvent(const apis::Reservation& r, const std::string&, bool warning,
                        std::string_view reason, const std::string&) override {
    calls.push_back(std::string(warning ? "warning " : "normal ") + std::string(reason) + " " +
                    r.name);
  }

  std::size_t count(std::string_view prefix) const {
    std::size_t n = 0;
    for (const auto& c : calls)
      n += c.rfind(prefix, 0) == 0 ? 1 : 0;
    return n;
  }

  std::map<std::string, std::shared_ptr<const PodInfo>> pods;
  std::map<std::string, std::shared_ptr<const ReservationState>> reservations;
  bool refuse_binding = false;
  mutable std::vector<std::shared_ptr<const PodInfo>> bound;
  mutable std::vector<std::string> calls;
};

std::shared_ptr<const Node> node(const std::string& name, std::int64_t milli_cpu) {
  auto n = std::make_shared<Node>();
  n->name = name;
  n->uid = "uid-" + name;
  n->allocatable.milli_cpu = milli_cpu;
  n->allocatable.memory = 32LL << 30;
  n->allocatable.allowed_pod_number = 110;
  return n;
}

std::shared_ptr<PodInfo> pod(const std::string& name, std::int64_t milli_cpu,
                             const std::string& app) {
  auto p = std::make_shared<PodInfo>();
  p->namespace_ = "default";
  p->name = name;
  p->uid = "uid-" + name;
  p->scheduler_name = "koord-scheduler";
  p->labels["app"] = app;
  p->requests.milli_cpu = milli_cpu;
  p->non_zero_requests = p->requests;
  return p;
}

// A Reservation of `milli_cpu` owned by pods labelled app=web; pending without a node.
std::shared_ptr<const ReservationState> reservation(const std::string& name, std::int64_t milli_cpu,
                                                    const std::string& node = "") {
  auto r = std::make_shared<apis::Reservation>();
  r->name = name;
  r->uid = "uid-" + name;
  apis::ReservationOwner owner;
  owner.label_selector = kube::LabelSelector{{{"app", "web"}}, {}};
  owner.selector = kube::Selector::fromSet({{"app", "web"}});
  r->owners.push_back(owner);
  r->pod_template = std::make_shared<json::value>(json::parse(
      R"({"spec": {"schedulerName": "koord-scheduler", "containers": [{"name": "c",
          "resources": {"requests": {"cpu": ")" +
      std::to_string(milli_cpu) + R"(m"}}}]}})"));
  if (!node.empty()) {
    r->phase = apis::ReservationPhase::kAvailable;
    r->node_name = node;
    r->allocatable["cpu"] = kube::Quantity::fromMilli(milli_cpu);
  }
  auto state = std::make_shared<ReservationState>();
  state->reserve_pod = std::make_shared<const PodInfo>(reservePodOf(*r).value());
  state->object = std::move(r);
  return state;
}

config::SchedulerConfig reservationConfig() {
  auto cfg = config::parseSchedulerConfigText(
      "apiVersion: kubescheduler.config.k8s.io/v1beta2\n"
      "kind: KubeSchedulerConfiguration\n"
      "profiles:\n"
      "- schedulerName: koord-scheduler\n"
      "  plugins:\n"
      "    preFilter: {enabled: [{name: Reservation}]}\n"
      "    filter: {enabled: [{name: Reservation}]}\n"
      "    preScore: {enabled: [{name: Reservation}]}\n"
      "    score: {enabled: [{name: Reservation, weight: 5000}]}\n"
      "    reserve: {enabled: [{name: Reservation}]}\n"
      "    preBind: {enabled: [{name: DefaultPreBind}]}\n",
      inTreeRegistry());
  REQUIRE(cfg.has_value());
  return std::move(*cfg);
}

struct Fixture {
  RecordingApi api;
  metrics::Registry registry;
  Scheduler scheduler{reservationConfig(), inTreeRegistry(), api, registry};

  void addPending(std::shared_ptr<const PodInfo> p) {
    api.pods[p->key()] = p;
    scheduler.onPendingPodAdd(p);
  }
  void addReservation(std::shared_ptr<const ReservationState> r) {
    api.reservations[r->object->name] = r;
    scheduler.onReservationAdd(r);
  }
};

}  // namespace

TEST_CASE("scheduler loop: a pending Reservation is placed and bound by its status",
          "[scheduler][loop]") {
  Fixture f;
  f.scheduler.onNodeAdd(node("a", 4000));
  auto pending = reservation("r1", 2000);
  f.addReservation(pending);
  REQUIRE(f.scheduler.queue().sizes().active == 1);
  REQUIRE(f.scheduler.scheduleOne());
  REQUIRE(f.api.count("status r1") == 1);
  const std::string& status = f.api.calls.front();
  CHECK_THAT(status, Catch::Contains(R"("phase":"Available")"));
  CHECK_THAT(status, Catch::Contains(R"("nodeName":"a")"));
  CHECK_THAT(status, Catch::Contains(R"("allocatable":{"cpu":"2")"));
  CHECK(f.api.count("normal Scheduled r1") == 1);
  CHECK(f.api.count("bind") == 0);  // a Reservation has no pod to bind
  CHECK(f.scheduler.cache().isAssumedPod("uid-r1"));
  CHECK(f.scheduler.cache().nodeInfo("a")->requested.milli_cpu == 2000);

  // The informer shows it Available: the assumed stand-in gives way to the reservation.
  auto available = reservation("r1", 2000, "a");
  f.api.reservations["r1"] = available;
  f.scheduler.onReservationUpdate(*pending, available);
  CHECK_FALSE(f.scheduler.cache().isAssumedPod("uid-r1"));
  auto a = f.scheduler.cache().nodeInfo("a");
  CHECK(a->pods.empty());
  CHECK(a->reservations.size() == 1);
  CHECK(a->requested.milli_cpu == 2000);
  CHECK(f.scheduler.queue().sizes().active == 0);
  CHECK_THAT(f.registry.render(),
             Catch::Contains(
                 R"(koord_scheduler_reservation_schedule_attempts_total{result="scheduled"} 1)"));
}

TEST_CASE("scheduler loop: an owner pod takes its reservation's room, others never do",
          "[scheduler][loop]") {
  Fixture f;
  // One 4-core node: 2 cores taken by another pod, 2 reserved.
  f.scheduler.onNodeAdd(node("a", 4000));
  auto busy = pod("busy", 2000, "db");
  busy->node_name = "a";
  f.scheduler.onAssignedPodAdd(busy);
  f.addReservation(reservation("r1", 2000, "a"));
  REQUIRE(f.scheduler.cache().nodeInfo("a")->requested.milli_cpu == 4000);

  SECTION("a pod that owns nothing does not fit") {
    f.addPending(pod("stranger", 1000, "db"));
    REQUIRE(f.scheduler.scheduleOne());
    CHECK(f.api.count("bind") == 0);
    REQUIRE(f.api.count("failed default/stranger") == 1);
    CHECK_THAT(f.api.calls.back(), Catch::Contains("Insufficient cpu"));
  }
  SECTION("an owner is placed into it, the annotation riding on its binding") {
    f.addPending(pod("web-1", 2000, "web"));
    REQUIRE(f.scheduler.scheduleOne());
    CHECK(f.api.count("patch") == 0);
    REQUIRE(f.api.calls.size() >= 2);
    CHECK(f.api.calls[0] == "bind default/web-1 a");
    REQUIRE(f.api.bound.size() == 1);
    CHECK(f.api.bound[0]->annotations.at("scheduling.koordinator.sh/reservation-allocated") ==
          R"({"name":"r1","uid":"uid-r1"})");
    // Counted inside the reservation: the node is full, not over-full.
    auto a = f.scheduler.cache().nodeInfo("a");
    CHECK(a->requested.milli_cpu == 4000);
    CHECK(a->reservation("uid-r1")->allocated.milli_cpu == 2000);
  }
  SECTION("a refused binding gives the room back") {
    f.api.refuse_binding = true;
    f.addPending(pod("web-1", 2000, "web"));
    REQUIRE(f.scheduler.scheduleOne());
    CHECK(f.api.count("bind") == 1);
    CHECK(f.api.count("failed default/web-1") == 1);
    CHECK_FALSE(f.scheduler.cache().isAssumedPod("uid-web-1"));
    auto a = f.scheduler.cache().nodeInfo("a");
    CHECK(a->requested.milli_cpu == 4000);
    CHECK(a->reservation("uid-r1")->allocated.milli_cpu == 0);
  }
}

TEST_CASE("scheduler loop: an owner finds its reservation beyond the filter pass's window",
          "[scheduler][loop]") {
  // 300 nodes: the adaptive pass stops after 144 feasible ones, far before the last node.
  Fixture f;
  for (int i = 0; i < 300; ++i)
    f.scheduler.onNodeAdd(node("n" + std::to_string(i), 4000));
  f.addReservation(reservation("r1", 1000, "n299"));
  f.addPending(pod("web-1", 1000, "web"));
  REQUIRE(f.scheduler.scheduleOne());
  REQUIRE(f.api.count("bind") == 1);
  CHECK(f.api.count("bind default/web-1 n299") == 1);
}

TEST_CASE("scheduler loop: an unplaceable Reservation says why and waits in the queue",
          "[scheduler][loop]") {
  Fixture f;
  f.scheduler.onNodeAdd(node("a", 4000));
  f.addReservation(reservation("huge", 100000));
  REQUIRE(f.scheduler.scheduleOne());
  CHECK(f.api.count("warning FailedScheduling huge") == 1);
  REQUIRE(f.api.count("status huge") == 1);
  CHECK_THAT(f.api.calls.back(), Catch::Contains(R"("reason":"Unschedulable")"));
  CHECK_THAT(f.api.calls.back(), Catch::Contains(R"("phase":"Pending")"));
  CHECK(f.scheduler.queue().sizes().unschedulable + f.scheduler.queue().sizes().backoff == 1);
  CHECK_THAT(
      f.registry.render(),
      Catch::Contains(
          R"(koord_scheduler_reservation_schedule_attempts_total{result="unschedulable"} 1)"));
}

}  // namespace koord::roles::scheduler
