// The scheduling loop with reservations holding CPUs: a Reservation whose template is an LSR pod
// gets CPUs of its own, written on the Reservation before it turns Available; other pods never
// get them, its owner pods are bound within them, and a restarted scheduler learns them from the
// Reservation's annotation.
#include <boost/json.hpp>

#include <catch2/catch.hpp>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "config/scheduler_config.h"
#include "framework/plugin_registry.h"
#include "koord/apis/extension.h"
#include "koord/apis/node_resource_topology.h"
#include "koord/core/metrics.h"
#include "loop_api.h"
#include "loop_objects.h"
#include "plugins/nodenumaresource/node_numa_resource.h"
#include "plugins/nodenumaresource/resource_spec.h"
#include "scheduler.h"
#include "scheduler/map_object_source.h"

namespace koord::roles::scheduler {
namespace {

namespace json = boost::json;
namespace nnr = nodenumaresource;

using Api = testing::LoopApi;

config::SchedulerConfig config() {
  const char* text =
      "apiVersion: kubescheduler.config.k8s.io/v1beta2\n"
      "kind: KubeSchedulerConfiguration\n"
      "profiles:\n- schedulerName: koord-scheduler\n"
      "  plugins:\n"
      "    preFilter: {enabled: [{name: Reservation}, {name: NodeNUMAResource}]}\n"
      "    filter: {enabled: [{name: Reservation}, {name: NodeNUMAResource}]}\n"
      "    preScore: {enabled: [{name: Reservation}]}\n"
      "    score: {enabled: [{name: Reservation, weight: 5000}, {name: NodeNUMAResource}]}\n"
      // NodeNUMAResource first: it must read the nomination, not the Reservation plugin's order.
      "    reserve: {enabled: [{name: NodeNUMAResource}, {name: Reservation}]}\n"
      "    preBind: {enabled: [{name: DefaultPreBind}]}\n";
  auto cfg = config::parseSchedulerConfigText(text, inTreeRegistry());
  REQUIRE(cfg.has_value());
  return std::move(*cfg);
}

// An LSR Reservation of `cpus` CPUs for pods labelled app=web, reusable by several owners;
// Available on n1 holding `held` (a resource-status) when that is given.
std::shared_ptr<const ReservationState> reservation(int cpus, const std::string& held = "") {
  auto r = std::make_shared<apis::Reservation>();
  r->name = "r1";
  r->uid = "uid-r1";
  apis::ReservationOwner owner;
  owner.label_selector = kube::LabelSelector{{{"app", "web"}}, {}};
  owner.selector = kube::Selector::fromSet({{"app", "web"}});
  r->owners.push_back(owner);
  r->allocate_once = false;
  r->pod_template = std::make_shared<json::value>(json::parse(
      R"({"metadata": {"labels": {"koordinator.sh/qosClass": "LSR"}},
          "spec": {"schedulerName": "koord-scheduler", "containers": [{"name": "c",
          "resources": {"requests": {"cpu": ")" +
      std::to_string(cpus) + R"(", "memory": "1Gi"}}}]}})"));
  if (!held.empty()) {
    r->phase = apis::ReservationPhase::kAvailable;
    r->node_name = "n1";
    r->allocatable["cpu"] = kube::Quantity::fromMilli(cpus * 1000);
    r->annotations[std::string(apis::kAnnotationResourceStatus)] = held;
  }
  auto state = std::make_shared<ReservationState>();
  state->reserve_pod = std::make_shared<const PodInfo>(reservePodOf(*r).value());
  state->object = std::move(r);
  return state;
}

struct Fixture {
  Api api;
  metrics::Registry registry;
  Scheduler scheduler{config(), inTreeRegistry(), api, registry};

