// API versions chosen by discovery, on the real apiserver as usual ([pdb-served]: 1.20 serves
// PodDisruptionBudgets only in policy/v1beta1) and started with
// --runtime-config=policy/v1beta1=false ([pdb-off]: no PodDisruptionBudget API at all, as a 1.25+
// server has no policy/v1beta1). koord-scheduler must schedule on both, and count budgets in
// preemption where they are served; the koordlet's evictions use the version pods/eviction lists.
#include <boost/asio/io_context.hpp>
#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <chrono>
#include <exception>
#include <filesystem>
#include <fstream>
#include <future>
#include <iostream>
#include <optional>
#include <string>

#include "cluster_api.h"
#include "cluster_env.h"
#include "koord/core/metrics.h"
#include "koord/kube/discovery.h"
#include "koord/kube/event_recorder.h"
#include "manifests.h"
#include "qosmanager/evict/pod_evictor.h"
#include "subprocess.h"

using namespace std::chrono_literals;
namespace json = boost::json;
using koord::kube::ResourceRef;
using koord::testing::eventually;
using koord::testing::KubeApi;
using koord::testing::named;
using koord::testing::nodeOf;
using koord::testing::ok;
using koord::testing::PodNamespace;
using koord::testing::str;
using koord::testing::tokenConfig;
using koord::testing::uniqueName;
using namespace koord::testing::resources;

namespace {

// Blocks for an async discovery's answer.
template <typename T, typename Start>
koord::kube::ApiResult<T> await(Start start) {
  auto promise = std::make_shared<std::promise<koord::kube::ApiResult<T>>>();
  auto future = promise->get_future();
  start([promise](koord::kube::ApiResult<T> r) { promise->set_value(std::move(r)); });
  REQUIRE(future.wait_for(30s) == std::future_status::ready);
  return future.get();
}

std::optional<std::string> pdbVersion(KubeApi& api) {
  auto r = await<std::optional<std::string>>([&](auto done) {
    koord::kube::servedVersionOf(*api, "policy", "poddisruptionbudgets", {"v1", "v1beta1"},
                                 std::move(done));
  });
  if (!r)
    FAIL("PDB discovery: " << r.error().message);
  return *r;
}

std::optional<std::string> evictionVersion(KubeApi& api) {
  auto r = await<std::optional<std::string>>(
      [&](auto done) { koord::kube::evictionVersion(*api, std::move(done)); });
  if (!r)
    FAIL("eviction discovery: " << r.error().message);
  return *r;
}

json::object node(const std::string& name, const std::string& id) {
  json::object alloc{{"cpu", "4"}, {"memory", "32Gi"}, {"pods", "110"}};
  return json::object{{"apiVersion", "v1"},
                      {"kind", "Node"},
                      {"metadata", {{"name", name}, {"labels", {{"koord-e2e-versions", id}}}}},
                      {"status", {{"capacity", alloc}, {"allocatable", alloc}}}};
}

// A pod for koord-scheduler on this test's nodes; with `node_name` already bound instead.
json::object pod(const std::string& name, const std::string& ns, const std::string& id,
                 const std::string& cpu, json::object labels = {},
                 const std::string& priority_class = "", const std::string& node_name = "") {
  return koord::testing::schedulerTestPod(name, ns, "koord-e2e-versions", id,
                                          {{"cpu", cpu}, {"memory", "256Mi"}}, std::move(labels),
                                          priority_class, node_name);
}

bool deleting(koord::kube::RestClient& api, const std::string& ns, const std::string& name) {
  auto p = api.getSync(named(kPods, name, ns));
  return !p || p->at("metadata").as_object().contains("deletionTimestamp");
}

// Nodes, priority classes and pods this test made, removed however it ends.
struct Cleanup {
  KubeApi& api;
  std::vector<ResourceRef> refs;
  std::string pods_namespace;
  ~Cleanup() {
    if (!pods_namespace.empty()) {
      koord::testing::removeAllPodsNow(*api, pods_namespace);
    }
    for (const auto& r : refs)
      (void)api->removeSync(r);
  }
};

// koord-scheduler without leader election, on the cluster's kubeconfig.
struct Scheduler {
  std::filesystem::path config_path;
  std::unique_ptr<koord::testing::Subprocess> process;

