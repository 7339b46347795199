// The caps a PodMigrationJob must fit before it starts (Koordinator's arbitrator filters): pods
// migrating per node, namespace and workload, the workload object limiter, the eviction rate.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "args.h"
#include "koord/core/clock.h"

namespace koord::roles::descheduler::migration {

/// A pod's controller (metav1.GetControllerOf).
struct WorkloadRef {
  std::string api_version;
  std::string kind;
  std::string name;
  std::string uid;
};

/// What the caps read about a job and its pod.
struct MigrationCandidate {
  std::string job_uid;
  std::string pod_namespace;
  std::string pod_name;
  std::string pod_uid;
  std::string node_name;
  std::optional<WorkloadRef> workload;
  /// The workload's expected replicas; nullopt when its controller could not be looked up (the
  /// job then waits, as Koordinator's filter answers false on that error).
  std::optional<std::int32_t> expected_replicas;
  /// "namespace/name" of the workload's pods that are not both active and ready (the candidate
  /// itself included when it is one of them, as in Koordinator).
  std::vector<std::string> unavailable_pods;
  /// The pod carries descheduler.alpha.kubernetes.io/evict: no cap applies to it.
  bool evict_annotation = false;

  std::string podKey() const { return pod_namespace + "/" + pod_name; }
};

struct Admission {
  bool admitted = false;
  /// Which cap held the job back, for logs and the job's message; empty when admitted.
  std::string reason;
};

/// The pods migrating now (jobs Running, or let start by the arbitrator), and the caps over them.
/// Thread-safe: tryAdmit checks every cap and takes the job's slot in one step under one lock,
/// comparing the count of the others with >=, so concurrent callers never pass a cap together.
class MigrationLimits {
 public:
  explicit MigrationLimits(const MigrationControllerArgs& args, Clock& clock = Clock::real());

  /// Whether `c` fits every cap now, without taking a slot.
  Admission check(const MigrationCandidate& c) const;
  /// check(), and when it passes the job counts as migrating from now on.
  Admission tryAdmit(const MigrationCandidate& c);
  /// Counts a job as migrating without checks (a Running job found at start, or one admitted
  /// elsewhere). Tracking a job again replaces what was known about it.
  void track(const MigrationCandidate& c);
  /// The job finished or was deleted: its slot is free again.
  void release(std::string_view job_uid);

  /// Pods with a migrating job on `node` / jobs for pods in `ns` / pods of workload `uid`.
  std::size_t migratingOnNode(std::string_view node) const;
  std::size_t migratingInNamespace(std::string_view ns) const;
  std::size_t migratingInWorkload(std::string_view workload_uid) const;
  std::size_t migrating() const;

  /// Koordinator's trackEvictedPod: one eviction of `workload`'s pods spends the token of its
  /// limiter, which refills at maxMigrating per duration of the workload object limiter.
  void trackEvicted(const WorkloadRef& workload, std::optional<std::int32_t> expected_replicas);
  /// Whether `workload_uid` waits for its limiter to refill.
  bool objectLimited(std::string_view workload_uid) const;

 private:
  struct Tracked {
    std::string pod_namespace;
    std::string pod_key;
    std::string pod_uid;
    std::string node_name;
    std::string workload_uid;
  };
  struct ObjectBucket {
    double rate_per_second = 0;
    double tokens = 1;
    std::chrono::steady_clock::time_point last{};
    std::chrono::steady_clock::time_point last_tracked{};
  };

  Admission checkLocked(const MigrationCandidate& c) const;
  void trackLocked(const MigrationCandidate& c);
  bool objectLimitedLocked(std::string_view workload_uid) const;
  void dropExpiredLocked(std::chrono::steady_clock::time_point now) const;

  const MigrationControllerArgs args_;
  Clock& clock_;
  mutable std::mutex mu_;
  std::map<std::string, Tracked, std::less<>> jobs_;
  mutable std::map<std::string, ObjectBucket, std::less<>> buckets_;
};

/// Koordinator's filterExpectedReplicas: unless skipCheckExpectedReplicas, a workload of one
/// replica, or one whose maxMigrating or maxUnavailable is all of its replicas, may not migrate
/// at all (the job fails rather than waits).
bool expectedReplicasForbid(const MigrationControllerArgs& args, std::int32_t expected_replicas);

/// client-go's token bucket TryAccept for evictions: evictQPS per second, evictBurst at once, the
/// bucket full at start. Thread-safe.
class EvictRateLimiter {
 public:
  EvictRateLimiter(double qps, std::int32_t burst, Clock& clock = Clock::real());
  /// Takes a token when there is one; false (and nothing taken) when there is none.
  bool tryAccept();

 private:
  const double qps_;
  const double burst_;
  Clock& clock_;
  std::mutex mu_;
  double tokens_;
  std::chrono::steady_clock::time_point last_;
};

}  // namespace koord::roles::descheduler::migration
