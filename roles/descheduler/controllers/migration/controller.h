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

#include "controllers/migration/arbitrator.h"
#include "controllers/migration/args.h"
#include "controllers/migration/limits.h"
#include "framework/cluster_services.h"
#include "koord/apis/pod_migration_job.h"
#include "koord/apis/reservation.h"
#include "koord/core/metrics.h"

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
  void reconcile(const apis::PodMigrationJob& job, std::chrono::system_clock::time_point now);
  void runReservationFirst(const apis::PodMigrationJob& job, apis::PodMigrationJobStatus status);
  void runEvictDirectly(const apis::PodMigrationJob& job, apis::PodMigrationJobStatus status);
  /// Evicts the job's pod; true once it is gone or evicted.
  bool evictPod(const apis::PodMigrationJob& job, const boost::json::value& pod);
  void finish(const apis::PodMigrationJob& job, apis::PodMigrationJobStatus status,
              apis::PodMigrationJobPhase phase, std::string_view reason, std::string message);
  bool writeStatus(const apis::PodMigrationJob& job, const apis::PodMigrationJobStatus& status);
  std::optional<std::int32_t> expectedReplicas(const WorkloadRef& workload, const std::string& ns);
  MigrationCandidate candidateOf(const apis::PodMigrationJob& job);

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
