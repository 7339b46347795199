// koord-scheduler's Reservations end to end against the real apiserver: a Reservation scheduled
// and bound by its status, its room kept from other pods and given to its owners (also across a
// scheduler restart), the lifecycle controller's Succeeded and Expired, an unschedulable one's
// Event and condition, and node.koordinator.sh/reservation trimming a node's allocatable. Nodes
// are created through the API (no kubelet needed to bind); [reservation-node] runs an owner pod
// for real on the kubelet node.
#include <signal.h>

#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "cluster_api.h"
#include "cluster_env.h"
#include "koord/kube/quantity.h"
#include "loopback_http.h"
#include "manifests.h"
#include "scheduler_process.h"
#include "subprocess.h"

using namespace std::chrono_literals;
namespace json = boost::json;
using koord::kube::ResourceRef;
using koord::testing::eventually;
using koord::testing::koordBinary;
using koord::testing::KubeApi;
using koord::testing::loopbackGet;
using koord::testing::named;
using koord::testing::nodeOf;
using koord::testing::ok;
using koord::testing::schedulerLeaseHolder;
using koord::testing::str;
using koord::testing::TestNamespace;
using koord::testing::tokenConfig;
using koord::testing::uniqueName;
using namespace koord::testing::resources;

namespace {

// Pods and reservations of this test select its nodes by this label (value: the run's id).
constexpr const char* kNodeLabel = "koord-e2e-resv";
constexpr const char* kAllocatedAnnotation = "scheduling.koordinator.sh/reservation-allocated";
// Every test node has this much CPU; the cases are sized against it.
constexpr std::int64_t kNodeMilliCpu = 4000;

// An API-only node: 4 CPU / 32Gi / 110 pods, labelled for this test and with its hostname label
// (so a pod or a reservation can be pinned to it), with `annotations`.
json::object node(const std::string& name, const std::string& id, json::object annotations = {}) {
  json::object alloc{{"cpu", "4"}, {"memory", "32Gi"}, {"pods", "110"}};
  return json::object{{"apiVersion", "v1"},
                      {"kind", "Node"},
                      {"metadata",
                       {{"name", name},
                        {"labels", {{kNodeLabel, id}, {"kubernetes.io/hostname", name}}},
                        {"annotations", std::move(annotations)}}},
                      {"status", {{"capacity", alloc}, {"allocatable", alloc}}}};
}

// A pause pod for koord-scheduler kept to this test's nodes, requesting `cpu` and 256Mi; with
// `node_name` it is bound already (the "other app" pods that fill a node).
json::object pod(const std::string& name, const std::string& ns, const std::string& id,
                 const std::string& cpu, json::object labels = {},
                 const std::string& node_name = "") {
  return koord::testing::schedulerTestPod(name, ns, kNodeLabel, id,
                                          {{"cpu", cpu}, {"memory", "256Mi"}}, std::move(labels),
                                          "", node_name);
}

// A Reservation for koord-scheduler on this test's nodes: its template asks for `requests`, its
// owners are the pods labelled app=`owner_app`; `extra_spec` adds to the spec (ttl, ...).
json::object reservation(const std::string& name, const std::string& id, json::object requests,
                         const std::string& owner_app, json::object extra_spec = {}) {
  json::object tmpl_spec{
      {"schedulerName", "koord-scheduler"},
      {"nodeSelector", {{kNodeLabel, id}}},
      {"tolerations", json::array{json::object{{"operator", "Exists"}}}},
      {"containers",
       json::array{json::object{{"name", "c"},
                                {"image", "registry.k8s.io/pause:3.2"},
                                {"resources", {{"requests", requests}, {"limits", requests}}}}}}};
  json::object spec{
      {"template",
       {{"metadata", {{"labels", {{"koord-e2e-resv-of", name}}}}}, {"spec", std::move(tmpl_spec)}}},
      {"owners",
       json::array{json::object{{"labelSelector", {{"matchLabels", {{"app", owner_app}}}}}}}}};
  for (const auto& kv : extra_spec)
    spec[kv.key()] = kv.value();
  return json::object{{"apiVersion", "scheduling.koordinator.sh/v1alpha1"},
                      {"kind", "Reservation"},
                      {"metadata", {{"name", name}}},
                      {"spec", std::move(spec)}};
}

std::int64_t milli(const std::string& quantity) {
  if (quantity.empty())
    return 0;
  auto q = koord::kube::Quantity::parse(quantity);
  if (!q)
    FAIL("not a quantity: " << quantity);
  return q->milliValue();
}

// The condition `type` of an object's status as "status/reason/message"; empty without one.
std::string condition(const json::value& obj, const std::string& type) {
  const auto* status = obj.as_object().if_contains("status");
  if (status == nullptr || !status->is_object())
    return "";
  const auto* conds = status->as_object().if_contains("conditions");
  if (conds == nullptr || !conds->is_array())
    return "";
  for (const auto& c : conds->as_array()) {
    if (str(c, {"type"}) == type)
      return str(c, {"status"}) + "/" + str(c, {"reason"}) + "/" + str(c, {"message"});
  }
  return "";
}

// The pod's PodScheduled condition as "status/reason/message"; empty when it has none.
std::string podScheduled(koord::kube::RestClient& api, const std::string& ns,
                         const std::string& name) {
  auto p = api.getSync(named(kPods, name, ns));
  return p ? condition(*p, "PodScheduled") : "";
}

// The reservation as the apiserver has it now; null when it cannot be read.
json::value getReservation(koord::kube::RestClient& api, const std::string& name) {
  auto r = api.getSync(named(kReservations, name));
  return r ? std::move(*r) : json::value(nullptr);
}

std::string phaseOf(koord::kube::RestClient& api, const std::string& name) {
  auto r = getReservation(api, name);
  return r.is_null() ? "" : str(r, {"status", "phase"});
}

// The Events about reservation `name` with `reason`, as "type: message [component]". Events of
// a cluster-scoped object live in "default".
std::vector<std::string> reservationEvents(koord::kube::RestClient& api, const std::string& name,
                                           const std::string& reason) {
  koord::kube::ListOptions o;
  o.field_selector =
      "involvedObject.kind=Reservation,involvedObject.name=" + name + ",reason=" + reason;
  auto list = api.listSync(named(kEvents, "", "default"), o);
  std::vector<std::string> out;
  if (!list)
    return out;
  for (const auto& e : list->at("items").as_array())
    out.push_back(str(e, {"type"}) + ": " + str(e, {"message"}) + " [" +
                  str(e, {"source", "component"}) + "]");
  return out;
}

// The reservation-allocated annotation of a pod as {"name", "uid"}; null without one (or when
// it is not JSON).
json::value allocatedTo(const json::value& pod) {
  const std::string a = str(pod, {"metadata", "annotations", kAllocatedAnnotation});
  boost::system::error_code ec;
  json::value v = json::parse(a, ec);
  return ec ? json::value(nullptr) : v;
}

std::int64_t podMilliCpu(const json::value& pod) {
  std::int64_t sum = 0;
  for (const auto& c : pod.at("spec").at("containers").as_array())
    sum += milli(str(c, {"resources", "requests", "cpu"}));
  return sum;
}

// What the objects say node `node` has promised, in milli-CPU: the requests of the pods of `ns`
// bound there plus, for each Available reservation there, the room its owners have not taken
// (its allocatable less their requests, never below 0). Computed from the pods themselves, not
// status.allocated, which the lifecycle controller writes a moment later. Never above the node's
// allocatable, or some room was handed out twice.
std::int64_t promisedMilliCpu(koord::kube::RestClient& api, const std::string& ns,
                              const std::string& node) {
  koord::kube::ListOptions on_node;
  on_node.field_selector = "spec.nodeName=" + node;
  auto pods = ok(api.listSync(named(kPods, "", ns), on_node), "list the node's pods");
  auto reservations = ok(api.listSync(kReservations), "list reservations");
  std::int64_t total = 0;
  for (const auto& p : pods.at("items").as_array())
    total += podMilliCpu(p);
  for (const auto& r : reservations.at("items").as_array()) {
    if (str(r, {"status", "nodeName"}) != node || str(r, {"status", "phase"}) != "Available")
      continue;
    std::int64_t remaining = milli(str(r, {"status", "allocatable", "cpu"}));
    for (const auto& p : pods.at("items").as_array()) {
      auto a = allocatedTo(p);
      if (!a.is_null() && str(a, {"uid"}) == str(r, {"metadata", "uid"}))
        remaining -= podMilliCpu(p);
    }
    total += std::max<std::int64_t>(remaining, 0);
  }
  return total;
}

using Scheduler = koord::testing::SchedulerProcess;

// A KubeSchedulerConfiguration whose koord-scheduler profile is deploy/manifests'
// (Reservation at preFilter, filter, preScore, score with weight 5000 and reserve; DefaultPreBind
// at preBind), its lease in `lease_ns`, the lifecycle controller resyncing every second. The
// lease is short so that a killed leader's successor takes over within seconds.
void writeSchedulerConfig(const std::filesystem::path& path, const std::string& lease_ns) {
  std::ofstream f(path);
  f << koord::testing::schedulerConfigHeader(lease_ns)
    << "profiles:\n"
       "- schedulerName: koord-scheduler\n"
       "  plugins:\n"
       "    preFilter: {enabled: [{name: Reservation}, {name: LoadAwareScheduling}]}\n"
       "    filter: {enabled: [{name: LoadAwareScheduling}, {name: Reservation}]}\n"
       "    preScore: {enabled: [{name: Reservation}]}\n"
       "    score: {enabled: [{name: LoadAwareScheduling, weight: 1},"
       " {name: Reservation, weight: 5000}]}\n"
       "    reserve: {enabled: [{name: Reservation}, {name: LoadAwareScheduling}]}\n"
       "    preBind: {enabled: [{name: DefaultPreBind}]}\n"
       "  pluginConfig:\n"
       "  - name: Reservation\n"
       "    args:\n"
       "      apiVersion: kubescheduler.config.k8s.io/v1\n"
       "      kind: ReservationArgs\n"
       "      resyncIntervalSeconds: 1\n";
}

// Objects the test made outside its namespaces, and its pods (no kubelet would confirm their
// deletion, and a namespace with such pods never goes): removed whichever way the test ends.
struct Cleanup {
  KubeApi& api;
  std::string ns;
  std::vector<ResourceRef> refs;
  std::vector<std::filesystem::path> files;
  ~Cleanup() {
    koord::testing::removeAllPodsNow(*api, ns);
    for (const auto& r : refs)
      (void)api->removeSync(r);
    for (const auto& f : files) {
      std::error_code ec;
      std::filesystem::remove(f, ec);
    }
  }
};

}  // namespace

