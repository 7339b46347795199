#include "qosmanager/evict/eviction_strategy.h"

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

std::string memoryError(std::string_view text) {
  auto got = decodeBEMemoryEvictStrategy(obj(text));
  REQUIRE_FALSE(got.has_value());
  return got.error().message;
}

std::string cpuError(std::string_view text) {
  auto got = decodeBECPUEvictStrategy(obj(text));
  REQUIRE_FALSE(got.has_value());
  return got.error().message;
}

}  // namespace

TEST_CASE("eviction strategy: memory defaults for absent and null fields") {
  for (std::string_view text :
       {"{}",
        R"({"enable":null,"memoryEvictThresholdPercent":null,"memoryEvictLowerPercent":null})"}) {
    INFO(text);
    auto got = decodeBEMemoryEvictStrategy(obj(text));
    REQUIRE(got.has_value());
    CHECK_FALSE(got->enable);
    CHECK(got->threshold_percent == 70);
    CHECK_FALSE(got->lower_percent.has_value());
    CHECK(got->effectiveLowerPercent() == 68);
  }
}

TEST_CASE("eviction strategy: the NodeSLO default object decodes to the defaults") {
  const auto defaults = koord::apis::defaultStrategy(koord::apis::kResourceThresholdConfigKey);
  auto memory = decodeBEMemoryEvictStrategy(defaults);
  REQUIRE(memory.has_value());
  CHECK_FALSE(memory->enable);
  CHECK(memory->threshold_percent == 70);
  auto cpu = decodeBECPUEvictStrategy(defaults);
  REQUIRE(cpu.has_value());
  CHECK_FALSE(cpu->enable);
  CHECK(cpu->usage_threshold_percent == 90);
  CHECK(cpu->policy == CPUEvictPolicy::kEvictByRealLimit);
  CHECK_FALSE(cpu->satisfaction_lower_percent.has_value());
  CHECK_FALSE(cpu->time_window_seconds.has_value());
}

TEST_CASE("eviction strategy: memory fields set, the lower percent follows the threshold") {
  auto got = decodeBEMemoryEvictStrategy(
      obj(R"({"enable":true,"memoryEvictThresholdPercent":80,"cpuSuppressThresholdPercent":40})"));
  REQUIRE(got.has_value());
  CHECK(got->enable);
  CHECK(got->threshold_percent == 80);
  CHECK(got->effectiveLowerPercent() == 78);

  got = decodeBEMemoryEvictStrategy(
      obj(R"({"enable":true,"memoryEvictThresholdPercent":80,"memoryEvictLowerPercent":60})"));
  REQUIRE(got.has_value());
  CHECK(got->lower_percent == 60);
  CHECK(got->effectiveLowerPercent() == 60);
}

TEST_CASE("eviction strategy: a memory lower percent not below the threshold") {
  // Enabled: Koordinator's config check rejects it.
  CHECK_THAT(
      memoryError(
          R"({"enable":true,"memoryEvictThresholdPercent":70,"memoryEvictLowerPercent":70})"),
      Contains("memoryEvictLowerPercent") && Contains("< memoryEvictThresholdPercent (70)"));
  CHECK_THAT(memoryError(R"({"enable":true,"memoryEvictLowerPercent":75})"),
             Contains("memoryEvictLowerPercent"));
  // One below is fine.
  CHECK(decodeBEMemoryEvictStrategy(
            obj(R"({"enable":true,"memoryEvictThresholdPercent":70,"memoryEvictLowerPercent":69})"))
            .has_value());
  // Disabled: the koordlet never looks at it.
  auto got = decodeBEMemoryEvictStrategy(obj(R"({"memoryEvictLowerPercent":75})"));
  REQUIRE(got.has_value());
  CHECK(got->lower_percent == 75);
}

