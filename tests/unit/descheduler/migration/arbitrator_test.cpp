// The arbitrator: Koordinator's order of Pending jobs, and which start, wait or fail.
#include "controllers/migration/arbitrator.h"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

using namespace koord::roles::descheduler::migration;
namespace apis = koord::apis;
using namespace std::chrono_literals;

namespace {

const std::chrono::system_clock::time_point kT0{std::chrono::seconds(1700000000)};

PendingJob job(std::string name, std::chrono::seconds created_after = 0s) {
  PendingJob j;
  j.uid = name;
  j.name = name;
  j.creation_timestamp = kT0 + created_after;
  j.candidate.pod_namespace = "default";
  j.candidate.pod_name = "pod-" + name;
  j.candidate.pod_uid = "uid-" + name;
  j.candidate.node_name = "node-" + name;
  j.sort.creation_timestamp = kT0;
  return j;
}

PendingJob ofBatchJob(PendingJob j, std::string owner) {
  j.candidate.workload = WorkloadRef{"batch/v1", "Job", owner, owner};
  j.candidate.expected_replicas = 100;
  return j;
}

std::vector<std::string> order(const std::vector<PendingJob>& jobs, const MigrationLimits& limits) {
  std::vector<const PendingJob*> in;
  for (const auto& j : jobs)
    in.push_back(&j);
  std::vector<std::string> out;
  for (const PendingJob* j : sortPendingJobs(in, limits))
    out.push_back(j->name);
  return out;
}

MigrationControllerArgs noCaps() {
  MigrationControllerArgs a = defaultMigrationControllerArgs();
  a.max_migrating_per_node = 0;
  return a;
}

}  // namespace

TEST_CASE("arbitrator: newest job first, then the pods' order", "[migration][arbitrator]") {
  MigrationLimits limits(noCaps());
  struct Case {
    const char* what;
    std::vector<PendingJob> jobs;
    std::vector<std::string> want;
  };
  auto prod = job("prod");
  prod.sort.priority_class = apis::PriorityClass::kProd;
  auto batch = job("batch");
  batch.sort.priority_class = apis::PriorityClass::kBatch;
  auto none = job("none");  // no priority class sorts last
  auto low = job("low");
  low.sort.priority = 1;
  auto high = job("high");
  high.sort.priority = 100;
  auto guaranteed = job("guaranteed");
  guaranteed.sort.kube_qos = apis::KubeQoS::kGuaranteed;
  auto besteffort = job("besteffort");
  besteffort.sort.kube_qos = apis::KubeQoS::kBestEffort;
  auto lsr = job("lsr");
  lsr.sort.koord_qos = apis::QoSClass::kLSR;
  auto be = job("be");
  be.sort.koord_qos = apis::QoSClass::kBE;
  auto costly = job("costly");
  costly.sort.deletion_cost = 10;
  auto cheap = job("cheap");
  auto evict_costly = job("evict-costly");
  evict_costly.sort.eviction_cost = 5;
  auto older_pod = job("older-pod");
  older_pod.sort.creation_timestamp = kT0 - 1h;
  auto newer_pod = job("newer-pod");
  auto missing = job("missing");
  missing.pod_found = false;
  missing.sort.priority_class = apis::PriorityClass::kProd;

  const Case cases[] = {
      {"same pods: newest job first",
       {job("old", 0s), job("new", 10s), job("mid", 5s)},
       {"new", "mid", "old"}},
      {"same second: kept as given", {job("a", 0s), job("b", 0s)}, {"a", "b"}},
      {"priority class: free/batch before prod before none",
       {none, prod, batch},
       {"batch", "prod", "none"}},
      {"priority value", {high, low}, {"low", "high"}},
      {"kube QoS", {guaranteed, besteffort}, {"besteffort", "guaranteed"}},
      {"koord QoS", {lsr, be}, {"be", "lsr"}},
      {"deletion cost", {costly, cheap}, {"cheap", "costly"}},
      {"eviction cost", {evict_costly, cheap}, {"cheap", "evict-costly"}},
      {"newer pod first", {older_pod, newer_pod}, {"newer-pod", "older-pod"}},
      {"a job without its pod goes first", {prod, batch, missing}, {"missing", "batch", "prod"}},
      {"pod order wins over job age", {job("j-new", 10s), batch}, {"batch", "j-new"}},
  };
  for (const auto& c : cases) {
    INFO(c.what);
    CHECK(order(c.jobs, limits) == c.want);
  }
}

