// koord descheduler end to end on the real apiserver with hollow nodes (kubemark: pods run in a
// fake runtime) and koord-scheduler: a ReservationFirst PodMigrationJob reserves room on another
// node, evicts the pod, and ends Succeeded once the ReplicaSet's replacement holds the
// reservation; an EvictDirectly job whose pod a PodDisruptionBudget protects gets 429s and never
// a DELETE; and the evictor's own checks (UID precondition, dry run) against the apiserver.
#include <boost/asio/io_context.hpp>
#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "audit_log.h"
#include "cluster_api.h"
#include "cluster_env.h"
#include "evictions/api_pod_evictor.h"
#include "hollow_nodes.h"
#include "koord/kube/event_recorder.h"
#include "manifests.h"
#include "scheduler_process.h"
#include "subprocess.h"

using namespace std::chrono_literals;
namespace json = boost::json;
using koord::kube::ResourceRef;
using koord::testing::auditEntries;
using koord::testing::eventually;
using koord::testing::KubeApi;
using koord::testing::named;
using koord::testing::ok;
using koord::testing::str;
using koord::testing::TestNamespace;
using koord::testing::tokenConfig;
using koord::testing::uniqueName;
using namespace koord::testing::resources;

namespace {

constexpr const char* kNodeLabel = "koord-e2e-desched";
const ResourceRef kJobs{"scheduling.koordinator.sh", "v1alpha1", "podmigrationjobs", "", "", ""};
const ResourceRef kReplicaSets{"apps", "v1", "replicasets", "", "", ""};

std::string kubeconfig() {
  return koord::testing::needEnv(koord::testing::readClusterEnv(), "KOORD_KUBECONFIG");
}

void writeSchedulerConfig(const std::filesystem::path& path, const std::string& lease_ns) {
  std::ofstream f(path);
  f << "apiVersion: kubescheduler.config.k8s.io/v1\n"
       "kind: KubeSchedulerConfiguration\n"
       "clientConnection: {kubeconfig: "
    << kubeconfig()
    << ", qps: 500, burst: 1000}\n"
       "leaderElection: {leaderElect: true, leaseDuration: 8s, renewDeadline: 6s, retryPeriod: "
       "2s, resourceName: koord-scheduler, resourceNamespace: "
    << lease_ns
    << "}\n"
       "profiles:\n"
       "- schedulerName: koord-scheduler\n"
       "  plugins:\n"
       "    preFilter: {enabled: [{name: Reservation}]}\n"
       "    filter: {enabled: [{name: Reservation}]}\n"
       "    preScore: {enabled: [{name: Reservation}]}\n"
       "    score: {enabled: [{name: Reservation, weight: 5000}]}\n"
       "    reserve: {enabled: [{name: Reservation}]}\n"
       "    preBind: {enabled: [{name: DefaultPreBind}]}\n";
}

// The descheduler's MigrationController only, limited to the test's namespace.
void writeDeschedulerConfig(const std::filesystem::path& path, const std::string& lease_ns,
                            const std::string& ns, bool dry_run = false) {
  std::ofstream f(path);
  f << "apiVersion: descheduler/v1alpha2\n"
       "kind: DeschedulerConfiguration\n"
       "clientConnection: {kubeconfig: "
    << kubeconfig()
    << "}\n"
       "leaderElection: {leaderElect: true, leaseDuration: 8s, renewDeadline: 6s, retryPeriod: "
       "2s, resourceName: koord-descheduler, resourceNamespace: "
    << lease_ns << "}\n"
    << "dryRun: " << (dry_run ? "true" : "false")
    << "\n"
       "profiles:\n"
       "- name: koord-descheduler\n"
       "  pluginConfig:\n"
       "  - name: MigrationController\n"
       "    args:\n"
       "      apiVersion: descheduler/v1alpha2\n"
       "      kind: MigrationControllerArgs\n"
       "      skipCheckExpectedReplicas: true\n"
       "      evictQPS: \"100\"\n"
       "      evictBurst: 10\n"
       "      namespaces: {include: ["
    << ns << "]}\n";
}

struct Descheduler {
  int port = koord::testing::freeLoopbackPort();
  std::unique_ptr<koord::testing::Subprocess> process;
  explicit Descheduler(const std::string& config) {
    process = std::make_unique<koord::testing::Subprocess>(
        std::vector<std::string>{koord::testing::koordBinary(), "descheduler", "--config=" + config,
                                 "--address=127.0.0.1", "--port=" + std::to_string(port), "-v=4"});
  }
  ~Descheduler() {
    if (std::uncaught_exceptions() == 0)
      return;
    std::string err = process->stderrSoFar();
    if (err.size() > 48 * 1024)
      err = "...\n" + err.substr(err.size() - 48 * 1024);
    std::cerr << "descheduler stderr:\n" << err << "\n";
  }
};

json::object replicaSet(const std::string& name, const std::string& ns, const std::string& id,
                        int replicas) {
  json::object labels{{"app", name}};
  json::object pod_spec{
      {"schedulerName", "koord-scheduler"},
      {"automountServiceAccountToken", false},
      {"nodeSelector", {{kNodeLabel, id}}},
      {"tolerations", json::array{json::object{{"operator", "Exists"}}}},
      {"containers", json::array{json::object{
                         {"name", "c"},
                         {"image", "registry.k8s.io/pause:3.2"},
                         {"resources", {{"requests", {{"cpu", "1"}, {"memory", "256Mi"}}}}}}}}};
  return json::object{
      {"apiVersion", "apps/v1"},
      {"kind", "ReplicaSet"},
      {"metadata", {{"name", name}, {"namespace", ns}}},
      {"spec",
       {{"replicas", replicas},
        {"selector", {{"matchLabels", labels}}},
        {"template", {{"metadata", {{"labels", labels}}}, {"spec", std::move(pod_spec)}}}}}};
}

// The ReplicaSet's pods that are Running and not being deleted, as (name, uid, node).
struct RunningPod {
  std::string name, uid, node;
};
std::vector<RunningPod> runningPods(koord::kube::RestClient& api, const std::string& ns,
                                    const std::string& app) {
  koord::kube::ListOptions o;
  o.label_selector = "app=" + app;
  std::vector<RunningPod> out;
  auto list = api.listSync(named(kPods, "", ns), o);
  if (!list)
    return out;
  for (const auto& p : list->at("items").as_array()) {
    if (p.at("metadata").as_object().contains("deletionTimestamp") ||
        str(p, {"status", "phase"}) != "Running")
      continue;
    out.push_back(
        {str(p, {"metadata", "name"}), str(p, {"metadata", "uid"}), str(p, {"spec", "nodeName"})});
  }
  return out;
}

json::object migrationJob(const std::string& name, const std::string& ns, const RunningPod& pod,
                          const std::string& mode) {
  return json::object{{"apiVersion", "scheduling.koordinator.sh/v1alpha1"},
                      {"kind", "PodMigrationJob"},
                      {"metadata", {{"name", name}}},
                      {"spec",
                       {{"mode", mode},
                        {"ttl", "3m"},
                        {"podRef", {{"namespace", ns}, {"name", pod.name}, {"uid", pod.uid}}}}}};
}

std::string jobPhase(koord::kube::RestClient& api, const std::string& name) {
  auto j = api.getSync(named(kJobs, name));
  return j ? str(*j, {"status", "phase"}) : "";
}

}  // namespace

