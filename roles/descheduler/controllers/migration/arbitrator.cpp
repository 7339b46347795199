// Arbitrator: Koordinator's sort functions (sort.go, PodSorter) and the filtering round over the
// sorted jobs (doOnceArbitrate).
#include "arbitrator.h"

#include <algorithm>
#include <climits>
#include <map>

#include <fmt/format.h>

#include "framework/pod_sort.h"

namespace koord::roles::descheduler::migration {

namespace {

using Jobs = std::vector<const PendingJob*>;

int priorityClassOrder(apis::PriorityClass p) {
  switch (p) {
    case apis::PriorityClass::kNone:
      return 5;
    case apis::PriorityClass::kProd:
      return 4;
    case apis::PriorityClass::kMid:
      return 3;
    case apis::PriorityClass::kBatch:
      return 2;
    case apis::PriorityClass::kFree:
      return 1;
  }
  return 0;
}

int koordQoSOrder(apis::QoSClass q) {
  switch (q) {
    case apis::QoSClass::kNone:
      return 5;
    case apis::QoSClass::kSystem:
    case apis::QoSClass::kLSE:
      return 4;
    case apis::QoSClass::kLSR:
      return 3;
    case apis::QoSClass::kLS:
      return 2;
    case apis::QoSClass::kBE:
      return 1;
  }
  return 0;
}

// PodSorter's comparators in order; the pod that goes first is the one less worth keeping.
bool podBefore(const PodSortKey& a, const PodSortKey& b) {
  const auto key = [](const PodSortKey& k) {
    // Newer pods first: a later creation time sorts lower.
    return std::make_tuple(priorityClassOrder(k.priority_class), k.priority,
                           kubeQoSRank(k.kube_qos), koordQoSOrder(k.koord_qos), k.deletion_cost,
                           k.eviction_cost, -k.creation_timestamp.time_since_epoch().count());
  };
  return key(a) < key(b);
}

}  // namespace

PodSortKey sortKeyOf(const Pod& pod) {
  PodSortKey k;
  const apis::PriorityClass raw = apis::podPriorityClassRaw(pod.labels, pod.priority);
  k.priority_class = raw != apis::PriorityClass::kNone ? raw : apis::priorityClassForQoS(pod.qos);
  k.priority = pod.priority.value_or(0);
  k.kube_qos = pod.kube_qos;
  k.koord_qos = pod.qos;
  k.deletion_cost = podCostAnnotation(pod, "controller.kubernetes.io/pod-deletion-cost");
  k.eviction_cost = podCostAnnotation(pod, "scheduling.koordinator.sh/eviction-cost");
  k.creation_timestamp = pod.creation_timestamp.value_or(TimePoint{});
  return k;
}

namespace {

// The pod's controller when it is a batch Job (only those are grouped and counted).
const WorkloadRef* batchJobOf(const PendingJob& j) {
  if (!j.pod_found || !j.candidate.workload || j.candidate.workload->kind != "Job")
    return nullptr;
  return &*j.candidate.workload;
}

template <typename Rank>
void stableSortBy(Jobs& jobs, Rank rank) {
  std::map<const PendingJob*, long long> ranks;
  for (std::size_t i = 0; i < jobs.size(); ++i)
    ranks[jobs[i]] = rank(i, *jobs[i]);
  std::stable_sort(jobs.begin(), jobs.end(),
                   [&](const PendingJob* a, const PendingJob* b) { return ranks[a] < ranks[b]; });
}

bool inNamespaces(const MigrationControllerArgs& args, const std::string& ns) {
  if (!args.namespaces)
    return true;
  const auto& include = args.namespaces->include;
  const auto& exclude = args.namespaces->exclude;
  if (!include.empty())
    return std::find(include.begin(), include.end(), ns) != include.end();
  return std::find(exclude.begin(), exclude.end(), ns) == exclude.end();
}

}  // namespace

std::vector<const PendingJob*> sortPendingJobs(std::vector<const PendingJob*> jobs,
                                               const MigrationLimits& limits) {
  // 1. Newest job first, by whole seconds (metav1.Time's resolution).
  stableSortBy(jobs, [](std::size_t, const PendingJob& j) {
    return -std::chrono::duration_cast<std::chrono::seconds>(
                j.creation_timestamp.time_since_epoch())
                .count();
  });
  // 2. Pods in PodSorter order; jobs without a pod before all.
  {
    Jobs with_pod;
    for (const PendingJob* j : jobs) {
      if (j->pod_found)
        with_pod.push_back(j);
    }
    std::stable_sort(
        with_pod.begin(), with_pod.end(),
        [](const PendingJob* a, const PendingJob* b) { return podBefore(a->sort, b->sort); });
    std::map<const PendingJob*, long long> pod_rank;
    for (std::size_t i = 0; i < with_pod.size(); ++i)
      pod_rank[with_pod[i]] = static_cast<long long>(i);
    stableSortBy(jobs, [&](std::size_t, const PendingJob& j) {
      return j.pod_found ? pod_rank[&j] : LLONG_MIN;
    });
  }
  // 3. Jobs of one batch Job next to the first of them.
  {
    std::map<std::string, long long, std::less<>> first_of;
    stableSortBy(jobs, [&](std::size_t i, const PendingJob& j) {
      const WorkloadRef* owner = batchJobOf(j);
      if (owner == nullptr)
        return static_cast<long long>(i);
      return first_of.try_emplace(owner->uid, static_cast<long long>(i)).first->second;
    });
  }
  // 4. Batch Jobs with more migrating jobs first: finishing one Job beats starting many.
  stableSortBy(jobs, [&](std::size_t, const PendingJob& j) {
    const WorkloadRef* owner = batchJobOf(j);
    return owner == nullptr ? 0LL : -static_cast<long long>(limits.migratingInWorkload(owner->uid));
  });
  return jobs;
}

Arbitrator::Arbitrator(const MigrationControllerArgs& args, MigrationLimits& limits)
    : args_(args), limits_(limits) {}

std::optional<std::string> Arbitrator::failure(const PendingJob& job) const {
  const MigrationCandidate& c = job.candidate;
  if (c.evict_annotation)
    return std::nullopt;
  if (job.forbidden)
    return "the evictor's filter refuses the pod";
  if (!inNamespaces(args_, c.pod_namespace))
    return fmt::format("namespace {} is not one the controller migrates from", c.pod_namespace);
  if (job.sort.eviction_cost == INT32_MAX)
    return "the pod's eviction cost is the maximum";
  if (c.workload) {
    if (!c.expected_replicas)
      return fmt::format("the expected replicas of {} {}/{} are unknown", c.workload->kind,
                         c.pod_namespace, c.workload->name);
    if (expectedReplicasForbid(args_, *c.expected_replicas))
      return fmt::format("{} {}/{} has too few replicas ({}) to migrate one", c.workload->kind,
                         c.pod_namespace, c.workload->name, *c.expected_replicas);
  }
  return std::nullopt;
}

std::vector<Decision> Arbitrator::arbitrate(const std::vector<PendingJob>& jobs) {
  Jobs order;
  order.reserve(jobs.size());
  for (const PendingJob& j : jobs)
    order.push_back(&j);
  order = sortPendingJobs(std::move(order), limits_);

  std::vector<Decision> out;
  out.reserve(order.size());
  for (const PendingJob* j : order) {
    Decision d{j->uid, Verdict::kStart, {}};
    if (!j->pod_found) {
      // Nothing to count: the controller finds the pod missing and fails the job.
      out.push_back(std::move(d));
      continue;
    }
    if (auto why = failure(*j)) {
      d.verdict = Verdict::kFail;
      d.reason = fmt::format("Pod {:?} is forbidden to migrate: {}", j->candidate.podKey(), *why);
    } else {
      MigrationCandidate c = j->candidate;
      c.job_uid = j->uid;
      Admission a = limits_.tryAdmit(c);
      if (!a.admitted) {
        d.verdict = Verdict::kWait;
        d.reason = std::move(a.reason);
      }
    }
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace koord::roles::descheduler::migration