TEST_CASE("arbitrator: jobs of one batch Job together, busiest Job first",
          "[migration][arbitrator]") {
  MigrationLimits limits(noCaps());
  auto a1 = ofBatchJob(job("a1", 30s), "job-a");
  auto b1 = ofBatchJob(job("b1", 20s), "job-b");
  auto a2 = ofBatchJob(job("a2", 10s), "job-a");
  auto solo = job("solo", 0s);
  // Newest first gives a1 b1 a2 solo; grouping pulls a2 up to a1.
  CHECK(order({a1, b1, a2, solo}, limits) == std::vector<std::string>{"a1", "a2", "b1", "solo"});
  // job-b has a pod migrating already: its jobs go first.
  auto running = ofBatchJob(job("b0"), "job-b");
  running.candidate.job_uid = "b0";
  limits.track(running.candidate);
  CHECK(order({a1, b1, a2, solo}, limits) == std::vector<std::string>{"b1", "a1", "a2", "solo"});
  // Only kind Job groups: ReplicaSet pods keep their own places.
  auto r1 = ofBatchJob(job("r1", 30s), "rs");
  auto r2 = ofBatchJob(job("r2", 10s), "rs");
  r1.candidate.workload->kind = r2.candidate.workload->kind = "ReplicaSet";
  CHECK(order({r1, solo, r2}, limits) == std::vector<std::string>{"r1", "r2", "solo"});
  CHECK(order({r2, solo}, limits) == std::vector<std::string>{"r2", "solo"});
}

TEST_CASE("arbitrator: which jobs start, wait or fail", "[migration][arbitrator]") {
  MigrationControllerArgs a = defaultMigrationControllerArgs();  // 2 per node
  a.namespaces = Namespaces{{}, {"kube-system"}};
  MigrationLimits limits(a);
  Arbitrator arbitrator(a, limits);

  std::vector<PendingJob> jobs;
  for (int i = 0; i < 3; ++i) {
    auto j = job("n" + std::to_string(i), std::chrono::seconds(10 - i));
    j.candidate.node_name = "node-a";
    jobs.push_back(j);
  }
  auto forbidden = job("forbidden");
  forbidden.forbidden = true;
  jobs.push_back(forbidden);
  auto system = job("system");
  system.candidate.pod_namespace = "kube-system";
  jobs.push_back(system);
  auto single = ofBatchJob(job("single"), "one");
  single.candidate.workload->kind = "StatefulSet";
  single.candidate.expected_replicas = 1;
  jobs.push_back(single);
  auto priceless = job("priceless");
  priceless.sort.eviction_cost = INT32_MAX;
  jobs.push_back(priceless);
  auto missing = job("missing");
  missing.pod_found = false;
  jobs.push_back(missing);

  auto decisions = arbitrator.arbitrate(jobs);
  REQUIRE(decisions.size() == jobs.size());
  std::map<std::string, Decision> by_uid;
  for (const auto& d : decisions)
    by_uid[d.job_uid] = d;
  // Newest first: n0 and n1 take node-a's two slots, n2 waits.
  CHECK(by_uid["n0"].verdict == Verdict::kStart);
  CHECK(by_uid["n1"].verdict == Verdict::kStart);
  CHECK(by_uid["n2"].verdict == Verdict::kWait);
  CHECK_THAT(by_uid["n2"].reason, Catch::Contains("maxMigratingPerNode"));
  for (const char* failed : {"forbidden", "system", "single", "priceless"}) {
    INFO(failed);
    CHECK(by_uid[failed].verdict == Verdict::kFail);
    CHECK_THAT(by_uid[failed].reason, Catch::Contains("forbidden to migrate"));
  }
  CHECK(by_uid["missing"].verdict == Verdict::kStart);
  CHECK(decisions.front().job_uid == "missing");
  CHECK(limits.migratingOnNode("node-a") == 2);

  // The next round: still full until a job finishes.
  std::vector<PendingJob> again{jobs[2]};
  CHECK(arbitrator.arbitrate(again).front().verdict == Verdict::kWait);
  limits.release("n0");
  CHECK(arbitrator.arbitrate(again).front().verdict == Verdict::kStart);
}

TEST_CASE("a job's sort key comes from its pod as the informer holds it",
          "[descheduler][migration]") {
  koord::roles::descheduler::Pod p;
  p.priority = 5000;
  p.kube_qos = apis::KubeQoS::kGuaranteed;
  p.qos = apis::QoSClass::kLS;
  p.annotations = {{"controller.kubernetes.io/pod-deletion-cost", "7"},
                   {"scheduling.koordinator.sh/eviction-cost", "cheap"}};
  p.creation_timestamp = kT0;
  const PodSortKey k = sortKeyOf(p);
  CHECK(k.priority == 5000);
  CHECK(k.kube_qos == apis::KubeQoS::kGuaranteed);
  CHECK(k.koord_qos == apis::QoSClass::kLS);
  CHECK(k.deletion_cost == 7);
  CHECK(k.eviction_cost == 0);  // unparsable reads as zero
  CHECK(k.creation_timestamp == kT0);
  // No priority-class label: the band of spec.priority (5000 is koord-batch's).
  CHECK(k.priority_class == apis::PriorityClass::kBatch);
}