TEST_CASE(
    "a ReservationFirst PodMigrationJob reserves, evicts and the replacement takes the "
    "reservation",
    "[descheduler-migration]") {
  koord::testing::HollowNodeOptions opts;
  opts.count = 3;
  const std::string id = uniqueName("d");
  opts.labels = {{kNodeLabel, id}};
  koord::testing::HollowNodes nodes(opts);
  KubeApi api(tokenConfig());
  koord::testing::applyCrds(*api);
  TestNamespace ns(*api, "desched-pmj");
  const auto dir = std::filesystem::temp_directory_path();
  const auto sched_config = dir / (id + "-scheduler.yaml");
  const auto desched_config = dir / (id + "-descheduler.yaml");
  writeSchedulerConfig(sched_config, ns.name());
  writeDeschedulerConfig(desched_config, ns.name(), ns.name());
  koord::testing::SchedulerProcess scheduler(sched_config.string());
  Descheduler descheduler(desched_config.string());

  ok(api->createSync(named(kReplicaSets, "", ns.name()), replicaSet("web", ns.name(), id, 2)),
     "create the ReplicaSet");
  std::vector<RunningPod> pods;
  REQUIRE(eventually(180s, [&] {
    pods = runningPods(*api, ns.name(), "web");
    return pods.size() == 2;
  }));
  const RunningPod victim = pods.front();
  const std::string job = uniqueName("pmj");
  ok(api->createSync(kJobs, migrationJob(job, ns.name(), victim, "ReservationFirst")),
     "create the PodMigrationJob");

  std::string phase;
  REQUIRE(eventually(180s, [&] {
    phase = jobPhase(*api, job);
    return phase == "Succeeded" || phase == "Failed";
  }));
  auto done = ok(api->getSync(named(kJobs, job)), "read the job");
  INFO(json::serialize(done));
  CHECK(phase == "Succeeded");
  const std::string reservation =
      str(done, {"spec", "reservationOptions", "reservationRef", "name"});
  REQUIRE_FALSE(reservation.empty());
  auto r = ok(api->getSync(named(kReservations, reservation)), "read the reservation");
  const std::string reserved_node = str(r, {"status", "nodeName"});
  CHECK(reserved_node != victim.node);
  // The victim is gone and the replacement runs on the reserved node, holding the reservation.
  REQUIRE(eventually(120s, [&] {
    pods = runningPods(*api, ns.name(), "web");
    if (pods.size() != 2)
      return false;
    for (const auto& p : pods) {
      if (p.uid == victim.uid)
        return false;
    }
    return true;
  }));
  bool on_reserved = false;
  for (const auto& p : pods) {
    auto full = ok(api->getSync(named(kPods, p.name, ns.name())), "read a pod");
    const std::string allocated =
        str(full, {"metadata", "annotations", "scheduling.koordinator.sh/reservation-allocated"});
    if (p.node == reserved_node && allocated.find(reservation) != std::string::npos)
      on_reserved = true;
  }
  CHECK(on_reserved);
  // The descheduler evicted through the Eviction API, never a DELETE.
  for (const auto& e : auditEntries("koord-descheduler")) {
    if (e.resource == "pods")
      CHECK(e.subresource == "eviction");
  }
  ok(api->removeSync(named(kJobs, job)), "delete the job");
  (void)api->removeSync(named(kReservations, reservation));
  std::filesystem::remove(sched_config);
  std::filesystem::remove(desched_config);
}

