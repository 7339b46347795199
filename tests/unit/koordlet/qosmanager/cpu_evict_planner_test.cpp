#include "qosmanager/evict/cpu_evict_planner.h"

#include <string>
#include <vector>

#include <catch2/catch.hpp>

using namespace koord::roles::koordlet::qosmanager;

namespace {

// Lower 40%, upper 50%, usage threshold 90% (the default), real-limit policy.
BECPUEvictStrategy enabled() {
  BECPUEvictStrategy s;
  s.enable = true;
  s.satisfaction_lower_percent = 40;
  s.satisfaction_upper_percent = 50;
  return s;
}

BECPUAllocation allocation(double usage, double request, double real_limit,
                           std::int64_t samples = 300) {
  return BECPUAllocation{{usage, samples}, {request, samples}, {real_limit, samples}};
}

// A 300 s window at a 1 s interval (100 samples needed). BE pods ask for 20 cores, get 6 and use
// 5.8 (96%): satisfaction 0.3, release 20000 * (0.5 - 0.3) = 4000.
BECPUEvictInput starved() {
  BECPUEvictInput in;
  in.window_average = allocation(5800, 20000, 6000);
  in.latest = in.window_average;
  in.collect_interval_seconds = 1;
  in.window_seconds = 300;
  return in;
}

BECPUEvictCandidate be(std::string name, std::int64_t used, std::int64_t request,
                       std::optional<std::int32_t> priority = std::nullopt) {
  BECPUEvictCandidate c;
  c.key = "default/" + name;
  c.name = name;
  c.uid = "uid-" + name;
  c.priority = priority;
  c.qos_label = "BE";
  c.cpu_used_milli = used;
  c.batch_cpu_request_milli = request;
  return c;
}

std::vector<std::string> names(const std::vector<BECPUEvictVictim>& victims) {
  std::vector<std::string> out;
  for (const auto& v : victims)
    out.push_back(v.name);
  return out;
}

}  // namespace

TEST_CASE("cpu evict planner: release by satisfaction around the lower percent") {
  struct Row {
    double real_limit;
    double usage;
    BECPUEvictOutcome outcome;
    std::int64_t release;
  };
  // Request 20000 throughout; Go's float64 arithmetic then int64 truncation.
  const Row rows[] = {
      {6000, 5800, BECPUEvictOutcome::kEvict, 4000},
      // 0.40005 > 0.40: satisfied.
      {8001, 7500, BECPUEvictOutcome::kAverageSatisfied, 0},
      // Exactly 0.40 evicts; 20000 * (0.5 - 0.4) is 1999.9999999999995 in doubles.
      {8000, 7500, BECPUEvictOutcome::kEvict, 1999},
      // 0.39995: 20000 * 0.10005 is 2000.9999999999995.
      {7999, 7500, BECPUEvictOutcome::kEvict, 2000},
      // Under one core the usage ratio is not consulted: 20000 * (0.5 - 0.045).
      {900, 0, BECPUEvictOutcome::kEvict, 9100},
      // No limit at all: nothing to measure usage against.
      {0, 0, BECPUEvictOutcome::kAverageUsageLow, 0},
  };
  for (const Row& row : rows) {
    INFO("real limit " << row.real_limit);
    BECPUEvictInput in = starved();
    in.window_average = allocation(row.usage, 20000, row.real_limit);
    in.latest = in.window_average;
    const auto p = planBECPUEviction(enabled(), in, {});
    CHECK(p.outcome == row.outcome);
    CHECK(p.release_milli == row.release);
  }
}