  explicit Scheduler(const std::string& id) {
    const auto env = koord::testing::readClusterEnv();
    config_path = std::filesystem::temp_directory_path() / (id + "-scheduler.yaml");
    std::ofstream(config_path) << "apiVersion: kubescheduler.config.k8s.io/v1beta1\n"
                                  "kind: KubeSchedulerConfiguration\n"
                                  "clientConnection:\n"
                                  "  kubeconfig: "
                               << koord::testing::needEnv(env, "KOORD_KUBECONFIG")
                               << "\n"
                                  "  qps: 500\n"
                                  "  burst: 1000\n"
                                  "leaderElection:\n"
                                  "  leaderElect: false\n"
                                  "profiles:\n"
                                  "- schedulerName: koord-scheduler\n";
    process = std::make_unique<koord::testing::Subprocess>(std::vector<std::string>{
        koord::testing::koordBinary(), "scheduler", "--config=" + config_path.string(), "--port=0",
        "--secure-port=0", "-v=4"});
  }
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;
  ~Scheduler() {
    if (std::uncaught_exceptions() > 0) {
      std::string err = process->stderrSoFar();
      constexpr std::size_t kTail = 32 * 1024;
      if (err.size() > kTail)
        err = "...\n" + err.substr(err.size() - kTail);
      std::cerr << "scheduler " << (process->running() ? "still running" : "exited")
                << "; its stderr:\n"
                << err << "\n";
    }
    std::filesystem::remove(config_path);
  }
  bool logged(const std::string& text) const {
    return process->stderrSoFar().find(text) != std::string::npos;
  }
};

// The koordlet's evictor, as its main wires it, evicting `name`; true once the API took it.
bool evictWithPodEvictor(KubeApi& api, const std::string& ns, const std::string& name,
                         const std::string& uid, std::string* version_used) {
  using koord::roles::koordlet::PodMeta;
  koord::kube::EventRecorder recorder(*api, api.io, {"koordlet", "node-versions"});
  koord::metrics::Registry registry;
  koord::roles::koordlet::qosmanager::PodEvictor evictor(*api, recorder, registry, "node-versions");
  evictor.discoverEvictionVersion(api.io);
  REQUIRE(eventually(30s, [&] { return evictor.evictionVersion().has_value(); }));
  *version_used = *evictor.evictionVersion();
  PodMeta p;
  p.namespace_ = ns;
  p.name = name;
  p.uid = uid;
  auto accepted = std::make_shared<std::promise<bool>>();
  auto result = accepted->get_future();
  evictor.evict(p, "trigger by koordlet feature BEMemoryEvict", "api versions test",
                [accepted](bool ok) { accepted->set_value(ok); });
  REQUIRE(result.wait_for(30s) == std::future_status::ready);
  const bool ok = result.get();
  evictor.stop();
  (void)recorder.flush(10s);
  return ok;
}

// A pod bound to an API-only node, evicted by the PodEvictor: the version discovery chose is
// one the API server takes (a guessed policy/v1 is refused by 1.20).
void checkEviction(KubeApi& api, const std::string& ns, const std::string& id,
                   const std::string& node_name) {
  auto created =
      ok(api->createSync(named(kPods, "", ns), pod("evictee", ns, id, "100m", {}, "", node_name)),
         "create evictee");
  const std::string uid = str(created, {"metadata", "uid"});
  std::string version;
  CHECK(evictWithPodEvictor(api, ns, "evictee", uid, &version));
  CHECK(version == "policy/v1beta1");
  CHECK(eventually(20s, [&] { return deleting(*api, ns, "evictee"); }));

  // What a guess of policy/v1 would have met on 1.20.
  auto other =
      ok(api->createSync(named(kPods, "", ns), pod("guessed", ns, id, "100m", {}, "", node_name)),
         "create guessed");
  auto refused = api->createSync(
      koord::testing::subresource(kPods, "eviction", "guessed", ns),
      koord::kube::evictionBody(
          "policy/v1", ns, "guessed",
          boost::json::object{
              {"preconditions", boost::json::object{{"uid", str(other, {"metadata", "uid"})}}}}));
  CHECK_FALSE(refused.has_value());
  CHECK_FALSE(deleting(*api, ns, "guessed"));
}

}  // namespace

