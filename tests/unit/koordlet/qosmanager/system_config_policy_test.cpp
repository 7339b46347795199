// SystemConfig's policy: systemStrategy with the koordlet's defaults and the API's bounds, and
// the values Koordinator's formula gives, each held to its file's range.
#include <catch2/catch.hpp>

// This target has no include path to tests/testing.
#include "../../../testing/catch_expected.h"

#include <boost/json/parse.hpp>

#include <cstdint>
#include <limits>
#include <optional>
#include <string>

#include "qosmanager/sysreconcile/system_config_policy.h"

using namespace koord::roles::koordlet::qosmanager;

namespace {

boost::json::object strategy(std::string_view text) {
  return boost::json::parse(text).as_object();
}

constexpr std::int64_t kGiB = std::int64_t{1} << 30;

}  // namespace

TEST_CASE("system config policy: systemStrategy with defaults and bounds",
          "[koordlet][systemconfig]") {
  auto defaults = decodeSystemStrategy(strategy(R"({"totalNetworkBandwidth": "0"})"));
  REQUIRE(defaults);
  CHECK(defaults->min_free_kbytes_factor == 100);
  CHECK(defaults->watermark_scale_factor == 150);
  CHECK(defaults->memcg_reap_background == 0);
  auto set = decodeSystemStrategy(strategy(
      R"({"minFreeKbytesFactor": 250, "watermarkScaleFactor": 400, "memcgReapBackGround": 1})"));
  REQUIRE(set);
  CHECK(set->min_free_kbytes_factor == 250);
  CHECK(set->watermark_scale_factor == 400);
  CHECK(set->memcg_reap_background == 1);

  struct Case {
    const char* json;
    const char* message;
  };
  const Case bad[] = {
      {R"({"minFreeKbytesFactor": 0})",
       "systemStrategy.minFreeKbytesFactor: must be in [1, 9223372036854775807], got 0"},
      {R"({"watermarkScaleFactor": 401})",
       "systemStrategy.watermarkScaleFactor: must be in [1, 400], got 401"},
      {R"({"memcgReapBackGround": 2})",
       "systemStrategy.memcgReapBackGround: must be in [0, 1], got 2"},
  };
  for (const auto& c : bad) {
    INFO(c.json);
    auto r = decodeSystemStrategy(strategy(c.json));
    REQUIRE_FALSE(r);
    CHECK(r.error().message == c.message);
  }
  CHECK_FALSE(decodeSystemStrategy(strategy(R"({"watermarkScaleFactor": "150"})")));
  CHECK_FALSE(decodeSystemStrategy(strategy(R"({"minFreeKbytesFactor": 1.5})")));
}

TEST_CASE("system config policy: min_free_kbytes = memory KiB x factor / 10000, within range",
          "[koordlet][systemconfig]") {
  struct Case {
    std::int64_t memory_bytes;
    std::int64_t factor;
    std::optional<std::int64_t> min_free_kbytes;
  };
  const Case cases[] = {
      {64 * kGiB, 100, 671088},  // 64 GiB = 67108864 KiB, 1%
      {16 * kGiB, 250, 419430},
      {kGiB, 100, 10485},                      // just above the 10 MiB floor
      {512 * 1024 * 1024, 100, std::nullopt},  // 5242 KiB: below the floor
      {2048 * kGiB, 100, std::nullopt},        // 21 GiB: above the 10 GiB ceiling
      {0, 100, std::nullopt},                  // no capacity reported
  };
  for (const auto& c : cases) {
    INFO(c.memory_bytes << " bytes, factor " << c.factor);
    SystemStrategy s;
    s.min_free_kbytes_factor = c.factor;
    auto plan = planSystemConfig(s, c.memory_bytes);
    CHECK(plan.min_free_kbytes == c.min_free_kbytes);
    if (!c.min_free_kbytes)
      CHECK(plan.skipped.size() == 1);
  }
  SystemStrategy huge;
  huge.min_free_kbytes_factor = std::numeric_limits<std::int64_t>::max();
  auto overflow = planSystemConfig(huge, 64 * kGiB);
  CHECK_FALSE(overflow.min_free_kbytes);
  REQUIRE(overflow.skipped.size() == 1);
  CHECK_THAT(overflow.skipped.front(), Catch::Contains("overflows"));
}

TEST_CASE("system config policy: watermark_scale_factor and reap_background",
          "[koordlet][systemconfig]") {
  SystemStrategy s;
  auto plan = planSystemConfig(s, 64 * kGiB);
  CHECK(plan.watermark_scale_factor == 150);
  CHECK(plan.memcg_reap_background == 0);
  CHECK(plan.skipped.empty());
  // The API allows 1..9; the file's validator starts at 10.
  s.watermark_scale_factor = 5;
  auto low = planSystemConfig(s, 64 * kGiB);
  CHECK_FALSE(low.watermark_scale_factor);
  REQUIRE(low.skipped.size() == 1);
  CHECK(low.skipped.front() == "watermark_scale_factor: 5 is outside [10, 400]");
  CHECK(low.min_free_kbytes == 671088);
}
