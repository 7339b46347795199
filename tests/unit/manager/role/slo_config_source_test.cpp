#include <catch2/catch.hpp>

#include "koord/core/metrics.h"
#include "sloconfig/slo_config_source.h"

using koord::roles::manager::ConfigMapData;
using koord::roles::manager::SloConfigSource;

namespace {

ConfigMapData cm(std::string colocation) {
  ConfigMapData d;
  d.namespace_ = "koordinator-system";
  d.name = "slo-controller-config";
  d.data["colocation-config"] = std::move(colocation);
  return d;
}

}  // namespace

TEST_CASE("slo config source: nothing to act on until a configuration parses", "[sloconfig]") {
  koord::metrics::Registry registry;
  SloConfigSource source("koordinator-system", "slo-controller-config", nullptr, registry);
  CHECK_FALSE(source.current().has_value());
  int changes = 0;
  source.onChange([&] { ++changes; });
  source.update(cm(R"({"enable": "yes"})"));
  CHECK_FALSE(source.current().has_value());
  CHECK_FALSE(source.lastError().empty());
  CHECK(changes == 0);
  CHECK(registry.render().find("koord_manager_slo_config_parse_errors_total 1") !=
        std::string::npos);
}

TEST_CASE("slo config source: a malformed update keeps the last good configuration",
          "[sloconfig]") {
  koord::metrics::Registry registry;
  SloConfigSource source("koordinator-system", "slo-controller-config", nullptr, registry);
  int changes = 0;
  source.onChange([&] { ++changes; });
  source.update(cm(R"({"enable": true, "cpuReclaimThresholdPercent": 50})"));
  REQUIRE(source.current().has_value());
  CHECK(changes == 1);
  auto good = *source.current();
  source.update(cm(R"({"cpuReclaimThresholdPercent": -5})"));
  REQUIRE(source.current().has_value());
  CHECK(*source.current() == good);
  CHECK(changes == 1);
  CHECK(source.lastError().find("cpuReclaimThresholdPercent") != std::string::npos);
  CHECK(registry.render().find("koord_manager_slo_config_valid 0") != std::string::npos);
  // The same good content again changes nothing and announces nothing...
  source.update(cm(R"({"enable": true, "cpuReclaimThresholdPercent": 50})"));
  CHECK(changes == 2);  // ...except that leaving the error state is announced once
  source.update(cm(R"({"enable": true, "cpuReclaimThresholdPercent": 50})"));
  CHECK(changes == 2);
  CHECK(registry.render().find("koord_manager_slo_config_valid 1") != std::string::npos);
}

TEST_CASE("slo config source: no ConfigMap means Koordinator's defaults", "[sloconfig]") {
  koord::metrics::Registry registry;
  SloConfigSource source("koordinator-system", "slo-controller-config", nullptr, registry);
  source.markSyncedWithoutConfigMap();
  REQUIRE(source.current().has_value());
  auto strategy = koord::apis::colocationStrategyForNode((*source.current())->colocation, {}, {});
  CHECK_FALSE(strategy.enable);
  CHECK(strategy.cpu_reclaim_threshold_percent == 60);
  source.update(cm(R"({"enable": true})"));
  source.remove();
  REQUIRE(source.current().has_value());
  CHECK_FALSE(
      koord::apis::colocationStrategyForNode((*source.current())->colocation, {}, {}).enable);
}
