#include "plugins/elasticquota/quota_check.h"

#include <catch2/catch.hpp>

#include "plugins/elasticquota/group_quota_manager.h"
#include "quota_test_util.h"

using namespace koord::roles::scheduler::elasticquota;
using namespace elasticquota_test;
using koord::roles::scheduler::Code;

TEST_CASE("PreFilter check: the refusal names the quota and the resources exceeded",
          "[scheduler][elasticquota]") {
  const QuotaCheckState state{
      .quota_name = "team-a",
      .used = {{"cpu", 3500}, {"memory", 2LL << 30}},
      .non_preemptible_used = {{"cpu", 1000}},
      .used_limit = {{"cpu", 4000}, {"memory", 4LL << 30}},
      .min = {{"cpu", 2000}},
  };
  CHECK_FALSE(checkQuotaFit(state, {{"cpu", 500}}, false).has_value());
  // Resources the limit does not name are not limited.
  CHECK_FALSE(checkQuotaFit(state, {{"cpu", 500}, {"nvidia.com/gpu", 8}}, false).has_value());
  auto refused = checkQuotaFit(state, {{"cpu", 1000}, {"memory", 3LL << 30}}, false);
  REQUIRE(refused.has_value());
  CHECK(*refused ==
        "Insufficient quotas, quotaName: team-a, runtime: cpu:4,memory:4Gi, used: "
        "cpu:3500m,memory:2Gi, pod's request: cpu:1,memory:3Gi, exceedDimensions: [cpu memory]");
  // A non-preemptible pod must also fit the quota's min with the other non-preemptible pods.
  const QuotaCheckState roomy{
      .quota_name = "team-a",
      .used = {{"cpu", 1000}},
      .non_preemptible_used = {{"cpu", 1000}},
      .used_limit = {{"cpu", 4000}},
      .min = {{"cpu", 2000}},
  };
  CHECK_FALSE(checkQuotaFit(roomy, {{"cpu", 500}}, true).has_value());
  CHECK_FALSE(checkQuotaFit(roomy, {{"cpu", 1500}}, false).has_value());
  auto non_preemptible = checkQuotaFit(roomy, {{"cpu", 1500}}, true);
  REQUIRE(non_preemptible.has_value());
  CHECK(*non_preemptible ==
        "Insufficient non-preemptible quotas, quotaName: team-a, min: cpu:2, nonPreemptibleUsed: "
        "cpu:1, pod's request: cpu:1500m, exceedDimensions: [cpu]");
}

TEST_CASE("PreFilter: runtime of the pod's quota, then its ancestors",
          "[scheduler][elasticquota]") {
  SECTION("runtime quota") {
    GroupQuotaManager m{ElasticQuotaArgs{}};
    REQUIRE(m.updateQuota(quota({.name = "A", .max_cores = 100})).has_value());
    REQUIRE(m.updateQuota(quota({.name = "b1", .min_cores = 30, .max_cores = 100})).has_value());
    REQUIRE(m.updateQuota(quota({.name = "b2", .min_cores = 30, .max_cores = 100})).has_value());
    m.setClusterTotalResource({{"cpu", cores(60)}});
    m.onPodAdd("b1", pod("running", cores(30), true));
    m.onPodAdd("b2", pod("other", cores(40), true));
    // The pod being scheduled is already counted in its quota's request.
    auto next = pod("next", cores(1), false);
    next.request["memory"] = 1LL << 30;
    m.onPodAdd("b1", next);
    const koord::roles::scheduler::Status status = m.preFilter("b1", next);
    CHECK(status.code() == Code::kUnschedulable);
    CHECK(status.message() ==
          "Insufficient quotas, quotaName: b1, runtime: cpu:30, used: cpu:30, pod's request: "
          "cpu:1,memory:1Gi, exceedDimensions: [cpu]");
    CHECK(m.preFilter("nope", next).code() == Code::kError);
    // Once b2's pod is gone, b1 may borrow.
    m.onPodDelete("ns", "other");
    CHECK(m.preFilter("b1", next).ok());
  }
  SECTION("max, parents checked") {
    ElasticQuotaArgs args;
    args.enable_runtime_quota = false;
    args.enable_check_parent_quota = true;
    GroupQuotaManager m{args};
    REQUIRE(m.updateQuota(quota({.name = "P", .max_cores = 10})).has_value());
    REQUIRE(m.updateQuota(quota({.name = "c1", .parent = "P", .max_cores = 8})).has_value());
    REQUIRE(m.updateQuota(quota({.name = "c2", .parent = "P", .max_cores = 8})).has_value());
    m.onPodAdd("c1", pod("c1-pod", cores(6), true));
    const auto next = pod("next", cores(5), false);
    const koord::roles::scheduler::Status status = m.preFilter("c2", next);
    CHECK(status.code() == Code::kUnschedulable);
    CHECK(status.message() ==
          "Insufficient quotas, quotaNameTopo: [P c2], runtime: cpu:10, used: cpu:6, pod's "
          "request: cpu:5, exceedDimensions: [cpu]");
    CHECK(m.preFilter("c2", pod("small", cores(4), false)).ok());
    CHECK(m.preFilter("c2", pod("big", cores(9), false)).message() ==
          "Insufficient quotas, quotaName: c2, runtime: cpu:8, used: <empty>, pod's request: "
          "cpu:9, exceedDimensions: [cpu]");
  }
}
