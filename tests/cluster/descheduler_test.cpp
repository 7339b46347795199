// koord descheduler end to end on the real apiserver with hollow nodes (kubemark: pods run in a
// fake runtime) and koord-scheduler: a ReservationFirst PodMigrationJob reserves room on another
// node, evicts the pod, and ends Succeeded once the ReplicaSet's replacement holds the
// reservation; an EvictDirectly job whose pod a PodDisruptionBudget protects gets 429s and never
// a DELETE; and the evictor's own checks (UID precondition, dry run) against the apiserver.
#include <boost/asio/io_context.hpp>
#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
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
       "      maxConcurrentReconciles: 2\n"
       "      evictQPS: \"100\"\n"
       "      evictBurst: 10\n"
       "      namespaces: {include: ["
    << ns << "]}\n";
}

struct Descheduler {
  int port = koord::testing::freeLoopbackPort();
  std::unique_ptr<koord::testing::Subprocess> process;
  explicit Descheduler(const std::string& config) {
    process = std::make_unique<koord::testing::Subprocess>(std::vector<std::string>{
        koord::testing::koordBinary(), "descheduler", "--config=" + config, "--address=127.0.0.1",
        "--port=" + std::to_string(port), "--bind-address=127.0.0.1",
        "--secure-port=" + std::to_string(koord::testing::freeLoopbackPort()), "-v=4"});
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

// Hollow nodes labelled for one test, the CRDs, a namespace, and koord-scheduler and (once
// started) koord-descheduler, both configured for that namespace.
struct MigrationCluster {
  const std::string id = uniqueName("d");
  koord::testing::HollowNodes nodes;
  KubeApi api{tokenConfig()};
  TestNamespace ns;
  const std::filesystem::path sched_config =
      std::filesystem::temp_directory_path() / (id + "-scheduler.yaml");
  const std::filesystem::path desched_config =
      std::filesystem::temp_directory_path() / (id + "-descheduler.yaml");
  std::unique_ptr<koord::testing::SchedulerProcess> scheduler;
  std::unique_ptr<Descheduler> descheduler;

  static koord::testing::HollowNodeOptions nodeOptions(int count, const std::string& id) {
    koord::testing::HollowNodeOptions opts;
    opts.count = count;
    opts.labels = {{kNodeLabel, id}};
    return opts;
  }
  MigrationCluster(int node_count, const std::string& ns_prefix)
      : nodes(nodeOptions(node_count, id)), ns((koord::testing::applyCrds(*api), *api), ns_prefix) {
    writeSchedulerConfig(sched_config, ns.name());
    writeDeschedulerConfig(desched_config, ns.name(), ns.name());
    scheduler = std::make_unique<koord::testing::SchedulerProcess>(sched_config.string());
  }
  ~MigrationCluster() {
    descheduler.reset();
    scheduler.reset();
    std::filesystem::remove(sched_config);
    std::filesystem::remove(desched_config);
  }
  void startDescheduler() { descheduler = std::make_unique<Descheduler>(desched_config.string()); }
};

}  // namespace

TEST_CASE(
    "a ReservationFirst PodMigrationJob reserves, evicts and the replacement takes the "
    "reservation",
    "[descheduler-migration]") {
  MigrationCluster c(3, "desched-pmj");
  auto& api = c.api;
  auto& ns = c.ns;
  const std::string& id = c.id;
  c.startDescheduler();

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
}

TEST_CASE("a PodDisruptionBudget keeps an EvictDirectly job's pod: 429s, never a DELETE",
          "[descheduler-migration]") {
  MigrationCluster c(3, "desched-pdb");
  auto& api = c.api;
  auto& ns = c.ns;
  const std::string& id = c.id;

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
  c.startDescheduler();
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
}

TEST_CASE(
    "the koordinator.sh/evict-policy label picks Delete or SoftEviction; a job ends once its pod "
    "is gone",
    "[descheduler-migration]") {
  MigrationCluster c(2, "desched-policy");
  auto& api = c.api;
  auto& ns = c.ns;
  const std::string& id = c.id;
  c.startDescheduler();

  ok(api->createSync(named(kReplicaSets, "", ns.name()), replicaSet("app", ns.name(), id, 2)),
     "create the ReplicaSet");
  std::vector<RunningPod> pods;
  REQUIRE(eventually(180s, [&] {
    pods = runningPods(*api, ns.name(), "app");
    return pods.size() == 2;
  }));
  const RunningPod deleted = pods[0];
  const RunningPod soft = pods[1];

  // The job's label asks for a Delete, with the job's own deleteOptions.
  const std::string delete_job = uniqueName("pmj");
  auto body = migrationJob(delete_job, ns.name(), deleted, "EvictDirectly");
  body["metadata"].as_object()["labels"] = json::object{{"koordinator.sh/evict-policy", "Delete"}};
  body["spec"].as_object()["deleteOptions"] = json::object{{"gracePeriodSeconds", 0}};
  ok(api->createSync(kJobs, body), "create the Delete job");
  REQUIRE(eventually(120s, [&] { return jobPhase(*api, delete_job) == "Succeeded"; }));
  auto done = ok(api->getSync(named(kJobs, delete_job)), "read the job");
  INFO(json::serialize(done));
  bool evict_complete = false;
  for (const auto& c : done.at("status").at("conditions").as_array())
    evict_complete =
        evict_complete || (str(c, {"type"}) == "Eviction" && str(c, {"status"}) == "True" &&
                           str(c, {"reason"}) == "EvictComplete");
  CHECK(evict_complete);
  bool saw_delete = false;
  for (const auto& e : auditEntries("koord-descheduler")) {
    if (e.resource != "pods" || e.name != deleted.name)
      continue;
    CHECK(e.subresource.empty());
    saw_delete = saw_delete || (e.verb == "delete" && e.code == 200);
  }
  CHECK(saw_delete);

  // The pod's label asks for a soft eviction: the pod is marked, stays, and the job waits.
  ok(api->patchSync(
         named(kPods, soft.name, ns.name()), koord::kube::PatchType::kMergePatch,
         json::object{
             {"metadata", {{"labels", {{"koordinator.sh/evict-policy", "SoftEviction"}}}}}}),
     "label the pod");
  const std::string soft_job = uniqueName("pmj");
  ok(api->createSync(kJobs, migrationJob(soft_job, ns.name(), soft, "EvictDirectly")),
     "create the SoftEviction job");
  REQUIRE(eventually(60s, [&] {
    auto p = api->getSync(named(kPods, soft.name, ns.name()));
    return p &&
           !str(*p, {"metadata", "annotations", "scheduling.koordinator.sh/soft-eviction"}).empty();
  }));
  std::this_thread::sleep_for(3s);
  auto still = ok(api->getSync(named(kPods, soft.name, ns.name())), "read the pod");
  CHECK(str(still, {"metadata", "uid"}) == soft.uid);
  CHECK_FALSE(still.at("metadata").as_object().contains("deletionTimestamp"));
  auto waiting = ok(api->getSync(named(kJobs, soft_job)), "read the job");
  CHECK(str(waiting, {"status", "phase"}) == "Running");
  CHECK(str(waiting, {"status", "reason"}) == "Evicting");
  for (const auto& e : auditEntries("koord-descheduler")) {
    if (e.resource == "pods" && e.name == soft.name)
      CHECK(e.verb == "patch");
  }
  // What the workload's own controller would do on the mark; then the job completes.
  koord::kube::DeleteOptions now;
  now.grace_period_seconds = 0;
  ok(api->removeSync(named(kPods, soft.name, ns.name()), now), "delete the marked pod");
  REQUIRE(eventually(60s, [&] { return jobPhase(*api, soft_job) == "Succeeded"; }));

  ok(api->removeSync(named(kJobs, delete_job)), "delete a job");
  ok(api->removeSync(named(kJobs, soft_job)), "delete a job");
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
  SECTION("Delete and SoftEviction are bound to the UID too") {
    auto first = bare("victim");
    p.uid = str(first, {"metadata", "uid"});
    ok(api->removeSync(named(kPods, "victim", ns.name())), "delete the first pod");
    REQUIRE(eventually(30s, [&] { return !api->getSync(named(kPods, "victim", ns.name())); }));
    auto second = bare("victim");
    koord::roles::descheduler::ApiPodEvictor evictor(
        *client, recorder, [] { return std::optional<std::string>("policy/v1beta1"); }, false);
    koord::roles::descheduler::EvictOptions del{"Test", "uid precondition"};
    del.method = koord::roles::descheduler::EvictionMethod::kDelete;
    CHECK_FALSE(evictor.evict(p, del));
    koord::roles::descheduler::EvictOptions soft{"Test", "uid precondition"};
    soft.method = koord::roles::descheduler::EvictionMethod::kSoftEviction;
    CHECK_FALSE(evictor.evict(p, soft));
    auto now = api->getSync(named(kPods, "victim", ns.name()));
    REQUIRE(now.has_value());
    CHECK(str(*now, {"metadata", "uid"}) == str(second, {"metadata", "uid"}));
    CHECK_FALSE(now->at("metadata").as_object().contains("deletionTimestamp"));
    CHECK(
        str(*now, {"metadata", "annotations", "scheduling.koordinator.sh/soft-eviction"}).empty());
    std::vector<koord::testing::AuditEntry> calls;
    REQUIRE(eventually(30s, [&] {
      calls = auditEntries(agent);
      return calls.size() >= 2;
    }));
    for (const auto& e : calls) {
      INFO(e.verb);
      CHECK(e.subresource.empty());
      CHECK(e.code >= 400);
    }
  }
  SECTION("SoftEviction marks the pod and leaves it running") {
    auto pod = bare("victim");
    p.uid = str(pod, {"metadata", "uid"});
    koord::roles::descheduler::ApiPodEvictor evictor(
        *client, recorder, [] { return std::optional<std::string>("policy/v1beta1"); }, false);
    koord::roles::descheduler::EvictOptions soft{"LowNodeLoad", "node is hot"};
    soft.method = koord::roles::descheduler::EvictionMethod::kSoftEviction;
    CHECK(evictor.evict(p, soft));
    auto now = ok(api->getSync(named(kPods, "victim", ns.name())), "read the pod");
    CHECK_FALSE(now.at("metadata").as_object().contains("deletionTimestamp"));
    const auto spec = json::parse(
        str(now, {"metadata", "annotations", "scheduling.koordinator.sh/soft-eviction"}));
    CHECK(str(spec, {"initiator"}) == "LowNodeLoad");
    CHECK(str(spec, {"reason"}) == "node is hot");
    CHECK_FALSE(str(spec, {"timestamp"}).empty());
    CHECK(str(spec, {"deleteOptions", "preconditions", "uid"}) == p.uid);
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

namespace {

// Marks a node (un)schedulable.
void cordon(koord::kube::RestClient& api, const std::string& node, bool on) {
  ok(api.patchSync(named(kNodes, node), koord::kube::PatchType::kMergePatch,
                   json::object{{"spec", {{"unschedulable", on}}}}),
     "cordon");
  // The scheduler sees it through its watch: give that a moment before pods that depend on it.
  std::this_thread::sleep_for(2s);
}

// A NodeMetric for `node` as a koordlet would report it: the system's usage and each pod's, at
// `updated`.
void writeNodeMetric(koord::kube::RestClient& api, const std::string& node, const std::string& ns,
                     const std::vector<RunningPod>& pods, const std::string& pod_cpu,
                     std::chrono::system_clock::time_point updated) {
  json::array pods_metric;
  for (const auto& p : pods) {
    if (p.node == node)
      pods_metric.push_back(
          json::object{{"namespace", ns},
                       {"name", p.name},
                       {"podUsage", {{"resources", {{"cpu", pod_cpu}, {"memory", "512Mi"}}}}}});
  }
  const std::time_t t = std::chrono::system_clock::to_time_t(updated);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  json::object status{{"updateTime", stamp},
                      {"nodeMetric",
                       {{"nodeUsage", {{"resources", {{"cpu", "1"}, {"memory", "2Gi"}}}}},
                        {"systemUsage", {{"resources", {{"cpu", "200m"}, {"memory", "1Gi"}}}}}}},
                      {"podsMetric", std::move(pods_metric)}};
  auto existing = api.getSync(named(kNodeMetrics, node));
  if (!existing)
    ok(api.createSync(kNodeMetrics, json::object{{"apiVersion", "slo.koordinator.sh/v1alpha1"},
                                                 {"kind", "NodeMetric"},
                                                 {"metadata", {{"name", node}}}}),
       "create the NodeMetric");
  auto ref = named(kNodeMetrics, node);
  ref.subresource = "status";
  ok(api.patchSync(ref, koord::kube::PatchType::kMergePatch, json::object{{"status", status}}),
     "write the NodeMetric's status");
}

// LowNodeLoad over MigrationController (EvictDirectly) in one pass, for the test's namespace.
void writeLowNodeLoadConfig(const std::filesystem::path& path, const std::string& lease_ns,
                            const std::string& ns, bool dry_run) {
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
       "maxNoOfPodsToEvictPerNode: 2\n"
       "profiles:\n"
       "- name: koord-descheduler\n"
       "  plugins:\n"
       "    balance: {enabled: [{name: LowNodeLoad}]}\n"
       "  pluginConfig:\n"
       "  - name: MigrationController\n"
       "    args: {defaultJobMode: EvictDirectly, skipCheckExpectedReplicas: true, evictQPS: "
       "\"100\", evictBurst: 10, namespaces: {include: ["
    << ns
    << "]}}\n"
       "  - name: LowNodeLoad\n"
       "    args:\n"
       "      evictableNamespaces: {include: ["
    << ns
    << "]}\n"
       "      lowThresholds: {cpu: 45, memory: 55}\n"
       "      highThresholds: {cpu: 75, memory: 80}\n"
       "      anomalyCondition: {consecutiveAbnormalities: 1}\n";
}

// The PodMigrationJobs made for pods of `ns`, as pod name -> phase.
std::map<std::string, std::string> jobsFor(koord::kube::RestClient& api, const std::string& ns) {
  std::map<std::string, std::string> out;
  auto list = api.listSync(kJobs);
  if (!list)
    return out;
  for (const auto& j : list->at("items").as_array()) {
    if (str(j, {"spec", "podRef", "namespace"}) == ns)
      out[str(j, {"spec", "podRef", "name"})] = str(j, {"status", "phase"});
  }
  return out;
}

// Three hollow nodes: pods of one ReplicaSet on hollow-node-1 (fresh NodeMetric, hot) and
// hollow-node-3 (hot too, but its NodeMetric is stale), hollow-node-2 cold.
struct LoadScene {
  std::string id = uniqueName("d");
  std::unique_ptr<koord::testing::HollowNodes> nodes;
  KubeApi api{tokenConfig()};
  std::unique_ptr<TestNamespace> ns;
  std::vector<RunningPod> pods;
  std::filesystem::path sched_config, desched_config;
  std::unique_ptr<koord::testing::SchedulerProcess> scheduler;

  LoadScene() {
    koord::testing::HollowNodeOptions opts;
    opts.count = 3;
    opts.labels = {{kNodeLabel, id}};
    nodes = std::make_unique<koord::testing::HollowNodes>(opts);
    koord::testing::applyCrds(*api);
    ns = std::make_unique<TestNamespace>(*api, "desched-load");
    const auto dir = std::filesystem::temp_directory_path();
    sched_config = dir / (id + "-scheduler.yaml");
    desched_config = dir / (id + "-descheduler.yaml");
    writeSchedulerConfig(sched_config, ns->name());
    scheduler = std::make_unique<koord::testing::SchedulerProcess>(sched_config.string());
    // Two pods on hollow-node-1, then two more on hollow-node-3: the others cordoned meanwhile.
    cordon(*api, "hollow-node-2", true);
    cordon(*api, "hollow-node-3", true);
    ok(api->createSync(named(kReplicaSets, "", ns->name()), replicaSet("web", ns->name(), id, 2)),
       "create the ReplicaSet");
    REQUIRE(eventually(180s, [&] { return runningPods(*api, ns->name(), "web").size() == 2; }));
    cordon(*api, "hollow-node-3", false);
    cordon(*api, "hollow-node-1", true);
    ok(api->patchSync(named(kReplicaSets, "web", ns->name()), koord::kube::PatchType::kMergePatch,
                      json::object{{"spec", {{"replicas", 4}}}}),
       "scale the ReplicaSet");
    REQUIRE(eventually(180s, [&] {
      pods = runningPods(*api, ns->name(), "web");
      return pods.size() == 4;
    }));
    cordon(*api, "hollow-node-1", false);
    std::map<std::string, int> per_node;
    std::string where;
    for (const auto& p : pods) {
      ++per_node[p.node];
      where += p.name + "@" + p.node + " ";
    }
    INFO("pods: " << where);
    REQUIRE(per_node["hollow-node-1"] == 2);
    REQUIRE(per_node["hollow-node-3"] == 2);
    const auto now = std::chrono::system_clock::now();
    writeNodeMetric(*api, "hollow-node-1", ns->name(), pods, "1700m", now);
    writeNodeMetric(*api, "hollow-node-2", ns->name(), pods, "0", now);
    writeNodeMetric(*api, "hollow-node-3", ns->name(), pods, "1700m",
                    now - std::chrono::minutes(10));
    cordon(*api, "hollow-node-2", false);
  }
  ~LoadScene() {
    for (const auto& n : {"hollow-node-1", "hollow-node-2", "hollow-node-3"})
      (void)api->removeSync(named(kNodeMetrics, n));
    std::filesystem::remove(sched_config);
    std::filesystem::remove(desched_config);
  }
};

}  // namespace

TEST_CASE(
    "LowNodeLoad moves a pod off the hot node only, and koord-scheduler places it on the "
    "cold one",
    "[descheduler-lownodeload]") {
  LoadScene scene;
  auto& api = scene.api;
  const std::string ns = scene.ns->name();
  writeLowNodeLoadConfig(scene.desched_config, ns, ns, false);
  Descheduler descheduler(scene.desched_config.string());
  // One job: 90% of hollow-node-1's CPU less one pod's 1.7 cores is under the high threshold.
  std::map<std::string, std::string> jobs;
  REQUIRE(eventually(90s, [&] {
    jobs = jobsFor(*api, ns);
    return jobs.size() == 1 && jobs.begin()->second == "Succeeded";
  }));
  std::string evicted_node;
  for (const auto& p : scene.pods) {
    if (p.name == jobs.begin()->first)
      evicted_node = p.node;
  }
  CHECK(evicted_node == "hollow-node-1");
  // The replacement runs on the cold node; the stale node's pods are where they were.
  std::vector<RunningPod> now;
  REQUIRE(eventually(120s, [&] {
    now = runningPods(*api, ns, "web");
    int on_cold = 0;
    for (const auto& p : now)
      on_cold += p.node == "hollow-node-2" ? 1 : 0;
    return now.size() == 4 && on_cold == 1;
  }));
  for (const auto& p : scene.pods) {
    if (p.node != "hollow-node-3")
      continue;
    bool still = false;
    for (const auto& q : now)
      still = still || q.uid == p.uid;
    CHECK(still);
  }
  std::this_thread::sleep_for(3s);
  CHECK(jobsFor(*api, ns).size() == 1);
  auto list = api->listSync(kJobs);
  if (list) {
    for (const auto& j : list->at("items").as_array())
      if (str(j, {"spec", "podRef", "namespace"}) == ns)
        (void)api->removeSync(named(kJobs, str(j, {"metadata", "name"})));
  }
}

TEST_CASE("with dryRun the same pass makes no mutating call", "[descheduler-lownodeload]") {
  LoadScene scene;
  auto& api = scene.api;
  const std::string ns = scene.ns->name();
  writeLowNodeLoadConfig(scene.desched_config, ns, ns, true);
  const auto before = auditEntries("koord-descheduler").size();
  Descheduler descheduler(scene.desched_config.string());
  // The pass has run once the process says so.
  REQUIRE(eventually(60s, [&] {
    return descheduler.process->stderrSoFar().find("would create a PodMigrationJob") !=
           std::string::npos;
  }));
  std::this_thread::sleep_for(3s);
  CHECK(jobsFor(*api, ns).empty());
  const auto entries = auditEntries("koord-descheduler");
  for (std::size_t i = before; i < entries.size(); ++i) {
    // Its Lease is its own business; nothing else may be written.
    INFO(entries[i].verb << " " << entries[i].resource << " " << entries[i].name);
    CHECK(entries[i].resource == "leases");
  }
  CHECK(runningPods(*api, ns, "web").size() == 4);
}
