#include "qosmanager/evict/memory_evict_planner.h"

#include <limits>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

using namespace koord::roles::koordlet::qosmanager;
using Catch::Matchers::Contains;

namespace {

constexpr std::int64_t kCapacity = 10'000'000'000;  // 10 GB: percents are whole 100 MB steps
constexpr std::int64_t kMB = 1'000'000;

BEMemoryEvictStrategy enabled(std::int64_t threshold = 70,
                              std::optional<std::int64_t> lower = std::nullopt) {
  BEMemoryEvictStrategy s;
  s.enable = true;
  s.threshold_percent = threshold;
  s.lower_percent = lower;
  return s;
}

BEMemoryEvictCandidate be(std::string name, std::int64_t used_bytes,
                          std::optional<std::int32_t> priority = std::nullopt) {
  BEMemoryEvictCandidate c;
  c.key = "default/" + name;
  c.name = name;
  c.uid = "uid-" + name;
  c.priority = priority;
  c.qos_label = "BE";
  c.memory_used_bytes = used_bytes;
  return c;
}

std::vector<std::string> names(const std::vector<BEMemoryEvictVictim>& victims) {
  std::vector<std::string> out;
  for (const auto& v : victims)
    out.push_back(v.name);
  return out;
}

BEMemoryEvictPlan plan(const BEMemoryEvictStrategy& s, std::int64_t used,
                       const std::vector<BEMemoryEvictCandidate>& candidates = {}) {
  auto got = planBEMemoryEviction(s, NodeMemoryUse{kCapacity, used}, candidates);
  REQUIRE(got.has_value());
  return *got;
}

}  // namespace

