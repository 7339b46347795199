// CPUEvict's and MemoryEvict's pure parts: the NodeSLO fields they read (defaults, bounds, the
// config check run before each round) and the planner's release and victim order.
#include <boost/json/parse.hpp>

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "qosmanager/evict/priority_evict_planner.h"
#include "qosmanager/evict/used_threshold_strategy.h"

using namespace koord::roles::koordlet::qosmanager;

namespace {

koord::kube::Expected<UsedThresholdEvictStrategy> decode(std::string_view text, EvictResource r) {
  return decodeUsedThresholdEvictStrategy(boost::json::parse(text).as_object(), r);
}

PriorityEvictCandidate candidate(std::string key, std::int32_t priority, std::int64_t used) {
  PriorityEvictCandidate c;
  c.key = std::move(key);
  c.uid = "uid-" + c.key;
  c.priority = priority;
  c.label_priority = priority;
  c.used = used;
  c.eviction_enabled = true;
  return c;
}

UsedThresholdEvictStrategy strategy(std::int64_t threshold, std::int32_t priority_threshold) {
  UsedThresholdEvictStrategy s;
  s.enable = true;
  s.threshold_percent = threshold;
  s.priority_threshold = priority_threshold;
  return s;
}

}  // namespace

TEST_CASE("used-threshold eviction: NodeSLO fields, defaults and the config check",
          "[koordlet][evict]") {
  SECTION("memory: threshold defaults to 70, lower to threshold - 2; priority threshold needed") {
    auto s = decode(R"({"enable": true})", EvictResource::kMemory);
    REQUIRE(s.has_value());
    CHECK(*s->threshold_percent == 70);
    CHECK(s->effectiveLowerPercent() == 68);
    CHECK(usedThresholdConfigProblem(*s, EvictResource::kMemory) ==
          "evictEnabledPriorityThreshold is not set");
  }
  SECTION("cpu: no threshold by default, so the feature does nothing until it is set") {
    auto s =
        decode(R"({"enable": true, "evictEnabledPriorityThreshold": 5999})", EvictResource::kCPU);
    REQUIRE(s.has_value());
    CHECK_FALSE(s->threshold_percent);
    CHECK(usedThresholdConfigProblem(*s, EvictResource::kCPU) ==
          "cpuEvictThresholdPercent is not set");
  }
  SECTION("a complete cpu config passes") {
    auto s = decode(R"({"enable": true, "cpuEvictThresholdPercent": 80, "cpuEvictLowerPercent": 60,
                        "evictEnabledPriorityThreshold": 7999, "cpuEvictTimeWindowSeconds": 30})",
                    EvictResource::kCPU);
    REQUIRE(s.has_value());
    CHECK(usedThresholdConfigProblem(*s, EvictResource::kCPU).empty());
    CHECK(*s->priority_threshold == 7999);
    CHECK(*s->time_window_seconds == 30);
  }
  SECTION("lower not below the threshold is refused before a round") {
    auto s = decode(R"({"enable": true, "cpuEvictThresholdPercent": 60, "cpuEvictLowerPercent": 60,
                        "evictEnabledPriorityThreshold": 1})",
                    EvictResource::kCPU);
    REQUIRE(s.has_value());
    CHECK(usedThresholdConfigProblem(*s, EvictResource::kCPU).find("lower percent (60)") == 0);
  }
  SECTION("malformed values are errors naming the field") {
    struct Bad {
      const char* json;
      EvictResource r;
      const char* field;
    };
    for (const Bad& b : {
             Bad{R"({"cpuEvictThresholdPercent": 101})", EvictResource::kCPU,
                 "cpuEvictThresholdPercent"},
             Bad{R"({"memoryEvictLowerPercent": -1})", EvictResource::kMemory,
                 "memoryEvictLowerPercent"},
             Bad{R"({"evictEnabledPriorityThreshold": 2147483648})", EvictResource::kCPU,
                 "evictEnabledPriorityThreshold"},
             Bad{R"({"evictEnabledPriorityThreshold": "7999"})", EvictResource::kMemory,
                 "evictEnabledPriorityThreshold"},
             Bad{R"({"cpuEvictTimeWindowSeconds": 0})", EvictResource::kCPU,
                 "cpuEvictTimeWindowSeconds"},
             Bad{R"({"enable": "yes"})", EvictResource::kCPU, "enable"},
         }) {
      INFO(b.json);
      auto s = decode(b.json, b.r);
      REQUIRE_FALSE(s.has_value());
      CHECK(s.error().message.find(b.field) != std::string::npos);
    }
  }
}

TEST_CASE("used-threshold eviction: release and victim order", "[koordlet][evict]") {
  // 8 cores, 7.2 used: 90 % against 80 %, lower 78 %: free 8000 * 12 / 100 = 960m.
  const NodeUse node{8000, 7200};
  SECTION("eviction priority, then priority, then label priority, then larger use first") {
    std::vector<PriorityEvictCandidate> c{
        candidate("ns/batch-small", 5500, 100), candidate("ns/batch-big", 5500, 600),
        candidate("ns/mid", 7500, 900), candidate("ns/prod", 9500, 3000)};
    c.push_back(candidate("ns/labelled", 5500, 50));
    c.back().label_priority = 1;  // the koordinator.sh/priority label sorts it first in its band
    c.push_back(candidate("ns/keep-me-last", 3500, 100));
    c.back().eviction_priority = 10;  // the annotation outranks spec priority
    auto plan = planPriorityEviction(strategy(80, 7999), node, c);
    REQUIRE(plan.has_value());
    CHECK(plan->usage_percent == 90);
    CHECK(plan->release == 960);
    CHECK(plan->victims ==
          std::vector<std::string>{"ns/labelled", "ns/batch-big", "ns/batch-small", "ns/mid"});
    // prod is above the priority threshold: never a candidate.
    CHECK(plan->reserves == std::vector<std::string>{"ns/keep-me-last"});
  }
  SECTION("pods without the opt-in label, barred by policy or without a metric are not taken") {
    std::vector<PriorityEvictCandidate> c{
        candidate("ns/a", 5500, 500), candidate("ns/b", 5500, 400), candidate("ns/c", 5500, 300)};
    c[0].eviction_enabled = false;
    c[1].policy_allowed = false;
    c[2].used.reset();
    auto plan = planPriorityEviction(strategy(80, 7999), node, c);
    REQUIRE(plan.has_value());
    CHECK(plan->release == 960);
    CHECK(plan->victims.empty());
  }
  SECTION("a pod evicted a moment ago counts as released: no new victim for the same pressure") {
    std::vector<PriorityEvictCandidate> c{candidate("ns/gone", 5500, 1000),
                                          candidate("ns/next", 5000, 500)};
    c[0].already_evicted = true;
    auto plan = planPriorityEviction(strategy(80, 7999), node, c);
    REQUIRE(plan.has_value());
    CHECK(plan->pending == 1000);
    CHECK(plan->victims.empty());
    CHECK(plan->reserves == std::vector<std::string>{"ns/next"});
  }
  SECTION("below the threshold nothing is released") {
    auto plan =
        planPriorityEviction(strategy(95, 7999), node, std::vector{candidate("ns/a", 5500, 500)});
    REQUIRE(plan.has_value());
    CHECK(plan->release == 0);
    CHECK(plan->victims.empty());
  }
  SECTION("a node without capacity is an error, not a division by zero") {
    CHECK_FALSE(planPriorityEviction(strategy(80, 7999), NodeUse{0, 10}, {}).has_value());
  }
}
