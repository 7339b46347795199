// MigrationControllerArgs: how Koordinator's MigrationController is configured (pluginConfig of
// the MigrationController plugin), decoded strictly, defaulted and validated as Koordinator does.
#pragma once

#include <boost/json/fwd.hpp>

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "framework/plugin.h"
#include "koord/apis/pod_migration_job.h"
#include "koord/core/expected.h"
#include "koord/kube/labels.h"

namespace koord::roles::descheduler::migration {

inline constexpr std::string_view kMigrationControllerName = "MigrationController";
/// The one object limiter Koordinator defines: pods of one workload.
inline constexpr std::string_view kObjectLimiterWorkload = "workload";

/// intstr.IntOrString as the per-workload caps take it: a count, or "N%" of the workload's
/// expected replicas.
struct IntOrPercent {
  bool percent = false;
  std::int32_t value = 0;

  friend bool operator==(const IntOrPercent&, const IntOrPercent&) = default;
};
/// intstr.GetScaledValueFromIntOrPercent: the count, or value% of `total` rounded up or down.
std::int64_t scaledValue(const IntOrPercent& v, std::int64_t total, bool round_up);
/// Koordinator's GetMaxMigrating and GetMaxUnavailable (the same rule): `cap` of `replicas`
/// rounded down; when that is 0 or unset, 10% of more than 10 replicas, 2 of 4 to 10, else 1;
/// never more than `replicas`.
std::int64_t maxPerWorkload(std::int64_t replicas, const std::optional<IntOrPercent>& cap);

/// How a job's pod is removed: the Eviction subresource, a Delete, or the soft-eviction
/// annotation a custom controller acts on.
using EvictionPolicy = EvictionMethod;

struct PriorityThreshold {
  std::optional<std::int32_t> value;
  std::string name;
};

/// Only one of the two may be non-empty.
struct Namespaces {
  std::vector<std::string> include;
  std::vector<std::string> exclude;
};

/// At most `max_migrating` migrations of one object within `duration` (a rate of that many per
/// duration, as Koordinator's token bucket of one); unset max_migrating takes
/// maxMigratingPerWorkload.
struct ObjectLimiter {
  std::chrono::nanoseconds duration{0};
  std::optional<IntOrPercent> max_migrating;
};

struct ArbitrationArgs {
  bool enabled = true;
  std::chrono::nanoseconds interval = std::chrono::milliseconds(500);
};

struct MigrationControllerArgs : PluginArgs {
  bool dry_run = false;
  std::int32_t max_concurrent_reconciles = 1;
  bool evict_failed_bare_pods = false;
  bool evict_local_storage_pods = false;
  bool evict_system_critical_pods = false;
  bool ignore_pvc_pods = false;
  std::optional<PriorityThreshold> priority_threshold;
  /// As written; `selector` is it compiled (everything when unset).
  std::optional<kube::LabelSelector> label_selector;
  kube::Selector selector;
  std::optional<Namespaces> namespaces;
  bool node_fit = false;
  /// A label selector in its string form ("" selects every node).
  std::string node_selector;
  /// Caps of pods migrating at once; unset or 0 means no cap.
  std::optional<std::int32_t> max_migrating_per_node = 2;
  std::optional<std::int32_t> max_migrating_per_namespace;
  std::optional<IntOrPercent> max_migrating_per_workload;
  std::optional<IntOrPercent> max_unavailable_per_workload;
  std::optional<bool> skip_check_expected_replicas;
  /// By object type; Koordinator acts on "workload" only.
  std::map<std::string, ObjectLimiter, std::less<>> object_limiters;
  apis::PodMigrationJobMode default_job_mode = apis::PodMigrationJobMode::kReservationFirst;
  std::chrono::nanoseconds default_job_ttl = std::chrono::minutes(5);
  /// Schedulers that understand Reservations: a ReservationFirst job may only move their pods.
  std::vector<std::string> scheduler_names;
  double evict_qps = 10;
  std::int32_t evict_burst = 1;
  EvictionPolicy eviction_policy = EvictionPolicy::kEviction;
  std::optional<apis::DeleteOptions> default_delete_options;
  ArbitrationArgs arbitration;

  /// The workload object limiter when it limits anything (a positive duration).
  const ObjectLimiter* workloadLimiter() const;
};

/// The defaults alone (what no pluginConfig gives).
MigrationControllerArgs defaultMigrationControllerArgs();
/// Decodes the args body (apiVersion and kind already taken off; nullptr: none given), applies
/// Koordinator's defaults and validates. Unknown members and wrong types are refused by path
/// ("objectLimiters.workload.duration: ..."), as are the values Koordinator's validation refuses.
Expected<MigrationControllerArgs> decodeMigrationControllerArgs(const boost::json::value* args);
/// Koordinator's ValidateMigrationControllerArgs, plus what it checks only when the controller
/// starts (the eviction policy, the node selector's syntax); the first error names its field.
Expected<void> validateMigrationControllerArgs(const MigrationControllerArgs& args);

}  // namespace koord::roles::descheduler::migration
