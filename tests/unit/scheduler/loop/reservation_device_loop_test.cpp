// The scheduling loop with reservations holding devices: a Reservation whose template asks a
// whole GPU gets a card, written on the Reservation before it turns Available; other pods never
// get it, its owner pods share it, a Restricted one keeps them on it, and a restarted scheduler
// learns it from the Reservation's annotation.
#include <boost/json.hpp>

#include <catch2/catch.hpp>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "../deviceshare/device_fixtures.h"
#include "config/scheduler_config.h"
#include "framework/plugin_registry.h"
#include "koord/apis/device.h"
#include "koord/apis/device_allocation.h"
#include "koord/apis/extension.h"
#include "koord/core/metrics.h"
#include "loop_api.h"
#include "loop_objects.h"
#include "plugins/deviceshare/device.h"
#include "scheduler.h"
#include "scheduler/map_object_source.h"

namespace koord::roles::scheduler {
namespace {

namespace json = boost::json;

using Api = testing::LoopApi;

config::SchedulerConfig config() {
  const char* text =
      "apiVersion: kubescheduler.config.k8s.io/v1beta2\n"
      "kind: KubeSchedulerConfiguration\n"
      "profiles:\n- schedulerName: koord-scheduler\n"
      "  plugins:\n"
      "    preFilter: {enabled: [{name: Reservation}, {name: DeviceShare}]}\n"
      "    filter: {enabled: [{name: Reservation}, {name: DeviceShare}]}\n"
      "    preScore: {enabled: [{name: Reservation}]}\n"
      "    score: {enabled: [{name: Reservation, weight: 5000}, {name: DeviceShare}]}\n"
      // DeviceShare first: it must read the nomination, not the Reservation plugin's order.
      "    reserve: {enabled: [{name: DeviceShare}, {name: Reservation}]}\n"
      "    preBind: {enabled: [{name: DefaultPreBind}]}\n"
      "  pluginConfig:\n"
      "  - name: DeviceShare\n"
      "    args:\n"
      "      scoringStrategy:\n"
      "        type: MostAllocated\n"
      "        resources: [{name: koordinator.sh/gpu-memory-ratio, weight: 1}]\n";
  auto cfg = config::parseSchedulerConfigText(text, inTreeRegistry());
  REQUIRE(cfg.has_value());
  return std::move(*cfg);
}

// Two 16Gi GPUs; allocatable beyond them, so that every refusal here is DeviceShare's.
std::shared_ptr<const Node> gpuNode() {
  auto n = std::make_shared<Node>(*testing::loopNode("n1", 8000));
  n->allocatable.setScalar("koordinator.sh/gpu-core", 1000);
  n->allocatable.setScalar("koordinator.sh/gpu-memory-ratio", 1000);
  n->allocatable.setScalar("koordinator.sh/gpu-memory", 160LL << 30);
  return n;
}

// A Reservation of one whole GPU for pods labelled app=web, reusable by several owners;
// Available on n1 holding `held` (a device-allocated) when that is given.
std::shared_ptr<const ReservationState> reservation(const std::string& held = "",
                                                    bool restricted = false) {
  auto r = std::make_shared<apis::Reservation>();
  r->name = "r1";
  r->uid = "uid-r1";
  apis::ReservationOwner owner;
  owner.label_selector = kube::LabelSelector{{{"app", "web"}}, {}};
  owner.selector = kube::Selector::fromSet({{"app", "web"}});
  r->owners.push_back(owner);
  r->allocate_once = false;
  if (restricted)
    r->allocate_policy = apis::ReservationAllocatePolicy::kRestricted;
  r->pod_template = std::make_shared<json::value>(json::parse(
      R"({"spec": {"schedulerName": "koord-scheduler", "containers": [{"name": "c",
          "resources": {"requests": {"cpu": "1",
                                     "koordinator.sh/gpu-memory-ratio": "100"}}}]}})"));
  if (!held.empty()) {
    r->phase = apis::ReservationPhase::kAvailable;
    r->node_name = "n1";
    r->allocatable["cpu"] = kube::Quantity::fromMilli(1000);
    r->allocatable["koordinator.sh/gpu-memory-ratio"] = kube::Quantity::fromInt(100);
    r->annotations[std::string(apis::kAnnotationDeviceAllocated)] = held;
  }
  auto state = std::make_shared<ReservationState>();
  state->reserve_pod = std::make_shared<const PodInfo>(reservePodOf(*r).value());
  state->object = std::move(r);
  return state;
}

int minorOf(const std::string& annotation) {
  auto parsed = apis::parseDeviceAllocations(annotation);
  REQUIRE(parsed.has_value());
  REQUIRE((*parsed)["gpu"].size() == 1);
  return (*parsed)["gpu"][0].minor;
}

std::string wholeCard(int minor) {
  return R"({"gpu":[{"minor":)" + std::to_string(minor) +
         R"(,"resources":{"koordinator.sh/gpu-core":"100","koordinator.sh/gpu-memory":"16Gi",)"
         R"("koordinator.sh/gpu-memory-ratio":"100"}}]})";
}

