#include "qosmanager/cpusuppress/suppress_strategy.h"

#include <boost/json/parse.hpp>

#include <string>

#include <catch2/catch.hpp>

#include "koord/apis/slo_config.h"

using namespace koord::roles::koordlet::qosmanager;
using Catch::Matchers::Contains;

namespace {

boost::json::object obj(std::string_view text) {
  return boost::json::parse(text).as_object();
}

std::string errorOf(std::string_view text) {
  auto got = decodeCPUSuppressStrategy(obj(text));
  REQUIRE_FALSE(got.has_value());
  return got.error().message;
}

}  // namespace

TEST_CASE("suppress strategy: Koordinator's defaults for absent and null fields") {
  for (std::string_view text :
       {"{}", R"({"enable":null,"cpuSuppressThresholdPercent":null,"cpuSuppressMinPercent":null,
                  "cpuSuppressPolicy":null})"}) {
    INFO(text);
    auto got = decodeCPUSuppressStrategy(obj(text));
    REQUIRE(got.has_value());
    CHECK_FALSE(got->enable);
    CHECK(got->threshold_percent == 65);
    CHECK_FALSE(got->min_percent.has_value());
    CHECK(got->policy == CPUSuppressPolicy::kCPUSet);
  }
}

TEST_CASE("suppress strategy: the NodeSLO default object decodes to the defaults") {
  auto got = decodeCPUSuppressStrategy(
      koord::apis::defaultStrategy(koord::apis::kResourceThresholdConfigKey));
  REQUIRE(got.has_value());
  CHECK_FALSE(got->enable);
  CHECK(got->threshold_percent == 65);
  CHECK(got->policy == CPUSuppressPolicy::kCPUSet);
}

TEST_CASE("suppress strategy: every field set, other fields ignored") {
  auto got = decodeCPUSuppressStrategy(obj(R"({"enable":true,"cpuSuppressThresholdPercent":40,
      "cpuSuppressMinPercent":0,"cpuSuppressPolicy":"cfsQuota","memoryEvictThresholdPercent":70,
      "cpuEvictPolicy":"evictByRealLimit"})"));
  REQUIRE(got.has_value());
  CHECK(got->enable);
  CHECK(got->threshold_percent == 40);
  REQUIRE(got->min_percent.has_value());
  CHECK(*got->min_percent == 0);
  CHECK(got->policy == CPUSuppressPolicy::kCFSQuota);
  CHECK(cpuSuppressPolicyName(got->policy) == "cfsQuota");
}

TEST_CASE("suppress strategy: the percent bounds are inclusive") {
  auto got = decodeCPUSuppressStrategy(
      obj(R"({"cpuSuppressThresholdPercent":100,"cpuSuppressMinPercent":100})"));
  REQUIRE(got.has_value());
  CHECK(got->threshold_percent == 100);
  CHECK(got->min_percent == 100);
  got = decodeCPUSuppressStrategy(obj(R"({"cpuSuppressThresholdPercent":0})"));
  REQUIRE(got.has_value());
  CHECK(got->threshold_percent == 0);
}

TEST_CASE("suppress strategy: policies other than cfsQuota are cpuset") {
  for (std::string_view text : {R"({"cpuSuppressPolicy":"cpuset"})", R"({"cpuSuppressPolicy":""})",
                                R"({"cpuSuppressPolicy":"CFSQuota"})"}) {
    INFO(text);
    auto got = decodeCPUSuppressStrategy(obj(text));
    REQUIRE(got.has_value());
    CHECK(got->policy == CPUSuppressPolicy::kCPUSet);
  }
}

TEST_CASE("suppress strategy: bad values are errors naming the field") {
  CHECK_THAT(errorOf(R"({"enable":"true"})"), Contains("enable"));
  CHECK_THAT(errorOf(R"({"cpuSuppressThresholdPercent":101})"),
             Contains("cpuSuppressThresholdPercent") && Contains("<= 100"));
  CHECK_THAT(errorOf(R"({"cpuSuppressThresholdPercent":-1})"),
             Contains("cpuSuppressThresholdPercent") && Contains(">= 0"));
  CHECK_THAT(errorOf(R"({"cpuSuppressThresholdPercent":65.5})"),
             Contains("cpuSuppressThresholdPercent"));
  CHECK_THAT(errorOf(R"({"cpuSuppressThresholdPercent":"65"})"),
             Contains("cpuSuppressThresholdPercent"));
  CHECK_THAT(errorOf(R"({"cpuSuppressMinPercent":18446744073709551615})"),
             Contains("cpuSuppressMinPercent"));
  CHECK_THAT(errorOf(R"({"cpuSuppressMinPercent":[1]})"), Contains("cpuSuppressMinPercent"));
  CHECK_THAT(errorOf(R"({"cpuSuppressPolicy":1})"), Contains("cpuSuppressPolicy"));
}