TEST_CASE("eviction strategy: bad memory values are errors naming the field") {
  CHECK_THAT(memoryError(R"({"enable":1})"), Contains("enable"));
  CHECK_THAT(memoryError(R"({"memoryEvictThresholdPercent":-1})"),
             Contains("memoryEvictThresholdPercent") && Contains(">= 0"));
  CHECK_THAT(memoryError(R"({"memoryEvictThresholdPercent":101})"),
             Contains("memoryEvictThresholdPercent") && Contains("<= 100"));
  CHECK_THAT(memoryError(R"({"memoryEvictThresholdPercent":70.5})"),
             Contains("memoryEvictThresholdPercent") && Contains("integer"));
  CHECK_THAT(memoryError(R"({"memoryEvictLowerPercent":"60"})"),
             Contains("memoryEvictLowerPercent"));
  CHECK_THAT(memoryError(R"({"memoryEvictLowerPercent":18446744073709551615})"),
             Contains("memoryEvictLowerPercent"));
}

TEST_CASE("eviction strategy: cpu fields set") {
  auto got = decodeBECPUEvictStrategy(obj(R"({"enable":true,
      "cpuEvictBESatisfactionLowerPercent":60,"cpuEvictBESatisfactionUpperPercent":80,
      "cpuEvictBEUsageThresholdPercent":75,"cpuEvictTimeWindowSeconds":300,
      "cpuEvictPolicy":"evictByAllocatable","memoryEvictThresholdPercent":10})"));
  REQUIRE(got.has_value());
  CHECK(got->enable);
  CHECK(got->satisfaction_lower_percent == 60);
  CHECK(got->satisfaction_upper_percent == 80);
  CHECK(got->usage_threshold_percent == 75);
  CHECK(got->time_window_seconds == 300);
  CHECK(got->policy == CPUEvictPolicy::kEvictByAllocatable);
  CHECK(cpuEvictPolicyName(got->policy) == "evictByAllocatable");
}

TEST_CASE("eviction strategy: cpu policies other than evictByAllocatable are evictByRealLimit") {
  for (std::string_view text :
       {R"({"cpuEvictPolicy":"evictByRealLimit"})", R"({"cpuEvictPolicy":""})",
        R"({"cpuEvictPolicy":"EvictByAllocatable"})"}) {
    INFO(text);
    auto got = decodeBECPUEvictStrategy(obj(text));
    REQUIRE(got.has_value());
    CHECK(got->policy == CPUEvictPolicy::kEvictByRealLimit);
    CHECK(cpuEvictPolicyName(got->policy) == "evictByRealLimit");
  }
}

TEST_CASE("eviction strategy: Koordinator's satisfaction checks when enabled") {
  // Table: the satisfaction fields, and the field the error names ("" = valid).
  struct Row {
    std::string_view config;
    std::string_view field;
  };
  const Row rows[] = {
      {R"("cpuEvictBESatisfactionLowerPercent":30,"cpuEvictBESatisfactionUpperPercent":50)", ""},
      {R"("cpuEvictBESatisfactionLowerPercent":60,"cpuEvictBESatisfactionUpperPercent":99)", ""},
      {R"("cpuEvictBESatisfactionLowerPercent":1,"cpuEvictBESatisfactionUpperPercent":1)", ""},
      {R"("cpuEvictBESatisfactionUpperPercent":50)", "cpuEvictBESatisfactionLowerPercent"},
      {R"("cpuEvictBESatisfactionLowerPercent":30)", "cpuEvictBESatisfactionUpperPercent"},
      {R"("cpuEvictBESatisfactionLowerPercent":0,"cpuEvictBESatisfactionUpperPercent":50)",
       "cpuEvictBESatisfactionLowerPercent"},
      {R"("cpuEvictBESatisfactionLowerPercent":61,"cpuEvictBESatisfactionUpperPercent":80)",
       "cpuEvictBESatisfactionLowerPercent"},
      {R"("cpuEvictBESatisfactionLowerPercent":30,"cpuEvictBESatisfactionUpperPercent":100)",
       "cpuEvictBESatisfactionUpperPercent"},
      {R"("cpuEvictBESatisfactionLowerPercent":30,"cpuEvictBESatisfactionUpperPercent":0)",
       "cpuEvictBESatisfactionUpperPercent"},
      {R"("cpuEvictBESatisfactionLowerPercent":40,"cpuEvictBESatisfactionUpperPercent":39)",
       "cpuEvictBESatisfactionUpperPercent"},
  };
  for (const Row& row : rows) {
    const std::string enabled = "{\"enable\":true," + std::string(row.config) + "}";
    const std::string disabled = "{" + std::string(row.config) + "}";
    INFO(enabled);
    if (row.field.empty()) {
      CHECK(decodeBECPUEvictStrategy(obj(enabled)).has_value());
    } else {
      CHECK_THAT(cpuError(enabled), Contains(std::string(row.field)));
    }
    // Disabled: the koordlet never checks it.
    CHECK(decodeBECPUEvictStrategy(obj(disabled)).has_value());
  }
}

