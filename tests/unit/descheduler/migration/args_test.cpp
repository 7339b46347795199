// MigrationControllerArgs: Koordinator's defaults, every member decoded, and each value its
// validation (or strict decoding) refuses named by its field.
#include "controllers/migration/args.h"

#include <boost/json.hpp>

#include <catch2/catch.hpp>

#include "catch_expected.h"

using namespace koord::roles::descheduler::migration;
namespace json = boost::json;
using namespace std::chrono_literals;

namespace {

koord::Expected<MigrationControllerArgs> decode(std::string_view text) {
  const json::value v = json::parse(text);
  return decodeMigrationControllerArgs(&v);
}

}  // namespace

TEST_CASE("migration args: no args and empty args give Koordinator's defaults",
          "[migration][args]") {
  for (const char* text : {"null", "{}", R"({"objectLimiters": {}, "schedulerNames": []})"}) {
    INFO(text);
    auto a = decode(text);
    REQUIRE(a);
    CHECK_FALSE(a->dry_run);
    CHECK(a->max_concurrent_reconciles == 1);
    CHECK(a->max_migrating_per_node == 2);
    CHECK_FALSE(a->max_migrating_per_namespace);
    CHECK_FALSE(a->max_migrating_per_workload);
    CHECK_FALSE(a->max_unavailable_per_workload);
    CHECK_FALSE(a->skip_check_expected_replicas);
    CHECK(a->default_job_mode == koord::apis::PodMigrationJobMode::kReservationFirst);
    CHECK(a->default_job_ttl == std::chrono::nanoseconds(5min));
    CHECK(a->evict_qps == 10);
    CHECK(a->evict_burst == 1);
    CHECK(a->eviction_policy == EvictionPolicy::kEviction);
    CHECK(a->scheduler_names == std::vector<std::string>{"koord-scheduler"});
    REQUIRE(a->object_limiters.size() == 1);
    REQUIRE(a->workloadLimiter() != nullptr);
    CHECK(a->workloadLimiter()->duration == std::chrono::nanoseconds(5min));
    CHECK_FALSE(a->workloadLimiter()->max_migrating);
    CHECK(a->arbitration.enabled);
    CHECK(a->arbitration.interval == std::chrono::nanoseconds(500ms));
    CHECK_FALSE(a->evict_local_storage_pods);
    CHECK_FALSE(a->evict_system_critical_pods);
    CHECK_FALSE(a->ignore_pvc_pods);
    CHECK_FALSE(a->priority_threshold);
    CHECK_FALSE(a->namespaces);
    CHECK_FALSE(a->default_delete_options);
    CHECK(a->selector.empty());
  }
  auto none = decodeMigrationControllerArgs(nullptr);
  REQUIRE(none);
  CHECK(none->max_migrating_per_node == 2);
}