  explicit Fixture(const std::string& topology_policy = "") {
    api.topologies.set("n1", testing::loopTopology("n1", topology_policy));
    scheduler.onNodeAdd(testing::loopNode("n1", 16000));
  }
  std::shared_ptr<PodInfo> lsrPod(const std::string& name, int cpus, const std::string& app) {
    auto p = testing::loopPod(name, cpus * 1000);
    p->labels[std::string(apis::kLabelPodQoS)] = "LSR";
    p->labels["app"] = app;
    p->qos = apis::QoSClass::kLSR;
    p->priority_class = apis::PriorityClass::kProd;
    return p;
  }
  void addReservation(std::shared_ptr<const ReservationState> r) {
    api.reservations[r->object->name] = r;
    scheduler.onReservationAdd(r);
  }
  // Schedules the pod; its CPUs when bound, nothing when it failed.
  std::optional<nnr::CpuSet> schedule(std::shared_ptr<PodInfo> p) {
    api.pods[p->key()] = p;
    scheduler.onPendingPodAdd(p);
    const std::size_t before = api.bound.size();
    REQUIRE(scheduler.scheduleOne());
    if (api.bound.size() == before)
      return std::nullopt;
    auto bound = api.bound.back();
    auto status = nnr::podResourceStatus(bound->annotations);
    REQUIRE(status.has_value());
    REQUIRE(status->has_value());
    // The informer confirms the binding, annotations and all.
    auto confirmed = std::make_shared<PodInfo>(*bound);
    confirmed->node_name = "n1";
    api.pods[p->key()] = confirmed;
    scheduler.onPendingPodDelete(*p);
    scheduler.onAssignedPodAdd(confirmed);
    return (*status)->cpuset;
  }
  // The CPUs NodeNUMAResource counts as held on n1.
  nnr::CpuSet heldCpus() {
    auto* plugin = dynamic_cast<nnr::NodeNUMAResource*>(scheduler.findPlugin("NodeNUMAResource"));
    REQUIRE(plugin != nullptr);
    return plugin->cache().read(
        "n1", [](const nnr::NodeTopologyState& s) { return s.allocation.allocatedCpuSet(); });
  }
};

nnr::CpuSet cpusOf(const std::string& resource_status) {
  kube::Annotations a{{std::string(apis::kAnnotationResourceStatus), resource_status}};
  auto status = nnr::podResourceStatus(a);
  REQUIRE(status.has_value());
  REQUIRE(status->has_value());
  return (*status)->cpuset;
}

}  // namespace

TEST_CASE("reservation numa loop: a reservation's CPUs are its owners' alone",
          "[scheduler][loop][nodenumaresource][reservation]") {
  Fixture f;
  auto pending = reservation(4);
  f.addReservation(pending);
  REQUIRE(f.scheduler.scheduleOne());
  // Its CPUs go on the Reservation first, then the status makes it Available.
  REQUIRE(f.api.reservation_patches.size() == 1);
  REQUIRE(f.api.calls.size() >= 2);
  CHECK(f.api.calls[0] == "reservation r1");
  CHECK(f.api.calls[1].rfind("status r1 ", 0) == 0);
  const json::value& patch = f.api.reservation_patches[0];
  const std::string held = json::value_to<std::string>(
      patch.at("metadata").at("annotations").at(apis::kAnnotationResourceStatus));
  const nnr::CpuSet reserved = cpusOf(held);
  REQUIRE(reserved.size() == 4);

  // The informer shows it Available with its annotation.
  auto available = reservation(4, held);
  f.api.reservations["r1"] = available;
  f.scheduler.onReservationUpdate(*pending, available);

  // A pod owning nothing gets the other 12 CPUs, and nothing more is left for the next.
  auto stranger = f.schedule(f.lsrPod("stranger", 12, "db"));
  REQUIRE(stranger.has_value());
  CHECK_FALSE(stranger->intersects(reserved));
  // Every CPU is taken now, the reservation's included.
  CHECK(f.heldCpus() == (reserved | *stranger));
  CHECK(f.heldCpus().size() == 16);

  // Its owners are bound within it, each to CPUs the other does not hold.
  auto web1 = f.schedule(f.lsrPod("web-1", 2, "web"));
  REQUIRE(web1.has_value());
  CHECK(web1->size() == 2);
  CHECK(web1->isSubsetOf(reserved));
  auto web2 = f.schedule(f.lsrPod("web-2", 2, "web"));
  REQUIRE(web2.has_value());
  CHECK(*web2 == reserved - *web1);
}

TEST_CASE("reservation numa loop: a restarted scheduler learns a reservation's CPUs from it",
          "[scheduler][loop][nodenumaresource][reservation]") {
  Fixture f;
  f.addReservation(reservation(4, R"({"cpuset":"4-7"})"));
  CHECK(f.heldCpus() == nnr::CpuSet{4, 5, 6, 7});
  // A pod owning nothing and asking 12 gets every CPU but the reservation's.
  auto stranger = f.schedule(f.lsrPod("stranger", 12, "db"));
  REQUIRE(stranger.has_value());
  CHECK(*stranger == nnr::CpuSet{0, 1, 2, 3, 8, 9, 10, 11, 12, 13, 14, 15});
  auto web1 = f.schedule(f.lsrPod("web-1", 4, "web"));
  REQUIRE(web1.has_value());
  CHECK(*web1 == nnr::CpuSet{4, 5, 6, 7});

  SECTION("the reservation's end frees what no owner holds") {
    auto gone = *f.api.reservations["r1"];
    f.scheduler.onReservationDelete(gone);
    auto* plugin = dynamic_cast<nnr::NodeNUMAResource*>(f.scheduler.findPlugin("NodeNUMAResource"));
    REQUIRE(plugin != nullptr);
    CHECK(plugin->cache().read("n1", [](const nnr::NodeTopologyState& s) {
      return s.allocation.find("uid-r1") == nullptr;
    }));
    // The owners still hold theirs.
    CHECK(f.heldCpus() == (*stranger | *web1));
  }
}

TEST_CASE("reservation numa loop: a NUMA-aligned owner takes the reservation's NUMA room back",
          "[scheduler][loop][nodenumaresource][reservation]") {
  // A SingleNUMANode node (two NUMA nodes of 8 CPUs) where the reservation holds CPUs 0-5 and
  // their room on NUMA node 0.
  Fixture f("SingleNUMANodePodLevel");
  f.addReservation(reservation(
      6, R"({"cpuset":"0-5","numaNodeResources":[{"node":0,"resources":{"cpu":"6"}}]})"));
  // A stranger takes the whole of NUMA node 1: node 0 has 2 CPUs of room left.
  auto stranger = f.schedule(f.lsrPod("stranger", 8, "db"));
  REQUIRE(stranger.has_value());
  CHECK(*stranger == nnr::CpuSet{8, 9, 10, 11, 12, 13, 14, 15});
  // Another stranger asking 4 fits no NUMA node.
  CHECK_FALSE(f.schedule(f.lsrPod("stranger-2", 4, "db")).has_value());
  // The owner asking 4 counts the reservation's room on node 0 as its own, and is bound within
  // its CPUs.
  auto web = f.schedule(f.lsrPod("web-1", 4, "web"));
  REQUIRE(web.has_value());
  CHECK(web->size() == 4);
  CHECK(web->isSubsetOf(nnr::CpuSet{0, 1, 2, 3, 4, 5}));
}

}  // namespace koord::roles::scheduler