TEST_CASE("eviction strategy: bad cpu values are errors naming the field") {
  CHECK_THAT(cpuError(R"({"enable":"yes"})"), Contains("enable"));
  CHECK_THAT(cpuError(R"({"cpuEvictBESatisfactionLowerPercent":-5})"),
             Contains("cpuEvictBESatisfactionLowerPercent") && Contains(">= 0"));
  CHECK_THAT(cpuError(R"({"cpuEvictBESatisfactionUpperPercent":101})"),
             Contains("cpuEvictBESatisfactionUpperPercent") && Contains("<= 100"));
  CHECK_THAT(cpuError(R"({"cpuEvictBEUsageThresholdPercent":101})"),
             Contains("cpuEvictBEUsageThresholdPercent"));
  CHECK_THAT(cpuError(R"({"cpuEvictBEUsageThresholdPercent":true})"),
             Contains("cpuEvictBEUsageThresholdPercent"));
  CHECK_THAT(cpuError(R"({"cpuEvictTimeWindowSeconds":0})"),
             Contains("cpuEvictTimeWindowSeconds") && Contains(">= 1"));
  CHECK_THAT(cpuError(R"({"cpuEvictTimeWindowSeconds":1.5})"),
             Contains("cpuEvictTimeWindowSeconds"));
  CHECK_THAT(cpuError(R"({"cpuEvictPolicy":["evictByAllocatable"]})"), Contains("cpuEvictPolicy"));
}

TEST_CASE("eviction strategy: the eviction-policy annotation") {
  CHECK(isEvictionPolicyAllowed(std::nullopt, kBEMemoryEvictFeature));
  CHECK(isEvictionPolicyAllowed(R"(["BEMemoryEvict"])", kBEMemoryEvictFeature));
  CHECK(isEvictionPolicyAllowed(R"([ "MemoryEvict", "BECPUEvict" ])", kBECPUEvictFeature));
  CHECK_FALSE(isEvictionPolicyAllowed(R"(["BECPUEvict"])", kBEMemoryEvictFeature));
  CHECK_FALSE(isEvictionPolicyAllowed(R"(["bememoryevict"])", kBEMemoryEvictFeature));
  CHECK_FALSE(isEvictionPolicyAllowed("[]", kBEMemoryEvictFeature));
  CHECK_FALSE(isEvictionPolicyAllowed("", kBEMemoryEvictFeature));
  CHECK_FALSE(isEvictionPolicyAllowed("null", kBEMemoryEvictFeature));
  CHECK_FALSE(isEvictionPolicyAllowed(R"("BEMemoryEvict")", kBEMemoryEvictFeature));
  CHECK_FALSE(isEvictionPolicyAllowed(R"(["BEMemoryEvict")", kBEMemoryEvictFeature));
  // Go's decoder rejects a list with a non-string in it, whatever else it names.
  CHECK_FALSE(isEvictionPolicyAllowed(R"(["BEMemoryEvict", 1])", kBEMemoryEvictFeature));
  // ...but reads a null element as "".
  CHECK(isEvictionPolicyAllowed(R"([null, "BEMemoryEvict"])", kBEMemoryEvictFeature));
}