TEST_CASE("cpu evict planner: usage must reach the threshold of the limit") {
  BECPUEvictInput in = starved();
  // 5400 / 6000 is exactly 0.9: high enough.
  in.window_average = allocation(5400, 20000, 6000);
  in.latest = in.window_average;
  CHECK(planBECPUEviction(enabled(), in, {}).outcome == BECPUEvictOutcome::kEvict);
  in.window_average = allocation(5399, 20000, 6000);
  in.latest = in.window_average;
  CHECK(planBECPUEviction(enabled(), in, {}).outcome == BECPUEvictOutcome::kAverageUsageLow);

  // A lower threshold lets 5399 through.
  BECPUEvictStrategy s = enabled();
  s.usage_threshold_percent = 80;
  CHECK(planBECPUEviction(s, in, {}).outcome == BECPUEvictOutcome::kEvict);

  // The average is high but the latest is not.
  in = starved();
  in.latest.usage.milli = 3000;
  const auto p = planBECPUEviction(enabled(), in, std::vector{be("a", 1, 1)});
  CHECK(p.outcome == BECPUEvictOutcome::kLatestUsageLow);
  CHECK(p.release_milli == 0);
  CHECK(p.victims.empty());
}

TEST_CASE("cpu evict planner: the window needs samples for a third of its length") {
  struct Row {
    std::int64_t interval;
    std::int64_t window;
    std::int64_t fewest_samples;
    bool enough;
  };
  const Row rows[] = {
      {1, 300, 100, true}, {1, 300, 99, false}, {2, 300, 50, true}, {2, 300, 49, false},
      {1, 1, 0, true},     {5, 30, 2, true},    {5, 30, 1, false},  {1, 300, 0, false},
  };
  for (const Row& row : rows) {
    INFO("interval " << row.interval << " window " << row.window << " samples "
                     << row.fewest_samples);
    BECPUEvictInput in = starved();
    in.collect_interval_seconds = row.interval;
    in.window_seconds = row.window;
    // The fewest of the three series decides.
    in.window_average.request.samples = row.fewest_samples;
    const auto p = planBECPUEviction(enabled(), in, {});
    CHECK((p.outcome == BECPUEvictOutcome::kTooFewSamples) == !row.enough);
    CHECK((p.release_milli == 4000) == row.enough);
  }
}

TEST_CASE("cpu evict planner: the latest values can only lower the release") {
  BECPUEvictInput in = starved();
  // Latest request 30000 over 6000: 0.2, release 9000; the average's 4000 is smaller.
  in.latest = allocation(5800, 30000, 6000);
  auto p = planBECPUEviction(enabled(), in, {});
  CHECK(p.outcome == BECPUEvictOutcome::kEvict);
  CHECK(p.release_milli == 4000);

  // Latest request 15000 over 6000: 0.4, release 1499 (1499.9999999999998).
  in.latest = allocation(5800, 15000, 6000);
  p = planBECPUEviction(enabled(), in, {});
  CHECK(p.release_milli == 1499);

  // Latest limit 10000 of 20000: 0.5 > 0.4, satisfied now.
  in.latest = allocation(9500, 20000, 10000);
  p = planBECPUEviction(enabled(), in, {});
  CHECK(p.outcome == BECPUEvictOutcome::kLatestSatisfied);
  CHECK(p.release_milli == 0);
}

TEST_CASE("cpu evict planner: evictByAllocatable measures against batch-cpu allocatable") {
  BECPUEvictStrategy s = enabled();
  s.policy = CPUEvictPolicy::kEvictByAllocatable;
  BECPUEvictInput in = starved();
  // The real limit (6000) no longer matters: 4600 of 5000 allocatable is 92%, satisfaction 0.25,
  // release 20000 * 0.25.
  in.window_average = allocation(4600, 20000, 6000);
  in.latest = in.window_average;
  in.batch_cpu_allocatable_milli = 5000;
  auto p = planBECPUEviction(s, in, {});
  CHECK(p.outcome == BECPUEvictOutcome::kEvict);
  CHECK(p.release_milli == 5000);

  // Zero allocatable counts as 1 milli-core: under a core, so usage is high enough whatever it
  // is, and satisfaction 1 / 20000 gives 20000 * (0.5 - 0.00005) = 9999.
  in.batch_cpu_allocatable_milli = 0;
  in.window_average = allocation(0, 20000, 6000);
  in.latest = allocation(0, 20000, 123);  // the latest real limit is not read either
  p = planBECPUEviction(s, in, {});
  CHECK(p.outcome == BECPUEvictOutcome::kEvict);
  CHECK(p.release_milli == 9999);

  // No (or a negative) allocatable: nothing to measure against.
  for (std::optional<std::int64_t> none :
       {std::optional<std::int64_t>(), std::optional<std::int64_t>(-1)}) {
    in.batch_cpu_allocatable_milli = none;
    p = planBECPUEviction(s, in, {});
    CHECK(p.outcome == BECPUEvictOutcome::kAverageUsageLow);
  }
}