TEST_CASE("reservation: room kept for owners, lifecycle, restart, node reservation",
          "[cluster][reservation]") {
  KubeApi api(tokenConfig());
  koord::testing::applyCrds(*api);
  const std::string id = uniqueName("kr");
  TestNamespace sys(*api, "koord-resv-sys");
  koord::testing::PodNamespace work(*api, "koord-resv");
  const std::string ns = work.name();
  const std::string node_a = id + "-a";
  const std::string node_b = id + "-b";
  Cleanup cleanup{api, ns, {}, {}};
  for (const auto& n : {node_a, node_b})
    cleanup.refs.push_back(named(kNodes, n));
  // Reservations are cluster-scoped: each one this run may create is removed by name.
  for (const char* r : {"main", "ttl", "huge"})
    cleanup.refs.push_back(named(kReservations, id + "-" + r));
  ok(api->createSync(kNodes, node(node_a, id)), "create node a");
  ok(api->createSync(kNodes, node(node_b, id)), "create node b");

  const auto config_path = std::filesystem::temp_directory_path() / (id + "-scheduler.yaml");
  cleanup.files.push_back(config_path);
  writeSchedulerConfig(config_path, sys.name());
  auto scheduler = std::make_unique<Scheduler>(config_path.string());
  // Leading, caches synced, serving its probes.
  REQUIRE(eventually(60s, [&] { return !schedulerLeaseHolder(*api, sys.name()).empty(); }));
  REQUIRE(eventually(30s, [&] { return loopbackGet(scheduler->port, "/healthz") == "ok"; }));

  const std::string rname = id + "-main";
  const std::string owner_app = id + "-web";
  // A reservation of 2 CPU for app=<id>-web, Available on one of the nodes. Then the nodes fill
  // with pods of another app, bound directly: 1 CPU beside the reservation, 2 CPU on the other
  // node. Each node then has 2 CPU unpromised at most (1 + the reserved 2 where the reservation
  // is), so a 3-CPU pod fits only by taking the reserved room, and a 2-CPU owner fits in the
  // reservation or the other node's free room (the Reservation score must pick the former).
  std::string res_node, other_node, res_uid;
  auto reserveAndFill = [&] {
    ok(api->createSync(kReservations,
                       reservation(rname, id, {{"cpu", "2"}, {"memory", "1Gi"}}, owner_app)),
       "create reservation");
    json::value r;
    REQUIRE(eventually(30s, [&] {
      r = getReservation(*api, rname);
      return !r.is_null() && str(r, {"status", "phase"}) == "Available";
    }));
    INFO(json::serialize(r));
    res_node = str(r, {"status", "nodeName"});
    REQUIRE((res_node == node_a || res_node == node_b));
    other_node = res_node == node_a ? node_b : node_a;
    res_uid = str(r, {"metadata", "uid"});
    CHECK(str(r, {"status", "allocatable", "cpu"}) == "2");
    CHECK(str(r, {"status", "allocatable", "memory"}) == "1Gi");
    CHECK(condition(r, "Scheduled").rfind("True/", 0) == 0);
    CHECK(condition(r, "Ready").rfind("True/", 0) == 0);
    ok(api->createSync(named(kPods, "", ns),
                       pod("other-1", ns, id, "1", {{"app", id + "-other"}}, res_node)),
       "create other-1");
    ok(api->createSync(named(kPods, "", ns),
                       pod("other-2", ns, id, "2", {{"app", id + "-other"}}, other_node)),
       "create other-2");
  };
  // The 3-CPU pod of another app stays Pending, for want of CPU.
  auto nonOwnerKeptOut = [&] {
    ok(api->createSync(named(kPods, "", ns), pod("intruder", ns, id, "3", {{"app", id + "-db"}})),
       "create intruder");
    REQUIRE(eventually(30s, [&] {
      return podScheduled(*api, ns, "intruder").rfind("False/Unschedulable/", 0) == 0;
    }));
    CHECK_THAT(podScheduled(*api, ns, "intruder"), Catch::Contains("Insufficient cpu"));
    CHECK(nodeOf(*api, ns, "intruder").empty());
  };
  // The 2-CPU owner lands in the reservation, says so, and the allocate-once reservation is then
  // Succeeded with the owner listed.
  auto ownerPlaced = [&] {
    ok(api->createSync(named(kPods, "", ns), pod("owner", ns, id, "2", {{"app", owner_app}})),
       "create owner");
    REQUIRE(eventually(30s, [&] { return !nodeOf(*api, ns, "owner").empty(); }));
    auto p = ok(api->getSync(named(kPods, "owner", ns)), "get owner");
    INFO(json::serialize(p));
    CHECK(str(p, {"spec", "nodeName"}) == res_node);
    auto allocated = allocatedTo(p);
    REQUIRE_FALSE(allocated.is_null());
    CHECK(str(allocated, {"name"}) == rname);
    CHECK(str(allocated, {"uid"}) == res_uid);
    const std::string owner_uid = str(p, {"metadata", "uid"});

    json::value r;
    REQUIRE(eventually(30s, [&] {
      r = getReservation(*api, rname);
      return !r.is_null() && str(r, {"status", "phase"}) == "Succeeded";
    }));
    INFO(json::serialize(r));
    const auto* owners = r.at("status").as_object().if_contains("currentOwners");
    REQUIRE(owners != nullptr);
    REQUIRE(owners->is_array());
    REQUIRE(owners->as_array().size() == 1);
    const auto& o = owners->as_array()[0];
    CHECK(str(o, {"name"}) == "owner");
    CHECK(str(o, {"namespace"}) == ns);
    CHECK(str(o, {"uid"}) == owner_uid);
    CHECK(condition(r, "Ready").rfind("False/Succeeded", 0) == 0);
    // Its room went to the owner: the intruder still does not fit.
    std::this_thread::sleep_for(2s);
    CHECK(nodeOf(*api, ns, "intruder").empty());
  };
  auto neverOverPromised = [&] {
    for (const auto& n : {node_a, node_b}) {
      INFO(n);
      CHECK(promisedMilliCpu(*api, ns, n) <= kNodeMilliCpu);
    }
  };

  SECTION("a reservation keeps its room from other pods and gives it to an owner") {
    reserveAndFill();
    nonOwnerKeptOut();
    neverOverPromised();
    ownerPlaced();
    neverOverPromised();
  }

  SECTION("a restarted scheduler keeps the reservation's room") {
    reserveAndFill();
    const std::string first_holder = schedulerLeaseHolder(*api, sys.name());
    scheduler->kill();
    // The successor rebuilds the room from the objects alone: the Available reservation and
    // the pods bound around it, whichever its informers list first.
    auto second = std::make_unique<Scheduler>(config_path.string());
    REQUIRE(eventually(60s, [&] {
      const std::string h = schedulerLeaseHolder(*api, sys.name());
      return !h.empty() && h != first_holder;
    }));
    REQUIRE(eventually(30s, [&] { return loopbackGet(second->port, "/healthz") == "ok"; }));
    CHECK(phaseOf(*api, rname) == "Available");
    nonOwnerKeptOut();
    neverOverPromised();
    ownerPlaced();
    neverOverPromised();
  }

  SECTION("a reservation past its ttl expires") {
    // It fits, so it becomes Available first and expires from there: nodeName stays set.
    const std::string ttl_name = id + "-ttl";
    const auto created = std::chrono::steady_clock::now();
    ok(api->createSync(kReservations, reservation(ttl_name, id, {{"cpu", "4"}, {"memory", "1Gi"}},
                                                  owner_app, {{"ttl", "3s"}})),
       "create ttl reservation");
    json::value r;
    REQUIRE(eventually(30s, [&] {
      r = getReservation(*api, ttl_name);
      return !r.is_null() && str(r, {"status", "phase"}) == "Failed";
    }));
    // creationTimestamp has whole seconds, so expiry comes 2 to 3 s after the create returned.
    CHECK(std::chrono::steady_clock::now() - created >= 2s);
    INFO(json::serialize(r));
    CHECK(condition(r, "Ready").rfind("False/Expired", 0) == 0);
    const std::string was_on = str(r, {"status", "nodeName"});
    CHECK((was_on == node_a || was_on == node_b));
    // An expired reservation holds nothing: two pods taking a whole node each both fit.
    for (const char* name : {"whole-1", "whole-2"})
      ok(api->createSync(named(kPods, "", ns), pod(name, ns, id, "4")), "create whole-node pod");
    for (const char* name : {"whole-1", "whole-2"}) {
      INFO(name << ": " << podScheduled(*api, ns, name));
      CHECK(eventually(30s, [&] { return !nodeOf(*api, ns, name).empty(); }));
    }
  }

  SECTION("an unschedulable reservation gets an Event and a condition and stays Pending") {
    const std::string huge = id + "-huge";
    ok(api->createSync(kReservations,
                       reservation(huge, id, {{"cpu", "100"}, {"memory", "1Gi"}}, owner_app)),
       "create huge reservation");
    json::value r;
    REQUIRE(eventually(30s, [&] {
      r = getReservation(*api, huge);
      return !r.is_null() && condition(r, "Scheduled").rfind("False/Unschedulable/", 0) == 0;
    }));
    INFO(json::serialize(r));
    CHECK_THAT(condition(r, "Scheduled"), Catch::Contains("Insufficient cpu"));
    std::vector<std::string> events;
    CHECK(eventually(20s, [&] {
      events = reservationEvents(*api, huge, "FailedScheduling");
      for (const auto& e : events) {
        if (e.rfind("Warning: ", 0) == 0 && e.find("Insufficient cpu") != std::string::npos &&
            e.find("[koord-scheduler]") != std::string::npos)
          return true;
      }
      return false;
    }));
    for (const auto& e : events)
      UNSCOPED_INFO("event: " << e);
    // Retried with backoff, never placed.
    std::this_thread::sleep_for(3s);
    r = getReservation(*api, huge);
    CHECK(str(r, {"status", "phase"}) == "Pending");
    CHECK(str(r, {"status", "nodeName"}).empty());
  }

  SECTION("node.koordinator.sh/reservation is kept from a node's allocatable") {
    // Two more nodes keep 3 of their 4 CPUs for work outside Kubernetes, by resources and by
    // CPU ids: each takes one 1-CPU pod and no second.
    const std::string by_resources = id + "-c";
    const std::string by_cpus = id + "-d";
    cleanup.refs.push_back(named(kNodes, by_resources));
    cleanup.refs.push_back(named(kNodes, by_cpus));
    ok(api->createSync(kNodes,
                       node(by_resources, id,
                            {{"node.koordinator.sh/reservation", R"({"resources":{"cpu":"3"}})"}})),
       "create node c");
    ok(api->createSync(
           kNodes,
           node(by_cpus, id, {{"node.koordinator.sh/reservation", R"({"reservedCPUs":"0-2"})"}})),
       "create node d");
    for (const auto& n : {by_resources, by_cpus}) {
      INFO(n);
      // Pinned to the node by its hostname label; the second only once the first is bound.
      auto pinned = [&](const std::string& name) {
        auto p = pod(name, ns, id, "1");
        p["spec"].as_object()["nodeSelector"].as_object()["kubernetes.io/hostname"] = n;
        ok(api->createSync(named(kPods, "", ns), p), "create pod");
      };
      const std::string first = n + "-1";
      const std::string second = n + "-2";
      pinned(first);
      REQUIRE(eventually(30s, [&] { return nodeOf(*api, ns, first) == n; }));
      pinned(second);
      REQUIRE(eventually(30s, [&] {
        return podScheduled(*api, ns, second).rfind("False/Unschedulable/", 0) == 0;
      }));
      CHECK_THAT(podScheduled(*api, ns, second), Catch::Contains("Insufficient cpu"));
      CHECK(nodeOf(*api, ns, second).empty());
    }
  }
}