TEST_CASE("api versions: policy/v1beta1 served: discovery, PDB-aware preemption, eviction",
          "[cluster][pdb-served]") {
  KubeApi api(tokenConfig());
  koord::testing::applyCrds(*api);

  // 1.20: PodDisruptionBudgets in policy/v1beta1 only; Evictions in policy/v1beta1.
  CHECK(pdbVersion(api) == std::optional<std::string>("policy/v1beta1"));
  auto group = await<koord::kube::ServedGroup>(
      [&](auto done) { koord::kube::discoverGroup(*api, "policy", std::move(done)); });
  REQUIRE(group.has_value());
  CHECK(group->serves("v1beta1"));
  CHECK_FALSE(group->serves("v1"));
  auto v1 = await<koord::kube::ServedResources>(
      [&](auto done) { koord::kube::discoverResources(*api, "policy", "v1", std::move(done)); });
  REQUIRE(v1.has_value());
  CHECK(v1->resources.empty());
  CHECK(evictionVersion(api) == std::optional<std::string>("policy/v1beta1"));

  const std::string id = uniqueName("kv");
  PodNamespace work(*api, "koord-versions");
  Cleanup cleanup{api, {}, work.name()};
  const std::string node_a = id + "-a";
  const std::string node_b = id + "-b";
  for (const auto& n : {node_a, node_b}) {
    cleanup.refs.push_back(named(kNodes, n));
    ok(api->createSync(kNodes, node(n, id)), "create node");
  }
  for (const auto& [suffix, value] :
       {std::pair{"-low", 100}, std::pair{"-mid", 200}, std::pair{"-high", 1000}}) {
    cleanup.refs.push_back(named(kPriorityClasses, id + suffix));
    ok(api->createSync(kPriorityClasses, json::object{{"apiVersion", "scheduling.k8s.io/v1"},
                                                      {"kind", "PriorityClass"},
                                                      {"metadata", {{"name", id + suffix}}},
                                                      {"value", value}}),
       "create PriorityClass");
  }
  // The budget allows no disruption of the protected pod.
  ok(api->createSync(
         named(kPodDisruptionBudgetsV1beta1, "", work.name()),
         json::object{
             {"apiVersion", "policy/v1beta1"},
             {"kind", "PodDisruptionBudget"},
             {"metadata", {{"name", "protect"}, {"namespace", work.name()}}},
             {"spec", {{"maxUnavailable", 0}, {"selector", {{"matchLabels", {{"app", id}}}}}}}}),
     "create PodDisruptionBudget");

  Scheduler scheduler(id);
  // Each takes 3 of a node's 4 CPUs, so they land on different nodes.
  ok(api->createSync(named(kPods, "", work.name()),
                     pod("protected-low", work.name(), id, "3", {{"app", id}}, id + "-low")),
     "create protected-low");
  REQUIRE(eventually(60s, [&] { return !nodeOf(*api, work.name(), "protected-low").empty(); }));
  ok(api->createSync(named(kPods, "", work.name()),
                     pod("mid", work.name(), id, "3", {}, id + "-mid")),
     "create mid");
  REQUIRE(eventually(30s, [&] { return !nodeOf(*api, work.name(), "mid").empty(); }));
  CHECK(scheduler.logged("watching PodDisruptionBudgets in policy/v1beta1"));

  // Without the budget the lower-priority protected pod would be the victim; with it, the one
  // whose eviction violates no budget goes.
  ok(api->createSync(named(kPods, "", work.name()),
                     pod("high", work.name(), id, "2", {}, id + "-high")),
     "create high");
  REQUIRE(eventually(45s, [&] {
    return deleting(*api, work.name(), "mid") || deleting(*api, work.name(), "protected-low");
  }));
  CHECK(deleting(*api, work.name(), "mid"));
  CHECK_FALSE(deleting(*api, work.name(), "protected-low"));

  checkEviction(api, work.name(), id, node_a);
}

TEST_CASE("api versions: no PodDisruptionBudget API: koord-scheduler schedules, evictions work",
          "[cluster][pdb-off]") {
  KubeApi api(tokenConfig());
  koord::testing::applyCrds(*api);

  // The cluster this runs on must be the one without policy/v1beta1.
  REQUIRE(pdbVersion(api) == std::nullopt);
  auto group = await<koord::kube::ServedGroup>(
      [&](auto done) { koord::kube::discoverGroup(*api, "policy", std::move(done)); });
  REQUIRE(group.has_value());
  CHECK(group->versions.empty());
  // What koord-scheduler listed before it asked discovery, and retried forever without syncing.
  auto old_list = api->listSync(kPodDisruptionBudgetsV1beta1);
  REQUIRE_FALSE(old_list.has_value());
  CHECK(old_list.error().code == 404);
  // pods/eviction is core's: listed (and served) whatever policy/v1beta1's switch says.
  CHECK(evictionVersion(api) == std::optional<std::string>("policy/v1beta1"));

  const std::string id = uniqueName("kv");
  PodNamespace work(*api, "koord-versions");
  Cleanup cleanup{api, {}, work.name()};
  const std::string node_a = id + "-a";
  cleanup.refs.push_back(named(kNodes, node_a));
  ok(api->createSync(kNodes, node(node_a, id)), "create node");

  Scheduler scheduler(id);
  for (const char* name : {"first", "second"}) {
    ok(api->createSync(named(kPods, "", work.name()), pod(name, work.name(), id, "500m")),
       "create pod");
  }
  // Before discovery, the scheduler never synced here: its policy/v1beta1 list failed forever.
  for (const char* name : {"first", "second"})
    REQUIRE(eventually(60s, [&] { return nodeOf(*api, work.name(), name) == node_a; }));
  CHECK(scheduler.logged("PDB-aware preemption is off"));

  checkEviction(api, work.name(), id, node_a);
}
