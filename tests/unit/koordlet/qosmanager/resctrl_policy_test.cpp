// Resctrl's policy: each class's resctrlQOS from the NodeSLO, the L3 CAT mask of a percent range
// (Koordinator's examples and the min_cbm_bits floor), the MB value per vendor, and the kernel's
// schemata, tasks and mon_data formats.
#include <catch2/catch.hpp>

// This target has no include path to tests/testing.
#include "../../../testing/catch_expected.h"

#include <boost/json/parse.hpp>

#include <string>

#include <fmt/format.h>

#include "qosmanager/resctrl/resctrl_policy.h"

using namespace koord::roles::koordlet::qosmanager;

namespace {

boost::json::object strategy(std::string_view text) {
  return boost::json::parse(text).as_object();
}

}  // namespace

TEST_CASE("resctrl policy: resctrlQOS per class with Koordinator's defaults",
          "[koordlet][resctrl]") {
  // Nothing configured: every class disabled, so every group keeps the whole cache.
  auto none = decodeResctrlQOSStrategy(strategy("{}"));
  REQUIRE(none);
  for (auto g : kResctrlGroups) {
    CHECK(none->of(g) == ResctrlClassQOS{});
  }
  // Enabled without ranges: the class defaults (BE 0-30, the others 0-100, MBA 100).
  auto defaults = decodeResctrlQOSStrategy(strategy(R"({
      "lsrClass": {"resctrlQOS": {"enable": true}},
      "beClass": {"resctrlQOS": {"enable": true}}})"));
  REQUIRE(defaults);
  CHECK(defaults->of(ResctrlGroup::kLSR) == ResctrlClassQOS{true, 0, 100, 100});
  CHECK(defaults->of(ResctrlGroup::kLS) == ResctrlClassQOS{});
  CHECK(defaults->of(ResctrlGroup::kBE) == ResctrlClassQOS{true, 0, 30, 100});
  // A disabled class's range is replaced by the whole cache, whatever it says.
  auto configured = decodeResctrlQOSStrategy(strategy(R"({
      "lsClass": {"resctrlQOS": {"enable": false, "catRangeStartPercent": 10,
                                 "catRangeEndPercent": 50, "mbaPercent": 40}},
      "beClass": {"resctrlQOS": {"enable": true, "catRangeStartPercent": 10,
                                 "catRangeEndPercent": 50, "mbaPercent": 40}}})"));
  REQUIRE(configured);
  CHECK(configured->of(ResctrlGroup::kLS) == ResctrlClassQOS{});
  CHECK(configured->of(ResctrlGroup::kBE) == ResctrlClassQOS{true, 10, 50, 40});
}

TEST_CASE("resctrl policy: malformed resctrlQOS is an error naming the field",
          "[koordlet][resctrl]") {
  struct Case {
    const char* json;
    const char* message;
  };
  const Case cases[] = {
      {R"({"beClass": {"resctrlQOS": {"catRangeEndPercent": 101}}})",
       "resourceQOSStrategy.beClass.resctrlQOS.catRangeEndPercent: must be in [0, 100], got 101"},
      {R"({"lsClass": {"resctrlQOS": {"mbaPercent": -1}}})",
       "resourceQOSStrategy.lsClass.resctrlQOS.mbaPercent: must be in [0, 100], got -1"},
      {R"({"lsrClass": {"resctrlQOS": {"catRangeStartPercent": 50, "catRangeEndPercent": 50}}})",
       "resourceQOSStrategy.lsrClass.resctrlQOS: catRangeStartPercent (50) must be below "
       "catRangeEndPercent (50)"},
  };
  for (const auto& c : cases) {
    INFO(c.json);
    auto r = decodeResctrlQOSStrategy(strategy(c.json));
    REQUIRE_FALSE(r);
    CHECK(r.error().message == c.message);
  }
  CHECK_FALSE(decodeResctrlQOSStrategy(strategy(R"({"beClass": {"resctrlQOS": {"enable": 1}}})")));
  CHECK_FALSE(decodeResctrlQOSStrategy(strategy(R"({"beClass": {"resctrlQOS": []}})")));
  CHECK_FALSE(decodeResctrlQOSStrategy(strategy(R"({"beClass": []})")));
  CHECK_FALSE(
      decodeResctrlQOSStrategy(strategy(R"({"beClass": {"resctrlQOS": {"mbaPercent": 1.5}}})")));
}