struct Fixture {
  Api api;
  metrics::Registry registry;
  Scheduler scheduler{config(), inTreeRegistry(), api, registry};

  Fixture() {
    scheduler.onNodeAdd(gpuNode());
    auto device = std::make_shared<apis::Device>(deviceshare::testing::decode(
        deviceshare::testing::deviceJson({deviceshare::testing::gpuJson({.minor = 0}),
                                          deviceshare::testing::gpuJson({.minor = 1})})));
    device->name = "n1";
    api.devices.set("n1", device);
  }
  void addReservation(std::shared_ptr<const ReservationState> r) {
    api.reservations[r->object->name] = r;
    scheduler.onReservationAdd(r);
  }
  // Schedules a pod asking `ratio` percent of a GPU; the card it was bound to, or nothing.
  std::optional<int> schedule(const std::string& name, int ratio, const std::string& app) {
    auto p = testing::loopPod(name, 100);
    p->labels["app"] = app;
    p->requests.setScalar("koordinator.sh/gpu-memory-ratio", ratio);
    p->non_zero_requests = p->requests;
    api.pods[p->key()] = p;
    scheduler.onPendingPodAdd(p);
    const std::size_t before = api.bound.size();
    REQUIRE(scheduler.scheduleOne());
    if (api.bound.size() == before)
      return std::nullopt;
    auto confirmed = std::make_shared<PodInfo>(*api.bound.back());
    confirmed->node_name = "n1";
    api.pods[p->key()] = confirmed;
    scheduler.onPendingPodDelete(*p);
    scheduler.onAssignedPodAdd(confirmed);
    return minorOf(confirmed->annotations.at(std::string(apis::kAnnotationDeviceAllocated)));
  }
  bool failed(const std::string& pod) const {
    for (const auto& c : api.calls) {
      if (c.rfind("failed default/" + pod + ": ", 0) == 0)
        return true;
    }
    return false;
  }
};

}  // namespace

TEST_CASE("reservation device loop: a reservation's GPU is its owners' alone",
          "[scheduler][loop][deviceshare][reservation]") {
  Fixture f;
  auto pending = reservation();
  f.addReservation(pending);
  REQUIRE(f.scheduler.scheduleOne());
  // Its card goes on the Reservation first, then the status makes it Available.
  REQUIRE(f.api.reservation_patches.size() == 1);
  REQUIRE(f.api.calls.size() >= 2);
  CHECK(f.api.calls[0] == "reservation r1");
  CHECK(f.api.calls[1].rfind("status r1 ", 0) == 0);
  const std::string held = json::value_to<std::string>(f.api.reservation_patches[0]
                                                           .at("metadata")
                                                           .at("annotations")
                                                           .at(apis::kAnnotationDeviceAllocated));
  const int card = minorOf(held);

  auto available = reservation(held);
  f.api.reservations["r1"] = available;
  f.scheduler.onReservationUpdate(*pending, available);

  // A pod owning nothing gets the other card, and then nothing is left for the next.
  auto stranger = f.schedule("stranger", 100, "db");
  REQUIRE(stranger.has_value());
  CHECK(*stranger == 1 - card);
  CHECK_FALSE(f.schedule("late", 50, "db").has_value());
  CHECK(f.failed("late"));

  // Its owners share its card, and a third finds nothing left.
  CHECK(f.schedule("web-1", 50, "web") == card);
  CHECK(f.schedule("web-2", 50, "web") == card);
  CHECK_FALSE(f.schedule("web-3", 50, "web").has_value());
}

TEST_CASE("reservation device loop: a restarted scheduler learns a reservation's GPU from it",
          "[scheduler][loop][deviceshare][reservation]") {
  Fixture f;
  f.addReservation(reservation(wholeCard(1)));
  // Card 1 is held: two pods owning nothing fill card 0 and a third waits.
  CHECK(f.schedule("db-1", 50, "db") == 0);
  CHECK(f.schedule("db-2", 50, "db") == 0);
  CHECK_FALSE(f.schedule("db-3", 50, "db").has_value());
  CHECK(f.schedule("web-1", 100, "web") == 1);
}

TEST_CASE("reservation device loop: a Restricted reservation keeps its owners on its GPU",
          "[scheduler][loop][deviceshare][reservation]") {
  Fixture f;
  f.addReservation(reservation(wholeCard(1), true));
  // Its owners stay on its card while it has room.
  CHECK(f.schedule("web-1", 50, "web") == 1);
  CHECK(f.schedule("web-2", 50, "web") == 1);
  // Spent, it takes no third owner: that one is placed as a pod without a reservation.
  CHECK(f.schedule("web-3", 50, "web") == 0);
  CHECK(f.schedule("db-1", 50, "db") == 0);
  CHECK_FALSE(f.schedule("db-2", 50, "db").has_value());
}

}  // namespace koord::roles::scheduler