TEST_CASE("migration args: every member decodes", "[migration][args]") {
  auto a = decode(R"({
    "dryRun": true, "maxConcurrentReconciles": 4, "evictFailedBarePods": true,
    "evictLocalStoragePods": true, "evictSystemCriticalPods": true, "ignorePvcPods": true,
    "priorityThreshold": {"value": 9000}, "labelSelector": {"matchLabels": {"app": "web"}},
    "namespaces": {"exclude": ["kube-system"]}, "nodeFit": true, "nodeSelector": "pool=a",
    "maxMigratingPerNode": 3, "maxMigratingPerNamespace": 5, "maxMigratingPerWorkload": "20%",
    "maxUnavailablePerWorkload": 2, "skipCheckExpectedReplicas": true,
    "objectLimiters": {"workload": {"duration": "10m", "maxMigrating": 3}},
    "defaultJobMode": "EvictDirectly", "defaultJobTTL": "30m",
    "schedulerNames": ["koord-scheduler", "other"], "evictQPS": "2.5", "evictBurst": 4,
    "evictionPolicy": "SoftEviction",
    "defaultDeleteOptions": {"kind": "DeleteOptions", "gracePeriodSeconds": 5},
    "arbitrationArgs": {"enabled": true, "interval": "1s"}
  })");
  REQUIRE(a);
  CHECK(a->dry_run);
  CHECK(a->max_concurrent_reconciles == 4);
  CHECK(a->evict_failed_bare_pods);
  CHECK(a->evict_local_storage_pods);
  CHECK(a->evict_system_critical_pods);
  CHECK(a->ignore_pvc_pods);
  REQUIRE(a->priority_threshold);
  CHECK(a->priority_threshold->value == 9000);
  CHECK(a->selector.matches({{"app", "web"}}));
  CHECK_FALSE(a->selector.matches({{"app", "db"}}));
  REQUIRE(a->namespaces);
  CHECK(a->namespaces->exclude == std::vector<std::string>{"kube-system"});
  CHECK(a->node_fit);
  CHECK(a->node_selector == "pool=a");
  CHECK(a->max_migrating_per_node == 3);
  CHECK(a->max_migrating_per_namespace == 5);
  CHECK(a->max_migrating_per_workload == IntOrPercent{true, 20});
  CHECK(a->max_unavailable_per_workload == IntOrPercent{false, 2});
  CHECK(a->skip_check_expected_replicas == true);
  REQUIRE(a->workloadLimiter() != nullptr);
  CHECK(a->workloadLimiter()->duration == std::chrono::nanoseconds(10min));
  CHECK(a->workloadLimiter()->max_migrating == IntOrPercent{false, 3});
  CHECK(a->default_job_mode == koord::apis::PodMigrationJobMode::kEvictDirectly);
  CHECK(a->default_job_ttl == std::chrono::nanoseconds(30min));
  CHECK(a->scheduler_names.size() == 2);
  CHECK(a->evict_qps == 2.5);
  CHECK(a->evict_burst == 4);
  CHECK(a->eviction_policy == EvictionPolicy::kSoftEviction);
  REQUIRE(a->default_delete_options);
  CHECK(a->default_delete_options->grace_period_seconds == 5);
  CHECK(a->arbitration.enabled);
  CHECK(a->arbitration.interval == std::chrono::nanoseconds(1s));
}

TEST_CASE("migration args: partial nested args default as Koordinator defaults them",
          "[migration][args]") {
  // Given arbitrationArgs keep their enabled as written (false when left out).
  auto a = decode(R"({"arbitrationArgs": {"interval": "2s"}, "evictQPS": 3,
                      "objectLimiters": {"workload": {"duration": "0s"}}})");
  REQUIRE(a);
  CHECK_FALSE(a->arbitration.enabled);
  CHECK(a->arbitration.interval == std::chrono::nanoseconds(2s));
  CHECK(a->evict_qps == 3);
  // A zero window turns the workload limiter off.
  CHECK(a->workloadLimiter() == nullptr);
  auto b = decode(R"({"arbitrationArgs": {}})");
  REQUIRE(b);
  CHECK(b->arbitration.interval == std::chrono::nanoseconds(500ms));
  // maxMigratingPerNode 0 is kept (no cap), not defaulted.
  auto c = decode(R"({"maxMigratingPerNode": 0})");
  REQUIRE(c);
  CHECK(c->max_migrating_per_node == 0);
}

