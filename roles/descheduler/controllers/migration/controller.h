// The MigrationController's reconcile loop (Koordinator's controllers/migration): it watches
// PodMigrationJobs and Reservations, admits Pending jobs through the arbitrator and the caps, and
// drives each Running job: ReservationFirst reserves room first, waits for it, evicts, and ends
// when the replacement holds the reservation; EvictDirectly evicts; a job past its ttl fails.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "controllers/migration/arbitrator.h"
#include "controllers/migration/args.h"
#include "controllers/migration/limits.h"
#include "framework/cluster_services.h"
#include "koord/apis/pod_migration_job.h"
#include "koord/apis/reservation.h"
#include "koord/core/metrics.h"
#include "koord/kube/event_recorder.h"

namespace koord::roles::descheduler::migration {

class MigrationJobController {
 public:
  MigrationJobController(std::shared_ptr<const MigrationControllerArgs> args,
                         ClusterServices& cluster, metrics::Registry& metrics);
  ~MigrationJobController();
  MigrationJobController(const MigrationJobController&) = delete;
  MigrationJobController& operator=(const MigrationJobController&) = delete;

  /// Starts the informers (once discovery finds the PodMigrationJob API) and the loop.
  void start();
  void stop();

  /// Whether a job not yet finished is about the pod with this UID.
  bool hasActiveJob(std::string_view pod_uid) const;
  /// The Evict plugin's path: a PodMigrationJob for `pod` (none in dry-run, and none when an
  /// active one exists). True when a job exists for it afterwards.
  bool createJob(const Pod& pod, std::string_view trigger, std::string_view reason);
  /// The caps, for the Filter plugin.
  MigrationLimits& limits() { return limits_; }
  /// Whether the PodMigrationJob and Reservation informers have listed (true once discovery
  /// found the API not served: there is nothing to list).
  bool synced() const;

  /// One round over every job (the loop calls it each arbitration interval).
  void reconcileAll();

 private:
  struct Informers;
  void reconcileRunning(const std::vector<const apis::PodMigrationJob*>& jobs,
                        std::chrono::system_clock::time_point now);
  void reconcile(const apis::PodMigrationJob& job, std::chrono::system_clock::time_point now);
  void runReservationFirst(const apis::PodMigrationJob& job, apis::PodMigrationJobStatus status);
  void runEvictDirectly(const apis::PodMigrationJob& job, apis::PodMigrationJobStatus status);
  /// Evicts the job's pod once (Eviction=False/Evicting), then waits until it is gone
  /// (Eviction=True/EvictComplete): true then, false while waiting; nullopt when the job ended
  /// (its pod went missing before the eviction). Changes `status`, writing what it must.
  std::optional<bool> advanceEviction(const apis::PodMigrationJob& job,
                                      apis::PodMigrationJobStatus& status);
  /// One eviction call for the job's pod through the policy that applies to it.
  bool evictPod(const apis::PodMigrationJob& job, const boost::json::value& pod);
  EvictionPolicy evictionPolicyFor(const apis::PodMigrationJob& job,
                                   const boost::json::value& pod) const;
  void finish(const apis::PodMigrationJob& job, apis::PodMigrationJobStatus status,
              apis::PodMigrationJobPhase phase, std::string_view reason, std::string message);
  bool writeStatus(const apis::PodMigrationJob& job, const apis::PodMigrationJobStatus& status);
  void recordJobEvent(const apis::PodMigrationJob& job, kube::EventType type, std::string reason,
                      std::string message);
  std::optional<std::int32_t> expectedReplicas(const WorkloadRef& workload, const std::string& ns);
  /// The job's facts for the caps; `pod`, when given, gets the informer's pod (null if unknown).
  MigrationCandidate candidateOf(const apis::PodMigrationJob& job,
                                 std::shared_ptr<const Pod>* pod = nullptr);

  std::shared_ptr<const MigrationControllerArgs> args_;
  ClusterServices& cluster_;
  MigrationLimits limits_;
  Arbitrator arbitrator_;
  EvictRateLimiter evict_rate_;
  metrics::GaugeFamily& jobs_by_phase_;
  std::unique_ptr<Informers> informers_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;  // under mu_
  std::thread thread_;
};

}  // namespace koord::roles::descheduler::migration