TEST_CASE("a PodDisruptionBudget keeps an EvictDirectly job's pod: 429s, never a DELETE",
          "[descheduler-migration]") {
  koord::testing::HollowNodeOptions opts;
  opts.count = 3;
  const std::string id = uniqueName("d");
  opts.labels = {{kNodeLabel, id}};
  koord::testing::HollowNodes nodes(opts);
  KubeApi api(tokenConfig());
  koord::testing::applyCrds(*api);
  TestNamespace ns(*api, "desched-pdb");
  const auto dir = std::filesystem::temp_directory_path();
  const auto sched_config = dir / (id + "-scheduler.yaml");
  const auto desched_config = dir / (id + "-descheduler.yaml");
  writeSchedulerConfig(sched_config, ns.name());
  writeDeschedulerConfig(desched_config, ns.name(), ns.name());
  koord::testing::SchedulerProcess scheduler(sched_config.string());

  ok(api->createSync(named(kReplicaSets, "", ns.name()), replicaSet("db", ns.name(), id, 2)),
     "create the ReplicaSet");
  std::vector<RunningPod> pods;
  REQUIRE(eventually(180s, [&] {
    pods = runningPods(*api, ns.name(), "db");
    return pods.size() == 2;
  }));
  // minAvailable = replicas: the apiserver allows no disruption once the budget has caught up.
  ok(api->createSync(
         named(kPodDisruptionBudgetsV1beta1, "", ns.name()),
         json::object{
             {"apiVersion", "policy/v1beta1"},
             {"kind", "PodDisruptionBudget"},
             {"metadata", {{"name", "db"}}},
             {"spec", {{"minAvailable", 2}, {"selector", {{"matchLabels", {{"app", "db"}}}}}}}}),
     "create the budget");
  REQUIRE(eventually(60s, [&] {
    auto b = api->getSync(named(kPodDisruptionBudgetsV1beta1, "db", ns.name()));
    if (!b)
      return false;
    const auto* status = b->as_object().if_contains("status");
    if (status == nullptr || !status->is_object())
      return false;
    const auto* healthy = status->as_object().if_contains("currentHealthy");
    const auto* allowed = status->as_object().if_contains("disruptionsAllowed");
    return healthy != nullptr && healthy->is_int64() && healthy->as_int64() == 2 &&
           allowed != nullptr && allowed->is_int64() && allowed->as_int64() == 0;
  }));
  Descheduler descheduler(desched_config.string());
  const RunningPod victim = pods.front();
  const std::string job = uniqueName("pmj");
  ok(api->createSync(kJobs, migrationJob(job, ns.name(), victim, "EvictDirectly")),
     "create the PodMigrationJob");
  // Refused evictions, retried, and the pod still runs.
  std::vector<koord::testing::AuditEntry> evictions;
  REQUIRE(eventually(60s, [&] {
    evictions.clear();
    for (auto& e : auditEntries("koord-descheduler")) {
      if (e.resource == "pods" && e.name == victim.name)
        evictions.push_back(e);
    }
    return evictions.size() >= 2;
  }));
  for (const auto& e : evictions) {
    CHECK(e.verb == "create");
    CHECK(e.subresource == "eviction");
    CHECK(e.code == 429);
  }
  bool alive = false;
  for (const auto& p : runningPods(*api, ns.name(), "db"))
    alive = alive || p.uid == victim.uid;
  CHECK(alive);
  CHECK(jobPhase(*api, job) == "Running");
  ok(api->removeSync(named(kJobs, job)), "delete the job");
  std::filesystem::remove(sched_config);
  std::filesystem::remove(desched_config);
}

