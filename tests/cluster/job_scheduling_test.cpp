// koord-scheduler's job scheduling end to end against the real apiserver, with the chart's
// plugins: a gang that does not fit binds none and then all at once, two competing gangs never
// deadlock, a PodGroup's status follows its gang, a namespace quota leaves the pod past its max
// Pending with the quota's reason, and a child that borrowed its sibling's min gives it back.
// Nodes are created through the API (no kubelet needed to bind).
#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "audit_log.h"
#include "cluster_api.h"
#include "cluster_env.h"
#include "loopback_http.h"
#include "manifests.h"
#include "scheduler_process.h"

using namespace std::chrono_literals;
namespace json = boost::json;
using koord::kube::ResourceRef;
using koord::testing::auditEntries;
using koord::testing::eventually;
using koord::testing::KubeApi;
using koord::testing::loopbackGet;
using koord::testing::named;
using koord::testing::ok;
using koord::testing::schedulerLeaseHolder;
using koord::testing::str;
using koord::testing::TestNamespace;
using koord::testing::tokenConfig;
using koord::testing::uniqueName;
using namespace koord::testing::resources;

namespace {

constexpr const char* kNodeLabel = "koord-e2e-jobs";
const ResourceRef kPodGroups{"scheduling.sigs.k8s.io", "v1alpha1", "podgroups", "", "", ""};
const ResourceRef kElasticQuotas{"scheduling.sigs.k8s.io", "v1alpha1", "elasticquotas", "", "", ""};

// An API-only node of `cpu` cores, labelled with the scenario's id.
json::object node(const std::string& name, const std::string& id, const std::string& cpu) {
  json::object alloc{{"cpu", cpu}, {"memory", "32Gi"}, {"pods", "110"}};
  return json::object{
      {"apiVersion", "v1"},
      {"kind", "Node"},
      {"metadata",
       {{"name", name}, {"labels", {{kNodeLabel, id}, {"kubernetes.io/hostname", name}}}}},
      {"status", {{"capacity", alloc}, {"allocatable", alloc}}}};
}

json::object pod(const std::string& name, const std::string& ns, const std::string& id,
                 const std::string& cpu, json::object labels = {}, json::object annotations = {}) {
  auto p = koord::testing::schedulerTestPod(name, ns, kNodeLabel, id,
                                            {{"cpu", cpu}, {"memory", "256Mi"}}, std::move(labels));
  p["metadata"].as_object()["annotations"] = std::move(annotations);
  return p;
}

json::object gangAnnotations(const std::string& gang, int min) {
  return {{"gang.scheduling.koordinator.sh/name", gang},
          {"gang.scheduling.koordinator.sh/min-available", std::to_string(min)}};
}

json::object quota(const std::string& name, const std::string& ns, const std::string& min,
                   const std::string& max, json::object labels = {}) {
  return json::object{
      {"apiVersion", "scheduling.sigs.k8s.io/v1alpha1"},
      {"kind", "ElasticQuota"},
      {"metadata", {{"name", name}, {"namespace", ns}, {"labels", std::move(labels)}}},
      {"spec", {{"min", {{"cpu", min}}}, {"max", {{"cpu", max}}}}}};
}

// The nodes pods of `ns` are bound to, by pod name ("" while unbound).
std::map<std::string, std::string> placements(koord::kube::RestClient& api, const std::string& ns) {
  std::map<std::string, std::string> out;
  auto list = api.listSync(named(kPods, "", ns));
  if (!list)
    return out;
  for (const auto& p : list->at("items").as_array())
    out[str(p, {"metadata", "name"})] = str(p, {"spec", "nodeName"});
  return out;
}

std::size_t boundCount(const std::map<std::string, std::string>& m) {
  std::size_t n = 0;
  for (const auto& [name, node] : m)
    n += node.empty() ? 0 : 1;
  return n;
}

std::string podScheduledMessage(koord::kube::RestClient& api, const std::string& ns,
                                const std::string& name) {
  auto p = api.getSync(named(kPods, name, ns));
  if (!p)
    return "";
  const auto* conds = p->at("status").as_object().if_contains("conditions");
  if (conds == nullptr || !conds->is_array())
    return "";
  for (const auto& c : conds->as_array()) {
    if (str(c, {"type"}) == "PodScheduled")
      return str(c, {"status"}) + "/" + str(c, {"message"});
  }
  return "";
}

// The chart's koord-scheduler profile, its lease in `lease_ns`; ElasticQuota revokes quickly so
// that the revoke case runs in seconds.
void writeSchedulerConfig(const std::filesystem::path& path, const std::string& lease_ns) {
  std::ofstream f(path);
  f << koord::testing::schedulerConfigHeader(lease_ns)
    << "profiles:\n"
       "- schedulerName: koord-scheduler\n"
       "  plugins:\n"
       "    queueSort: {disabled: [{name: '*'}], enabled: [{name: Coscheduling}]}\n"
       "    preFilter: {enabled: [{name: Reservation}, {name: Coscheduling},"
       " {name: ElasticQuota}]}\n"
       "    filter: {enabled: [{name: Reservation}]}\n"
       "    postFilter: {disabled: [{name: '*'}], enabled: [{name: Coscheduling},"
       " {name: ElasticQuota}, {name: DefaultPreemption}]}\n"
       "    reserve: {enabled: [{name: Reservation}, {name: Coscheduling}, {name: ElasticQuota}]}\n"
       "    permit: {enabled: [{name: Coscheduling}]}\n"
       "    preBind: {enabled: [{name: DefaultPreBind}]}\n"
       "    postBind: {enabled: [{name: Coscheduling}]}\n"
       "  pluginConfig:\n"
       "  - name: Coscheduling\n"
       "    args: {apiVersion: kubescheduler.config.k8s.io/v1, kind: CoschedulingArgs,"
       " defaultTimeout: 30s}\n"
       "  - name: ElasticQuota\n"
       "    args: {apiVersion: kubescheduler.config.k8s.io/v1, kind: ElasticQuotaArgs,"
       " monitorAllQuotas: true, delayEvictTime: 2s, revokePodInterval: 1s}\n";
}

// Nodes and files the test made, and the pods of its namespaces (no kubelet confirms their
// deletion): removed whichever way the test ends.
struct Cleanup {
  KubeApi& api;
  std::vector<std::string> namespaces;
  std::vector<ResourceRef> refs;
  std::vector<std::filesystem::path> files;
  ~Cleanup() {
    for (const auto& ns : namespaces)
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

TEST_CASE("job scheduling: gangs bind all or none, quotas hold and give back", "[cluster][jobs]") {
  KubeApi api(tokenConfig());
  koord::testing::applyCrds(*api);
  const std::string id = uniqueName("kj");
  TestNamespace sys(*api, "koord-jobs-sys");
  Cleanup cleanup{api, {}, {}, {}};
  auto makeNode = [&](const std::string& name, const std::string& label, const std::string& cpu) {
    cleanup.refs.push_back(named(kNodes, name));
    ok(api->createSync(kNodes, node(name, label, cpu)), "create node");
  };

  const auto config_path = std::filesystem::temp_directory_path() / (id + "-scheduler.yaml");
  cleanup.files.push_back(config_path);
  writeSchedulerConfig(config_path, sys.name());
  koord::testing::SchedulerProcess scheduler(config_path.string());
  REQUIRE(eventually(60s, [&] { return !schedulerLeaseHolder(*api, sys.name()).empty(); }));
  REQUIRE(eventually(30s, [&] { return loopbackGet(scheduler.port, "/healthz") == "ok"; }));

  SECTION("a gang of 3 with room for 2 binds none, then all 3 once room appears") {
    koord::testing::PodNamespace work(*api, "koord-gang");
    cleanup.namespaces.push_back(work.name());
    const std::string label = id + "-g";
    makeNode(label + "-1", label, "4");
    for (const char* name : {"a", "b", "c"})
      ok(api->createSync(named(kPods, "", work.name()),
                         pod(name, work.name(), label, "2", {}, gangAnnotations("g", 3))),
         "create gang pod");
    // Given time for several rounds, not one member binds.
    std::this_thread::sleep_for(8s);
    CHECK(boundCount(placements(*api, work.name())) == 0);
    CHECK(podScheduledMessage(*api, work.name(), "c").rfind("False/", 0) == 0);

    makeNode(label + "-2", label, "4");
    const auto start = std::chrono::steady_clock::now();
    REQUIRE(eventually(60s, [&] { return boundCount(placements(*api, work.name())) == 3; }));
    const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - start);
    WARN("the gang bound " << took.count() << " ms after the room appeared");
  }

  SECTION("two gangs that fit alone but not together: one completes, the other holds nothing") {
    koord::testing::PodNamespace work(*api, "koord-gangs");
    cleanup.namespaces.push_back(work.name());
    const std::string label = id + "-c";
    makeNode(label + "-1", label, "4");
    makeNode(label + "-2", label, "4");
    // Each gang needs 3 x 2 CPU; the two nodes hold 4 such pods.
    for (const char* n : {"1", "2", "3"}) {
      ok(api->createSync(
             named(kPods, "", work.name()),
             pod(std::string("x") + n, work.name(), label, "2", {}, gangAnnotations("x", 3))),
         "create x");
      ok(api->createSync(
             named(kPods, "", work.name()),
             pod(std::string("y") + n, work.name(), label, "2", {}, gangAnnotations("y", 3))),
         "create y");
    }
    REQUIRE(eventually(60s, [&] { return boundCount(placements(*api, work.name())) == 3; }));
    std::this_thread::sleep_for(5s);
    auto m = placements(*api, work.name());
    std::set<char> bound_gangs;
    for (const auto& [name, node_name] : m) {
      if (!node_name.empty())
        bound_gangs.insert(name[0]);
    }
    CHECK(boundCount(m) == 3);
    CHECK(bound_gangs.size() == 1);
  }

  SECTION("a PodGroup's status follows its gang") {
    koord::testing::PodNamespace work(*api, "koord-podgroup");
    cleanup.namespaces.push_back(work.name());
    const std::string label = id + "-p";
    makeNode(label + "-1", label, "8");
    ok(api->createSync(named(kPodGroups, "", work.name()),
                       json::object{{"apiVersion", "scheduling.sigs.k8s.io/v1alpha1"},
                                    {"kind", "PodGroup"},
                                    {"metadata", {{"name", "pg"}, {"namespace", work.name()}}},
                                    {"spec", {{"minMember", 2}}}}),
       "create PodGroup");
    for (const char* name : {"m1", "m2"})
      ok(api->createSync(
             named(kPods, "", work.name()),
             pod(name, work.name(), label, "1", {{"pod-group.scheduling.sigs.k8s.io", "pg"}})),
         "create member");
    REQUIRE(eventually(60s, [&] { return boundCount(placements(*api, work.name())) == 2; }));
    json::value g;
    REQUIRE(eventually(30s, [&] {
      auto r = api->getSync(named(kPodGroups, "pg", work.name()));
      if (!r)
        return false;
      g = *r;
      return str(g, {"status", "phase"}) == "Scheduled";
    }));
    CHECK(g.at("status").at("scheduled").as_int64() == 2);
  }

  SECTION("a namespace quota of 2 CPU admits two 1-CPU pods and leaves the third Pending") {
    koord::testing::PodNamespace work(*api, "koord-quota");
    cleanup.namespaces.push_back(work.name());
    const std::string label = id + "-q";
    makeNode(label + "-1", label, "8");
    ok(api->createSync(named(kElasticQuotas, "", work.name()),
                       quota(work.name(), work.name(), "2", "2")),
       "create quota");
    // The scheduler sees the quota before the pods.
    std::this_thread::sleep_for(2s);
    for (const char* name : {"q1", "q2", "q3"})
      ok(api->createSync(named(kPods, "", work.name()), pod(name, work.name(), label, "1")),
         "create pod");
    REQUIRE(eventually(60s, [&] { return boundCount(placements(*api, work.name())) == 2; }));
    std::string pending;
    for (const auto& [name, node_name] : placements(*api, work.name())) {
      if (node_name.empty())
        pending = name;
    }
    REQUIRE_FALSE(pending.empty());
    std::string why;
    REQUIRE(eventually(30s, [&] {
      why = podScheduledMessage(*api, work.name(), pending);
      return why.find("Insufficient quotas") != std::string::npos;
    }));
    CHECK(why.find(work.name()) != std::string::npos);
    CHECK(why.find("cpu") != std::string::npos);
    // The quota's status says what it uses.
    REQUIRE(eventually(30s, [&] {
      auto q = api->getSync(named(kElasticQuotas, work.name(), work.name()));
      return q && str(*q, {"status", "used", "cpu"}) == "2";
    }));
  }

  SECTION("a child borrowing its sibling's idle min gives it back when the sibling's pods come") {
    koord::testing::PodNamespace qa(*api, "koord-quota-a");
    koord::testing::PodNamespace qb(*api, "koord-quota-b");
    cleanup.namespaces.push_back(qa.name());
    cleanup.namespaces.push_back(qb.name());
    const std::string label = id + "-r";
    makeNode(label + "-1", label, "4");
    makeNode(label + "-2", label, "4");
    const std::string parent = id + "-parent";
    cleanup.refs.push_back(named(kElasticQuotas, parent, sys.name()));
    ok(api->createSync(named(kElasticQuotas, "", sys.name()),
                       quota(parent, sys.name(), "8", "8",
                             {{"quota.scheduling.koordinator.sh/is-parent", "true"}})),
       "create parent quota");
    for (const auto& ns : {qa.name(), qb.name()})
      ok(api->createSync(
             named(kElasticQuotas, "", ns),
             quota(ns, ns, "4", "8", {{"quota.scheduling.koordinator.sh/parent", parent}})),
         "create child quota");
    std::this_thread::sleep_for(2s);
    // a takes all 8 CPU while b is idle.
    for (int i = 0; i < 4; ++i)
      ok(api->createSync(named(kPods, "", qa.name()),
                         pod("a" + std::to_string(i), qa.name(), label, "2")),
         "create a pod");
    REQUIRE(eventually(60s, [&] { return boundCount(placements(*api, qa.name())) == 4; }));
    // b's pods arrive: a's runtime falls back to its min, and after delayEvictTime it gives back
    // what it borrowed (two of its pods are deleted).
    for (int i = 0; i < 2; ++i)
      ok(api->createSync(named(kPods, "", qb.name()),
                         pod("b" + std::to_string(i), qb.name(), label, "2")),
         "create b pod");
    auto deleting = [&] {
      int n = 0;
      if (auto list = api->listSync(named(kPods, "", qa.name()))) {
        for (const auto& p : list->at("items").as_array())
          n += str(p, {"metadata", "deletionTimestamp"}).empty() ? 0 : 1;
      }
      return n;
    };
    REQUIRE(eventually(60s, [&] { return deleting() >= 2; }));
    std::this_thread::sleep_for(3s);
    CHECK(deleting() == 2);
    // Through the Eviction API, as Koordinator's revoke, so the pods' budgets hold; no delete.
    int evictions = 0;
    for (const auto& e : auditEntries("koord-scheduler")) {
      if (e.resource != "pods" || e.namespace_ != qa.name())
        continue;
      CHECK(e.verb != "delete");
      if (e.verb == "create" && e.subresource == "eviction" && e.code < 300)
        ++evictions;
    }
    CHECK(evictions == 2);
  }
}
