// DefaultEvictorArgs: defaults, every member read, and strict refusals naming the field.
#include "plugins/defaultevictor/args.h"

#include <boost/json.hpp>

#include <catch2/catch.hpp>

#include <string>

#include "args_checks.h"

namespace koord::roles::descheduler::defaultevictor {
namespace {

const auto decode = testkit::textDecoder(decodeDefaultEvictorArgs);

TEST_CASE("DefaultEvictorArgs: absent or null args are the zero defaults", "[descheduler]") {
  testkit::forNoArgs(decodeDefaultEvictorArgs, [](const Expected<DefaultEvictorArgs>& a) {
    REQUIRE(a.has_value());
    CHECK(a->node_selector.empty());
    CHECK_FALSE(a->evict_local_storage_pods);
    CHECK_FALSE(a->evict_system_critical_pods);
    CHECK_FALSE(a->ignore_pvc_pods);
    CHECK_FALSE(a->evict_failed_bare_pods);
    CHECK_FALSE(a->label_selector);
    CHECK_FALSE(a->priority_threshold);
    CHECK_FALSE(a->node_fit);
  });
}

TEST_CASE("DefaultEvictorArgs: every member is read", "[descheduler]") {
  auto a = decode(R"js({
    "nodeSelector": "pool=general,zone in (a,b)",
    "evictLocalStoragePods": true,
    "evictSystemCriticalPods": true,
    "ignorePvcPods": true,
    "evictFailedBarePods": true,
    "labelSelector": {"matchLabels": {"app": "web"}},
    "priorityThreshold": {"value": 10000},
    "nodeFit": true
  })js");
  REQUIRE(a.has_value());
  CHECK(a->node_selector == "pool=general,zone in (a,b)");
  CHECK(a->evict_local_storage_pods);
  CHECK(a->evict_system_critical_pods);
  CHECK(a->ignore_pvc_pods);
  CHECK(a->evict_failed_bare_pods);
  REQUIRE(a->label_selector);
  CHECK(a->label_selector->match_labels.at("app") == "web");
  REQUIRE(a->priority_threshold);
  CHECK(a->priority_threshold->value == 10000);
  CHECK(a->priority_threshold->name.empty());
  CHECK(a->node_fit);

  auto named = decode(R"({"priorityThreshold": {"name": "koord-prod"}})");
  REQUIRE(named.has_value());
  REQUIRE(named->priority_threshold);
  CHECK_FALSE(named->priority_threshold->value);
  CHECK(named->priority_threshold->name == "koord-prod");
}

TEST_CASE("DefaultEvictorArgs: strict decoding names the field", "[descheduler]") {
  const testkit::Refusal cases[] = {
      {R"({"nodefit": true})", "nodefit"},
      {R"({"nodeFit": "true"})", "nodeFit"},
      {R"({"evictLocalStoragePods": 1})", "evictLocalStoragePods"},
      {R"({"nodeSelector": 3})", "nodeSelector"},
      {R"({"nodeSelector": "a in (b"})", "nodeSelector"},
      {R"({"priorityThreshold": {"value": "high"}})", "priorityThreshold.value"},
      {R"({"priorityThreshold": {"value": 3000000000}})", "priorityThreshold.value"},
      {R"({"priorityThreshold": {"level": 3}})", "level"},
      {R"({"priorityThreshold": 5})", "priorityThreshold"},
      {R"({"labelSelector": {"matchLabel": {"a": "b"}}})", "matchLabel"},
      {R"({"labelSelector": {"matchExpressions": [{"key": "a", "operator": "Near"}]}})",
       "labelSelector"},
      {R"([true])", "args"},
  };
  testkit::checkRefusals(decodeDefaultEvictorArgs, cases);
}

}  // namespace
}  // namespace koord::roles::descheduler::defaultevictor