TEST_CASE(
    "the descheduler's evictor: the UID precondition spares a recreated pod, dry run "
    "sends nothing",
    "[descheduler-evictor]") {
  KubeApi api(tokenConfig());
  TestNamespace ns(*api, "desched-evictor");
  // Unbound pods: an eviction removes them at once, no kubelet needed.
  auto bare = [&](const std::string& name) {
    return ok(
        api->createSync(
            named(kPods, "", ns.name()),
            json::object{
                {"apiVersion", "v1"},
                {"kind", "Pod"},
                {"metadata", {{"name", name}}},
                {"spec",
                 {{"schedulerName", "nobody"},
                  {"automountServiceAccountToken", false},
                  {"containers", json::array{json::object{
                                     {"name", "c"}, {"image", "registry.k8s.io/pause:3.2"}}}}}}}),
        "create pod");
  };
  const std::string agent = uniqueName("koord-descheduler-evictor-test");
  auto config = tokenConfig();
  config.user_agent = agent;
  KubeApi client(config);
  koord::kube::EventRecorder recorder(*client, client.io, {"koord-descheduler", "test"});
  koord::roles::descheduler::Pod p;
  p.namespace_ = ns.name();
  p.name = "victim";

  SECTION("a pod recreated under the same name is not evicted") {
    auto first = bare("victim");
    p.uid = str(first, {"metadata", "uid"});
    ok(api->removeSync(named(kPods, "victim", ns.name())), "delete the first pod");
    REQUIRE(eventually(30s, [&] { return !api->getSync(named(kPods, "victim", ns.name())); }));
    auto second = bare("victim");
    koord::roles::descheduler::ApiPodEvictor evictor(
        *client, recorder, [] { return std::optional<std::string>("policy/v1beta1"); }, false);
    CHECK_FALSE(evictor.evict(p, {"Test", "uid precondition"}));
    auto now = api->getSync(named(kPods, "victim", ns.name()));
    REQUIRE(now.has_value());
    CHECK(str(*now, {"metadata", "uid"}) == str(second, {"metadata", "uid"}));
    CHECK_FALSE(now->at("metadata").as_object().contains("deletionTimestamp"));
    REQUIRE(eventually(30s, [&] { return !auditEntries(agent).empty(); }));
    for (const auto& e : auditEntries(agent)) {
      CHECK(e.subresource == "eviction");
      CHECK(e.code == 409);
    }
  }
  SECTION("dry run makes no call") {
    auto pod = bare("victim");
    p.uid = str(pod, {"metadata", "uid"});
    koord::roles::descheduler::ApiPodEvictor evictor(
        *client, recorder, [] { return std::optional<std::string>("policy/v1beta1"); }, true);
    CHECK(evictor.evict(p, {"Test", "dry run"}));
    std::this_thread::sleep_for(2s);
    CHECK(auditEntries(agent).empty());
    CHECK(api->getSync(named(kPods, "victim", ns.name())).has_value());
  }
}