TEST_CASE("cpu evict planner: victims by priority, then use per request, then name reversed") {
  std::vector candidates{
      be("p1", 1000, 1000, 10),  // ratio 1.0 but the highest priority
      be("p2", 500, 2000, 5),    // 0.25
      be("p3", 1500, 2000, 5),   // 0.75
      be("p4", 700, 0, 5),       // no request: ratio 0, releases nothing
      be("p7", 100, 1000),       // no priority: counts as 0
  };
  auto ls = be("ls", 9000, 1000, 0);
  ls.qos_label = "LS";
  auto forbidden = be("forbidden", 9000, 1000, 0);
  forbidden.eviction_allowed = false;
  candidates.insert(candidates.end(), {ls, forbidden});

  // Release 4000: p7 (1000) + p3 (2000) = 3000 falls short, p2 makes 5000.
  const auto p = planBECPUEviction(enabled(), starved(), candidates);
  REQUIRE(p.release_milli == 4000);
  CHECK(names(p.victims) == std::vector<std::string>{"p7", "p3", "p2"});
  CHECK(names(p.reserves) == std::vector<std::string>{"p4", "p1"});
  REQUIRE(p.victims.size() == 3);
  CHECK(p.victims[0].key == "default/p7");
  CHECK(p.victims[0].uid == "uid-p7");
  CHECK(p.victims[1].release_milli == 2000);
}

TEST_CASE("cpu evict planner: victims stop once the target is met exactly") {
  const std::vector candidates{be("a", 900, 1000), be("b", 800, 3000), be("c", 100, 1000)};
  // 0.9, 0.27, 0.1: a (1000) + b (3000) = 4000 meets it, c is spare.
  auto p = planBECPUEviction(enabled(), starved(), candidates);
  CHECK(names(p.victims) == std::vector<std::string>{"a", "b"});
  CHECK(names(p.reserves) == std::vector<std::string>{"c"});

  // Equal ratios: name reversed.
  p = planBECPUEviction(enabled(), starved(),
                        std::vector{be("x", 500, 1000), be("z", 500, 1000), be("y", 500, 1000)});
  CHECK(names(p.victims) == std::vector<std::string>{"z", "y", "x"});
}

TEST_CASE("cpu evict planner: disabled or unchecked strategies plan nothing") {
  BECPUEvictStrategy s = enabled();
  s.enable = false;
  auto p = planBECPUEviction(s, starved(), std::vector{be("a", 1, 1)});
  CHECK(p.outcome == BECPUEvictOutcome::kDisabled);
  CHECK(p.victims.empty());
  s = enabled();
  s.satisfaction_upper_percent.reset();
  p = planBECPUEviction(s, starved(), std::vector{be("a", 1, 1)});
  CHECK(p.outcome == BECPUEvictOutcome::kDisabled);
  CHECK(beCPUEvictOutcomeName(BECPUEvictOutcome::kTooFewSamples) ==
        "too few samples in the window");
}

TEST_CASE("cpu evict planner: the window is the configured one when longer than the interval") {
  BECPUEvictStrategy s = enabled();
  CHECK(beCPUEvictWindowSeconds(s, 1) == 1);
  s.time_window_seconds = 300;
  CHECK(beCPUEvictWindowSeconds(s, 1) == 300);
  s.time_window_seconds = 3;
  CHECK(beCPUEvictWindowSeconds(s, 5) == 5);
}
