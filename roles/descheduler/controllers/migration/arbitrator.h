// The MigrationController's arbitrator: orders Pending PodMigrationJobs as Koordinator sorts them
// and answers, job by job, whether it starts now, waits for a cap, or fails as forbidden.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "args.h"
#include "koord/apis/extension.h"
#include "limits.h"

namespace koord::roles::descheduler::migration {

/// What Koordinator's PodSorter compares, lowest first: priority class, priority, Kubernetes
/// QoS, koord QoS, deletion cost, eviction cost, and newest first.
struct PodSortKey {
  /// koordinator.sh/priority-class, else the band of spec.priority, else from the QoS.
  apis::PriorityClass priority_class = apis::PriorityClass::kNone;
  std::int32_t priority = 0;
  apis::KubeQoS kube_qos = apis::KubeQoS::kBestEffort;
  /// koordinator.sh/qosClass, else from the Kubernetes QoS.
  apis::QoSClass koord_qos = apis::QoSClass::kNone;
  /// controller.kubernetes.io/pod-deletion-cost and scheduling.koordinator.sh/eviction-cost.
  std::int32_t deletion_cost = 0;
  std::int32_t eviction_cost = 0;
  std::chrono::system_clock::time_point creation_timestamp{};
};

/// The key of a pod as the descheduler's informer holds it.
PodSortKey sortKeyOf(const Pod& pod);

struct PendingJob {
  std::string uid;
  std::string name;
  std::chrono::system_clock::time_point creation_timestamp{};
  /// False when the job's pod could not be read: such a job goes first and passes (the
  /// controller then fails it as MissingPod), as in Koordinator.
  bool pod_found = true;
  /// The pod's facts for the caps (job_uid is this job's).
  MigrationCandidate candidate;
  PodSortKey sort;
  /// The framework's evictor filter (the checks that never change for this pod) refused it.
  bool forbidden = false;
};

enum class Verdict { kStart, kWait, kFail };

struct Decision {
  std::string job_uid;
  Verdict verdict = Verdict::kWait;
  /// Why it waits or fails (empty when it starts).
  std::string reason;
};

/// Koordinator's four sorts, applied in turn and each stable, so the last decides first: jobs
/// of the batch Job (kind Job) with the most migrating jobs first; jobs of one batch Job kept
/// together; pods in PodSorter order (jobs without a pod first); newest job first.
std::vector<const PendingJob*> sortPendingJobs(std::vector<const PendingJob*> jobs,
                                               const MigrationLimits& limits);

class Arbitrator {
 public:
  Arbitrator(const MigrationControllerArgs& args, MigrationLimits& limits);

  /// One round: sorts `jobs`, then in that order fails the jobs the unchanging checks refuse
  /// (forbidden, outside the namespaces, an eviction cost of MaxInt32, expected replicas) and
  /// starts those that fit every cap, each start taking its slot before the next is looked at.
  /// Decisions come in the sorted order.
  std::vector<Decision> arbitrate(const std::vector<PendingJob>& jobs);

 private:
  std::optional<std::string> failure(const PendingJob& job) const;

  const MigrationControllerArgs args_;
  MigrationLimits& limits_;
};

}  // namespace koord::roles::descheduler::migration