TEST_CASE("migration args: bad values are refused by their field", "[migration][args]") {
  struct Case {
    const char* json;
    const char* error;
  };
  const Case cases[] = {
      {R"([])", "must be an object"},
      {R"({"maxMigratingPerPod": 1})", R"(unknown field "maxMigratingPerPod")"},
      {R"({"dryRun": "yes"})", "dryRun"},
      {R"({"maxConcurrentReconciles": 0})", "maxConcurrentReconciles"},
      {R"({"maxConcurrentReconciles": 1.5})", "maxConcurrentReconciles"},
      {R"({"maxMigratingPerNode": -1})", "maxMigratingPerNode"},
      {R"({"maxMigratingPerNamespace": -2})", "maxMigratingPerNamespace"},
      {R"({"maxMigratingPerWorkload": "ten"})", "maxMigratingPerWorkload"},
      {R"({"maxMigratingPerWorkload": "1.5%"})", "maxMigratingPerWorkload"},
      {R"({"maxUnavailablePerWorkload": true})", "maxUnavailablePerWorkload"},
      {R"({"evictQPS": 0})", "evictQPS"},
      {R"({"evictQPS": "fast"})", "evictQPS"},
      {R"({"evictQPS": -1})", "evictQPS"},
      {R"({"evictBurst": 0})", "evictBurst"},
      {R"({"labelSelector": {"matchExpressions": [{"key": "a", "operator": "Near"}]}})",
       "labelSelector"},
      {R"({"labelSelector": {"matchLabel": {}}})", R"(unknown field "matchLabel")"},
      {R"({"namespaces": {"include": ["a"], "exclude": ["b"]}})",
       "namespaces: only one of Include/Exclude"},
      {R"({"namespaces": {"include": "a"}})", "namespaces.include"},
      {R"({"namespaces": {"only": ["a"]}})", R"(unknown field "only")"},
      {R"({"defaultJobMode": "Teleport"})", "defaultJobMode"},
      {R"({"defaultJobTTL": "-1m"})", "defaultJobTTL"},
      {R"({"defaultJobTTL": 300})", "defaultJobTTL"},
      {R"({"evictionPolicy": "Kill"})", "evictionPolicy"},
      {R"({"schedulerNames": "koord-scheduler"})", "schedulerNames"},
      {R"({"objectLimiters": {"workload": {"duration": "soon"}}})",
       "objectLimiters.workload.duration"},
      {R"({"objectLimiters": {"workload": {"burst": 2}}})", R"(unknown field "burst")"},
      {R"({"objectLimiters": {"workload": 5}})", "objectLimiters.workload"},
      {R"({"priorityThreshold": {"value": "high"}})", "priorityThreshold.value"},
      {R"({"defaultDeleteOptions": {"gracePeriod": 1}})", R"(unknown field "gracePeriod")"},
      {R"({"defaultDeleteOptions": {"propagationPolicy": "Up"}})",
       "defaultDeleteOptions.propagationPolicy"},
      {R"({"arbitrationArgs": {"interval": 500}})", "arbitrationArgs.interval"},
      {R"({"nodeSelector": "a in (b"})", "nodeSelector"},
  };
  for (const auto& c : cases) {
    INFO(c.json);
    auto a = decode(c.json);
    REQUIRE_FALSE(a);
    CHECK_THAT(a.error().message, Catch::Contains(c.error));
  }
}

TEST_CASE("migration args: per-workload caps scale as Koordinator's GetMaxMigrating",
          "[migration][args]") {
  struct Case {
    std::int64_t replicas;
    std::optional<IntOrPercent> cap;
    std::int64_t want;
  };
  const Case cases[] = {
      {1, std::nullopt, 1},
      {3, std::nullopt, 1},
      {4, std::nullopt, 2},
      {10, std::nullopt, 2},
      {11, std::nullopt, 1},
      {25, std::nullopt, 2},
      {100, std::nullopt, 10},
      {0, std::nullopt, 0},
      {10, IntOrPercent{false, 3}, 3},
      {2, IntOrPercent{false, 5}, 2},   // never more than the replicas
      {10, IntOrPercent{true, 25}, 2},  // rounded down
      {10, IntOrPercent{true, 5}, 2},   // 0 after rounding: the default rule
      {10, IntOrPercent{false, 0}, 2},
  };
  for (const auto& c : cases) {
    INFO("replicas " << c.replicas);
    CHECK(maxPerWorkload(c.replicas, c.cap) == c.want);
  }
  CHECK(scaledValue(IntOrPercent{true, 25}, 10, true) == 3);
  CHECK(scaledValue(IntOrPercent{true, 25}, 10, false) == 2);
}