TEST_CASE("reservation: an owner placed into a reservation runs on the kubelet node",
          "[reservation-node]") {
  KubeApi api(tokenConfig());
  koord::testing::applyCrds(*api);
  const auto env = koord::testing::readClusterEnv();
  const std::string node = koord::testing::needEnv(env, "KOORD_NODE_NAME");
  const std::string image = koord::testing::needEnv(env, "KOORD_TEST_IMAGE");
  const std::string id = uniqueName("krn");
  TestNamespace sys(*api, "koord-resv-sys");
  koord::testing::PodNamespace work(*api, "koord-resv-node");
  const std::string ns = work.name();
  const std::string rname = id + "-r";
  const std::string owner_app = id + "-web";
  Cleanup cleanup{api, ns, {named(kReservations, rname)}, {}};
  const auto config_path = std::filesystem::temp_directory_path() / (id + "-scheduler.yaml");
  cleanup.files.push_back(config_path);
  writeSchedulerConfig(config_path, sys.name());
  Scheduler scheduler(config_path.string());
  REQUIRE(eventually(60s, [&] { return !schedulerLeaseHolder(*api, sys.name()).empty(); }));
  REQUIRE(eventually(30s, [&] { return loopbackGet(scheduler.port, "/healthz") == "ok"; }));

  // The template names the node: the scheduler reads that as required affinity to it. Requests
  // are small: the node is the machine, and other node tests run pods there too.
  auto r = reservation(rname, id, {{"cpu", "100m"}, {"memory", "64Mi"}}, owner_app);
  auto& tmpl = r["spec"].as_object()["template"].as_object()["spec"].as_object();
  tmpl.erase("nodeSelector");
  tmpl["nodeName"] = node;
  ok(api->createSync(kReservations, r), "create reservation");
  json::value got;
  REQUIRE(eventually(30s, [&] {
    got = getReservation(*api, rname);
    return !got.is_null() && str(got, {"status", "phase"}) == "Available";
  }));
  INFO(json::serialize(got));
  REQUIRE(str(got, {"status", "nodeName"}) == node);
  const std::string res_uid = str(got, {"metadata", "uid"});

  // An owner the node can run: host network (its CNI is loopback only), the local image.
  json::object requests{{"cpu", "100m"}, {"memory", "64Mi"}};
  json::object owner{
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata", {{"name", "owner"}, {"namespace", ns}, {"labels", {{"app", owner_app}}}}},
      {"spec",
       {{"schedulerName", "koord-scheduler"},
        {"nodeSelector", {{"kubernetes.io/hostname", node}}},
        {"hostNetwork", true},
        {"terminationGracePeriodSeconds", 1},
        {"containers", json::array{json::object{
                           {"name", "main"},
                           {"image", image},
                           {"imagePullPolicy", "Never"},
                           {"command", json::array{"sleep", "3600"}},
                           {"resources", {{"requests", requests}, {"limits", requests}}}}}}}}};
  ok(api->createSync(named(kPods, "", ns), owner), "create owner");
  json::value p;
  REQUIRE(eventually(120s, [&] {
    auto cur = api->getSync(named(kPods, "owner", ns));
    if (cur)
      p = *cur;
    return cur && str(*cur, {"status", "phase"}) == "Running";
  }));
  INFO(json::serialize(p));
  CHECK(str(p, {"spec", "nodeName"}) == node);
  auto allocated = allocatedTo(p);
  REQUIRE_FALSE(allocated.is_null());
  CHECK(str(allocated, {"name"}) == rname);
  CHECK(str(allocated, {"uid"}) == res_uid);
  CHECK(eventually(30s, [&] { return phaseOf(*api, rname) == "Succeeded"; }));

  // A kubelet confirms this deletion: wait for it, so the node is clean for the next test.
  (void)api->removeSync(named(kPods, "owner", ns));
  CHECK(eventually(90s, [&] { return !api->getSync(named(kPods, "owner", ns)).has_value(); }));
}