TEST_CASE("resctrl policy: the L3 mask of a percent range", "[koordlet][resctrl]") {
  struct Case {
    std::uint64_t cbm;
    int min_bits;
    std::int64_t start, end;
    std::uint64_t mask;
  };
  const Case cases[] = {
      // Koordinator's own examples.
      {0x3ff, 1, 10, 80, 0xfe},
      {0x7ff, 1, 10, 50, 0x3c},
      {0x7ff, 1, 0, 30, 0xf},
      {0xfffff, 1, 0, 100, 0xfffff},
      {0xfff, 1, 0, 30, 0xf},
      {0xfff, 1, 50, 100, 0xfc0},
      // Rounded to one way, below min_cbm_bits 2: widened upwards, or downwards at the top.
      {0x7ff, 2, 10, 15, 0xc},
      {0x7ff, 2, 95, 100, 0x600},
      // A 64-way cache.
      {~std::uint64_t{0}, 1, 0, 100, ~std::uint64_t{0}},
  };
  for (const auto& c : cases) {
    INFO(fmt::format("cbm {:x} min {} range {}-{}", c.cbm, c.min_bits, c.start, c.end));
    auto mask = catL3Mask(c.cbm, c.min_bits, c.start, c.end);
    REQUIRE(mask);
    CHECK(*mask == c.mask);
  }
  CHECK_FALSE(catL3Mask(0x7f0, 1, 0, 30));   // not from bit 0
  CHECK_FALSE(catL3Mask(0x7ff, 1, 30, 30));  // empty range
  CHECK_FALSE(catL3Mask(0x7ff, 1, 0, 101));
  CHECK_FALSE(catL3Mask(0x3, 4, 0, 100));  // fewer ways than min_cbm_bits

  auto cbm = parseCbmMask("7ff\n");
  REQUIRE(cbm);
  CHECK(*cbm == 0x7ff);
  CHECK_FALSE(parseCbmMask("0"));
  CHECK_FALSE(parseCbmMask("7fe"));
  CHECK_FALSE(parseCbmMask("xyz"));
  CHECK_FALSE(parseCbmMask("1ffffffffffffffff"));  // past 64 bits
}

TEST_CASE("resctrl policy: the MB value per vendor", "[koordlet][resctrl]") {
  CHECK(cpuVendorOf("GenuineIntel") == CpuVendor::kIntel);
  CHECK(cpuVendorOf(" AuthenticAMD") == CpuVendor::kAMD);
  CHECK(cpuVendorOf("HygonGenuine") == CpuVendor::kIntel);
  CHECK(mbaValue(100, CpuVendor::kIntel) == 100);
  CHECK(mbaValue(35, CpuVendor::kIntel) == 40);
  CHECK(mbaValue(30, CpuVendor::kIntel) == 30);
  CHECK(mbaValue(1, CpuVendor::kIntel) == 10);
  CHECK(mbaValue(100, CpuVendor::kAMD) == 2048);
  CHECK(mbaValue(50, CpuVendor::kAMD) == 80);
  CHECK(mbaValue(33, CpuVendor::kAMD) == 52);
  CHECK_FALSE(mbaValue(0, CpuVendor::kIntel));
  CHECK_FALSE(mbaValue(101, CpuVendor::kAMD));
}

TEST_CASE("resctrl policy: schemata, tasks and mon_data formats", "[koordlet][resctrl]") {
  // The kernel pads names to the widest resource and masks with zeros; other resources pass.
  auto s = parseResctrlSchemata("    L3:0=07ff;1=7ff\n    MB:0=100;1= 50\nL2:0=ff\n");
  REQUIRE(s);
  CHECK(s->l3 == std::map<int, std::uint64_t>{{0, 0x7ff}, {1, 0x7ff}});
  CHECK(s->mb == std::map<int, std::int64_t>{{0, 100}, {1, 50}});
  CHECK(l3Matches(*s, {0, 1}, 0x7ff));
  CHECK_FALSE(l3Matches(*s, {0}, 0x7ff));
  CHECK_FALSE(mbMatches(*s, {0, 1}, 100));
  CHECK(formatL3Line({0, 1}, 0x3c) == "L3:0=3c;1=3c");
  CHECK(formatMBLine({0}, 40) == "MB:0=40");
  CHECK_FALSE(parseResctrlSchemata("L3:0=zz\n"));
  CHECK_FALSE(parseResctrlSchemata("MB:x=10\n"));
  CHECK_FALSE(parseResctrlSchemata("L3:99999=ff\n"));

  auto ids = parseTaskIds("1\n22\n\n333\n", 10);
  REQUIRE(ids);
  CHECK(*ids == std::vector<std::int32_t>{1, 22, 333});
  CHECK_FALSE(parseTaskIds("1\nabc\n", 10));
  CHECK_FALSE(parseTaskIds("1\n2\n3\n", 2));
  CHECK_FALSE(parseTaskIds("0\n", 10));

  CHECK(monDomainCacheId("mon_L3_00") == 0);
  CHECK(monDomainCacheId("mon_L3_01") == 1);
  CHECK_FALSE(monDomainCacheId("mon_MB_00"));
  CHECK_FALSE(monDomainCacheId("mon_L3_x"));
}

TEST_CASE("resctrl policy: groups by QoS class", "[koordlet][resctrl]") {
  using koord::apis::QoSClass;
  CHECK(resctrlGroupOf(QoSClass::kLSE) == ResctrlGroup::kLSR);
  CHECK(resctrlGroupOf(QoSClass::kLSR) == ResctrlGroup::kLSR);
  CHECK(resctrlGroupOf(QoSClass::kLS) == ResctrlGroup::kLS);
  CHECK(resctrlGroupOf(QoSClass::kBE) == ResctrlGroup::kBE);
  CHECK_FALSE(resctrlGroupOf(QoSClass::kSystem));
  CHECK_FALSE(resctrlGroupOf(QoSClass::kNone));
  CHECK(resctrlGroupName(ResctrlGroup::kLS) == "LS");
}
