#include "plugins/elasticquota/args.h"

#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <limits>

using namespace koord::roles::scheduler::elasticquota;
using namespace std::chrono_literals;
namespace kube = koord::kube;
namespace json = boost::json;

namespace {

kube::Expected<ElasticQuotaArgs> decode(std::string_view text) {
  const json::value v = json::parse(text);
  return decodeElasticQuotaArgs(&v, "kubescheduler.config.k8s.io/v1beta3");
}

std::int64_t valueOf(const kube::ResourceList& list, const std::string& name) {
  return list.at(name).value();
}

}  // namespace

TEST_CASE("ElasticQuotaArgs: Koordinator's defaults", "[scheduler][elasticquota]") {
  auto none = decodeElasticQuotaArgs(nullptr, "kubescheduler.config.k8s.io/v1beta3");
  REQUIRE(none.has_value());
  CHECK(none->delay_evict_time == 120s);
  CHECK(none->revoke_pod_interval == 1s);
  CHECK(none->quota_group_namespace == "koordinator-system");
  CHECK_FALSE(none->monitor_all_quotas);
  CHECK_FALSE(none->enable_check_parent_quota);
  CHECK(none->enable_runtime_quota);
  const std::int64_t huge = std::numeric_limits<std::int64_t>::max() / 5;
  CHECK(valueOf(none->default_quota_group_max, "cpu") == huge);
  CHECK(valueOf(none->default_quota_group_max, "memory") == huge);
  CHECK(valueOf(none->system_quota_group_max, "cpu") == huge);
  CHECK(valueOf(none->system_quota_group_max, "memory") == huge);
  CHECK(none->default_quota_group_max.size() == 2);
  auto empty = decode(R"({"defaultQuotaGroupMax": {}, "quotaGroupNamespace": ""})");
  REQUIRE(empty.has_value());
  CHECK(empty->quota_group_namespace == "koordinator-system");
  CHECK(valueOf(empty->default_quota_group_max, "cpu") == huge);
}

TEST_CASE("ElasticQuotaArgs: every field", "[scheduler][elasticquota]") {
  auto a = decode(R"({"apiVersion": "kubescheduler.config.k8s.io/v1beta3",
                      "kind": "ElasticQuotaArgs", "delayEvictTime": "5m",
                      "revokePodInterval": "10s",
                      "defaultQuotaGroupMax": {"cpu": "100", "memory": "200Gi"},
                      "systemQuotaGroupMax": {"cpu": "8"},
                      "quotaGroupNamespace": "quotas", "monitorAllQuotas": true,
                      "enableCheckParentQuota": true, "enableRuntimeQuota": false})");
  REQUIRE(a.has_value());
  CHECK(a->delay_evict_time == 300s);
  CHECK(a->revoke_pod_interval == 10s);
  CHECK(valueOf(a->default_quota_group_max, "cpu") == 100);
  CHECK(a->default_quota_group_max.at("memory").toString() == "200Gi");
  CHECK(a->system_quota_group_max.size() == 1);
  CHECK(valueOf(a->system_quota_group_max, "cpu") == 8);
  CHECK(a->quota_group_namespace == "quotas");
  CHECK(a->monitor_all_quotas);
  CHECK(a->enable_check_parent_quota);
  CHECK_FALSE(a->enable_runtime_quota);
}

TEST_CASE("ElasticQuotaArgs: bad values are refused, naming the field",
          "[scheduler][elasticquota]") {
  struct Case {
    const char* text;
    const char* field;
  };
  const Case cases[] = {
      {R"({"enableMinQuotaScale": true})", "enableMinQuotaScale"},
      {R"({"delayEvictTime": "-1s"})", "delayEvictTime"},
      {R"({"revokePodInterval": "-5ms"})", "revokePodInterval"},
      {R"({"delayEvictTime": "two minutes"})", "delayEvictTime"},
      {R"({"delayEvictTime": 120})", "delayEvictTime"},
      {R"({"defaultQuotaGroupMax": {"cpu": "-1"}})", "defaultQuotaGroupMax"},
      {R"({"systemQuotaGroupMax": {"memory": "lots"}})", "systemQuotaGroupMax"},
      {R"({"quotaGroupNamespace": 7})", "quotaGroupNamespace"},
      {R"({"monitorAllQuotas": "yes"})", "monitorAllQuotas"},
      {R"({"enableRuntimeQuota": 1})", "enableRuntimeQuota"},
  };
  for (const Case& c : cases) {
    INFO(c.text);
    auto r = decode(c.text);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().message.find(c.field) != std::string::npos);
  }
  auto not_object = decode(R"([1])");
  CHECK_FALSE(not_object.has_value());
}