TEST_CASE("memory evict planner: bytes to release around the threshold") {
  struct Row {
    std::int64_t threshold;
    std::optional<std::int64_t> lower;
    std::int64_t used;
    std::int64_t usage_percent;
    std::int64_t lower_percent;
    std::int64_t release;
  };
  const Row rows[] = {
      // 69.99...% truncates to 69: below the threshold.
      {70, std::nullopt, 7'000'000'000 - 1, 69, 68, 0},
      // At the threshold: back to the default lower percent, 70 - 2.
      {70, std::nullopt, 7'000'000'000, 70, 68, 200 * kMB},
      // 75.5% counts as 75: 10 GB * (75 - 68) / 100.
      {70, std::nullopt, 7'550'000'000, 75, 68, 700 * kMB},
      {70, 60, 8'000'000'000, 80, 60, 2'000 * kMB},
      {50, std::nullopt, 5'000'000'000, 50, 48, 200 * kMB},
      // Used above capacity still only asks for the gap down to the lower percent.
      {70, std::nullopt, 12'000'000'000, 120, 68, 5'200 * kMB},
  };
  for (const Row& row : rows) {
    INFO("threshold " << row.threshold << " used " << row.used);
    const auto p = plan(enabled(row.threshold, row.lower), row.used);
    CHECK(p.usage_percent == row.usage_percent);
    CHECK(p.lower_percent == row.lower_percent);
    CHECK(p.release_bytes == row.release);
  }
}

TEST_CASE("memory evict planner: nothing to do below the threshold or when disabled") {
  const std::vector candidates{be("a", 500 * kMB)};
  auto p = plan(enabled(), 6'000'000'000, candidates);
  CHECK(p.release_bytes == 0);
  CHECK(p.victims.empty());
  CHECK(p.reserves.empty());

  BEMemoryEvictStrategy disabled = enabled();
  disabled.enable = false;
  p = plan(disabled, 9'000'000'000, candidates);
  CHECK(p.release_bytes == 0);
  CHECK(p.victims.empty());
}

TEST_CASE("memory evict planner: order is priority, then known use, then name reversed") {
  std::vector candidates{
      be("a", 100 * kMB, 5), be("b", 50 * kMB, 1), be("c", 300 * kMB, 1), be("d", 0, 1),
      be("e", 0, 1),         be("h", 10 * kMB),  // no priority: counts as 0, the lowest here
  };
  auto ls = be("ls", 900 * kMB, 0);
  ls.qos_label = "LS";
  auto none = be("none", 900 * kMB, 0);
  none.qos_label = "";
  auto lower_case = be("lower", 900 * kMB, 0);
  lower_case.qos_label = "be";
  auto forbidden = be("forbidden", 900 * kMB, 0);
  forbidden.eviction_allowed = false;
  candidates.insert(candidates.end(), {ls, none, lower_case, forbidden});

  // 7 GB used: release 200 MB. h (10 MB) then c (300 MB) reach it.
  const auto p = plan(enabled(), 7'000'000'000, candidates);
  REQUIRE(p.release_bytes == 200 * kMB);
  CHECK(names(p.victims) == std::vector<std::string>{"h", "c"});
  CHECK(names(p.reserves) == std::vector<std::string>{"b", "e", "d", "a"});
  REQUIRE(p.victims.size() == 2);
  CHECK(p.victims[0].key == "default/h");
  CHECK(p.victims[0].uid == "uid-h");
  CHECK(p.victims[0].release_bytes == 10 * kMB);
  CHECK(p.victims[1].release_bytes == 300 * kMB);
}

TEST_CASE("memory evict planner: victims stop as soon as their sum reaches the target") {
  const std::vector candidates{be("x", 150 * kMB), be("y", 50 * kMB), be("z", 10 * kMB)};
  // Exactly 200 MB from x and y: z is not needed.
  auto p = plan(enabled(), 7'000'000'000, candidates);
  CHECK(names(p.victims) == std::vector<std::string>{"x", "y"});
  CHECK(names(p.reserves) == std::vector<std::string>{"z"});

  // 700 MB is more than all three free: every candidate is a victim.
  p = plan(enabled(), 7'500'000'000, candidates);
  CHECK(p.release_bytes == 700 * kMB);
  CHECK(names(p.victims) == std::vector<std::string>{"x", "y", "z"});
  CHECK(p.reserves.empty());

  // One pod big enough on its own.
  p = plan(enabled(), 7'000'000'000, {be("big", 5'000 * kMB), be("small", 1 * kMB)});
  CHECK(names(p.victims) == std::vector<std::string>{"big"});
  CHECK(names(p.reserves) == std::vector<std::string>{"small"});
}

TEST_CASE("memory evict planner: unknown use frees nothing, so every such pod is taken") {
  const std::vector candidates{be("m", 0), be("z", 0), be("a", -5), be("k", 0)};
  const auto p = plan(enabled(), 7'000'000'000, candidates);
  CHECK(names(p.victims) == std::vector<std::string>{"z", "m", "k", "a"});
  for (const auto& v : p.victims)
    CHECK(v.release_bytes == 0);
  CHECK(p.reserves.empty());
}

TEST_CASE("memory evict planner: equal use falls back to name reversed, then uid") {
  auto twin = be("same", 100 * kMB);
  twin.key = "other/same";
  twin.uid = "uid-0";
  const std::vector candidates{be("p", 100 * kMB), be("q", 100 * kMB), be("same", 100 * kMB), twin};
  const auto p = plan(enabled(), 7'550'000'000, candidates);
  REQUIRE(p.victims.size() == 4);
  CHECK(p.victims[0].uid == "uid-0");
  CHECK(p.victims[1].uid == "uid-same");
  CHECK(p.victims[2].name == "q");
  CHECK(p.victims[3].name == "p");
}

TEST_CASE("memory evict planner: bad node figures are errors, not crashes") {
  const std::vector candidates{be("a", 1)};
  for (std::int64_t capacity : {std::int64_t{0}, std::int64_t{-1}}) {
    auto got = planBEMemoryEviction(enabled(), NodeMemoryUse{capacity, 1}, candidates);
    REQUIRE_FALSE(got.has_value());
    CHECK_THAT(got.error().message, Contains("capacity"));
  }
  auto got = planBEMemoryEviction(
      enabled(), NodeMemoryUse{kCapacity, std::numeric_limits<std::int64_t>::max()}, candidates);
  REQUIRE_FALSE(got.has_value());
  CHECK_THAT(got.error().message, Contains("used"));
  // A disabled strategy looks at nothing.
  BEMemoryEvictStrategy disabled;
  CHECK(planBEMemoryEviction(disabled, NodeMemoryUse{0, 0}, candidates).has_value());
}
