// CPUBurst's pure parts: the NodeSLO's cpuBurstStrategy and a pod's koordinator.sh/cpuBurst
// override decoded with Koordinator's defaults and bounds, the burst and quota formulas, the
// burst limiter's tokens, and the cfs quota burst's node states and scale operations.
#include <boost/json/parse.hpp>

#include <catch2/catch.hpp>

#include "koord/cgroup/cgroup_reader.h"

#include "catch_expected.h"

#include <chrono>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "qosmanager/cpuburst/burst_limiter.h"
#include "qosmanager/cpuburst/cfs_quota_burst.h"
#include "qosmanager/cpuburst/cpu_burst_policy.h"

using namespace koord::roles::koordlet::qosmanager;
using koord::apis::QoSClass;
using namespace std::chrono_literals;

namespace {

koord::cgroup::CpuThrottling counts(std::uint64_t periods, std::uint64_t throttled) {
  return {.nr_periods = periods, .nr_throttled = throttled};
}

koord::kube::Expected<CPUBurstStrategy> decode(std::string_view text) {
  return decodeCPUBurstStrategy(boost::json::parse(text).as_object());
}

CPUBurstConfig config(CPUBurstPolicy p, std::int64_t burst = 1000, std::int64_t quota = 300,
                      std::int64_t period = -1) {
  return {p, burst, quota, period};
}

}  // namespace

TEST_CASE("cpu burst: the NodeSLO strategy with Koordinator's defaults and each policy",
          "[koordlet][cpuburst]") {
  struct Case {
    const char* json;
    CPUBurstStrategy want;
  };
  const Case cases[] = {
      {"{}", {config(CPUBurstPolicy::kNone), 50}},
      {R"({"policy":""})", {config(CPUBurstPolicy::kNone), 50}},
      {R"({"policy":"none"})", {config(CPUBurstPolicy::kNone), 50}},
      {R"({"policy":"cpuBurstOnly","cpuBurstPercent":200})",
       {config(CPUBurstPolicy::kCPUBurstOnly, 200), 50}},
      {R"({"policy":"cfsQuotaBurstOnly","cfsQuotaBurstPercent":150,
           "cfsQuotaBurstPeriodSeconds":60})",
       {config(CPUBurstPolicy::kCFSQuotaBurstOnly, 1000, 150, 60), 50}},
      {R"({"policy":"auto","sharePoolThresholdPercent":0,"cpuBurstPercent":1,
           "cfsQuotaBurstPercent":100,"cfsQuotaBurstPeriodSeconds":-1})",
       {config(CPUBurstPolicy::kAuto, 1, 100, -1), 0}},
      // What the manager's cpu-burst-config default hands every node.
      {R"({"policy":"none","cpuBurstPercent":1000,"cfsQuotaBurstPercent":300,
           "cfsQuotaBurstPeriodSeconds":-1,"sharePoolThresholdPercent":50})",
       {config(CPUBurstPolicy::kNone), 50}},
      // Fields of other kinds of strategy are not this one's to refuse.
      {R"({"policy":"auto","somethingElse":true})", {config(CPUBurstPolicy::kAuto), 50}},
  };
  for (const auto& c : cases) {
    INFO(c.json);
    auto got = decode(c.json);
    REQUIRE(got);
    CHECK(*got == c.want);
  }
  const auto all = config(CPUBurstPolicy::kAuto);
  CHECK(all.cpuBurstEnabled());
  CHECK(all.cfsQuotaBurstEnabled());
  CHECK(config(CPUBurstPolicy::kCPUBurstOnly).cpuBurstEnabled());
  CHECK_FALSE(config(CPUBurstPolicy::kCPUBurstOnly).cfsQuotaBurstEnabled());
  CHECK_FALSE(config(CPUBurstPolicy::kCFSQuotaBurstOnly).cpuBurstEnabled());
  CHECK(config(CPUBurstPolicy::kCFSQuotaBurstOnly).cfsQuotaBurstEnabled());
  CHECK_FALSE(config(CPUBurstPolicy::kNone).cpuBurstEnabled());
  CHECK_FALSE(config(CPUBurstPolicy::kNone).cfsQuotaBurstEnabled());
}

TEST_CASE("cpu burst: malformed NodeSLO values are errors naming the field",
          "[koordlet][cpuburst]") {
  struct Case {
    const char* json;
    const char* field;
  };
  const Case cases[] = {
      {R"({"policy":"fast"})", "cpuBurstStrategy.policy"},
      {R"({"policy":3})", "cpuBurstStrategy.policy"},
      {R"({"cpuBurstPercent":0})", "cpuBurstStrategy.cpuBurstPercent"},
      {R"({"cpuBurstPercent":10001})", "cpuBurstStrategy.cpuBurstPercent"},
      {R"({"cpuBurstPercent":"100"})", "cpuBurstStrategy.cpuBurstPercent"},
      {R"({"cpuBurstPercent":1.5})", "cpuBurstStrategy.cpuBurstPercent"},
      {R"({"cfsQuotaBurstPercent":99})", "cpuBurstStrategy.cfsQuotaBurstPercent"},
      {R"({"cfsQuotaBurstPercent":10001})", "cpuBurstStrategy.cfsQuotaBurstPercent"},
      {R"({"cfsQuotaBurstPeriodSeconds":-2})", "cpuBurstStrategy.cfsQuotaBurstPeriodSeconds"},
      {R"({"cfsQuotaBurstPeriodSeconds":99999999999})",
       "cpuBurstStrategy.cfsQuotaBurstPeriodSeconds"},
      {R"({"sharePoolThresholdPercent":101})", "cpuBurstStrategy.sharePoolThresholdPercent"},
      {R"({"sharePoolThresholdPercent":-1})", "cpuBurstStrategy.sharePoolThresholdPercent"},
  };
  for (const auto& c : cases) {
    INFO(c.json);
    auto got = decode(c.json);
    REQUIRE_FALSE(got);
    CHECK_THAT(got.error().message, Catch::Contains(c.field));
  }
}

TEST_CASE("cpu burst: a pod's annotation overrides the node's fields it sets",
          "[koordlet][cpuburst]") {
  const auto node = config(CPUBurstPolicy::kCPUBurstOnly, 500, 200, 30);
  struct Case {
    std::optional<std::string_view> annotation;
    CPUBurstConfig want;
  };
  const Case cases[] = {
      {std::nullopt, node},
      {"{}", node},
      {"null", node},
      {R"({"policy":""})", node},
      {R"({"policy":"auto"})", config(CPUBurstPolicy::kAuto, 500, 200, 30)},
      {R"({"policy":"none"})", config(CPUBurstPolicy::kNone, 500, 200, 30)},
      {R"({"cpuBurstPercent":100})", config(CPUBurstPolicy::kCPUBurstOnly, 100, 200, 30)},
      {R"({"policy":"cfsQuotaBurstOnly","cfsQuotaBurstPercent":400,
           "cfsQuotaBurstPeriodSeconds":-1})",
       config(CPUBurstPolicy::kCFSQuotaBurstOnly, 500, 400, -1)},
      // Not a CPUBurstConfig field: Go's decoder drops it, and so does koord.
      {R"({"sharePoolThresholdPercent":10})", node},
  };
  for (const auto& c : cases) {
    INFO(c.annotation.value_or("(none)"));
    auto got = podCPUBurstConfig(node, c.annotation);
    REQUIRE(got);
    CHECK(*got == c.want);
  }
}

TEST_CASE("cpu burst: a malformed annotation is an error naming it", "[koordlet][cpuburst]") {
  const auto node = config(CPUBurstPolicy::kAuto);
  const std::string oversized =
      R"({"policy":"auto","x":")" + std::string(kMaxPodCPUBurstBytes, 'a') + R"("})";
  struct Case {
    std::string annotation;
    const char* says;
  };
  const Case cases[] = {
      {"{", "not JSON"},
      {"auto", "not JSON"},
      {"[]", "expected object"},
      {"\"auto\"", "expected object"},
      {R"({"policy":"sometimes"})", "policy"},
      {R"({"cpuBurstPercent":-5})", "cpuBurstPercent"},
      {R"({"cfsQuotaBurstPercent":"300"})", "cfsQuotaBurstPercent"},
      {oversized, "bytes"},
  };
  for (const auto& c : cases) {
    INFO(c.annotation.substr(0, 60));
    auto got = podCPUBurstConfig(node, c.annotation);
    REQUIRE_FALSE(got);
    CHECK_THAT(got.error().message, Catch::Contains("koordinator.sh/cpuBurst"));
    CHECK_THAT(got.error().message, Catch::Contains(c.says));
  }
}

TEST_CASE("cpu burst: burst, base quota and ceiling from a CPU limit", "[koordlet][cpuburst]") {
  struct Case {
    std::int64_t limit_milli;
    CPUBurstConfig config;
    std::int64_t base;
    std::int64_t burst;
    std::int64_t ceiling;
  };
  const Case cases[] = {
      // 1 core at 1000%: ten periods' worth; ceiling 300% of the quota.
      {1000, config(CPUBurstPolicy::kAuto), 100000, 1000000, 300000},
      {500, config(CPUBurstPolicy::kCPUBurstOnly, 50), 50000, 25000, 150000},
      {2500, config(CPUBurstPolicy::kAuto, 100, 150), 250000, 250000, 375000},
      // The kernel's least quota; no burst where the policy has none.
      {5, config(CPUBurstPolicy::kCFSQuotaBurstOnly), 1000, 0, 3000},
      {1000, config(CPUBurstPolicy::kNone), 100000, 0, 300000},
      // A ceiling of 100% is the limit itself.
      {1000, config(CPUBurstPolicy::kAuto, 1000, 100), 100000, 1000000, 100000},
      // No limit: no quota, no burst.
      {0, config(CPUBurstPolicy::kAuto), -1, 0, -1},
      {-1, config(CPUBurstPolicy::kAuto), -1, 0, -1},
  };
  for (const auto& c : cases) {
    INFO(c.limit_milli << "m, policy " << cpuBurstPolicyName(c.config.policy));
    CHECK(baseCfsQuota(c.limit_milli) == c.base);
    CHECK(containerCfsBurst(c.limit_milli, c.config) == c.burst);
    CHECK(cfsQuotaCeiling(baseCfsQuota(c.limit_milli), c.config) == c.ceiling);
  }
  // A limit no node has does not wrap around.
  CHECK(baseCfsQuota(std::numeric_limits<std::int64_t>::max()) == -1);
  CHECK(containerCfsBurst(std::numeric_limits<std::int64_t>::max() / 1000,
                          config(CPUBurstPolicy::kAuto, kMaxCPUBurstPercent)) > 0);
}

TEST_CASE("cpu burst: the limiter spends above the limit, saves well below it",
          "[koordlet][cpuburst]") {
  const auto t0 = std::chrono::system_clock::time_point(1000s);
  // 10 s at up to 300%: 2000 percent-seconds, a quarter full.
  BurstLimiter l(10, 300, 0.25, t0);
  CHECK(l.capacity() == 2000);
  CHECK(l.tokens() == 500);
  CHECK(l.allow(t0 + 2s, 300));  // 500 - 2 x 200
  CHECK(l.tokens() == Approx(100));
  CHECK_FALSE(l.allow(t0 + 3s, 300));  // -100
  CHECK_FALSE(l.allow(t0 + 4s, 80));   // between 60% and 100%: held
  CHECK(l.tokens() == Approx(-100));
  CHECK(l.allow(t0 + 6s, 20));  // +2 x 80
  CHECK(l.tokens() == Approx(60));
  // Bounded both ways, and a clock stepped back counts as no time.
  CHECK_FALSE(l.allow(t0 + 1000s, 1000));
  CHECK(l.tokens() == Approx(-2000));
  CHECK_FALSE(l.allow(t0 + 500s, 0));
  CHECK(l.tokens() == Approx(-2000));
  // The same capacity keeps the tokens; another starts over.
  l.reconfigure(10, 300, 0.5, t0 + 1001s);
  CHECK(l.tokens() == Approx(-2000));
  l.reconfigure(20, 300, 0.5, t0 + 1001s);
  CHECK(l.tokens() == Approx(2000));
  CHECK_FALSE(l.expired(t0 + 1041s));
  CHECK(l.expired(t0 + 1042s));
  // A period of 0 never allows.
  BurstLimiter none(0, 300, 0.4, t0);
  CHECK_FALSE(none.allow(t0 + 1s, 10));
}

TEST_CASE("cpu burst: the share pool's state from node and pod usage", "[koordlet][cpuburst]") {
  const std::vector<SharePoolPod> pods = {
      {QoSClass::kLSR, 2000, 1.5},  // its request and usage leave the pool
      {QoSClass::kBE, 0, 0.5},      // its usage leaves the pool
      {QoSClass::kLS, 1000, 1.0},   // stays
      {QoSClass::kNone, 0, 0.25},   // stays
      {QoSClass::kLSE, 1000, std::nullopt},
  };
  // 8 CPUs - 3 dedicated = 5; 4.0 used - 1.5 - 0.5 = 2.0.
  auto ratio = sharePoolUsageRatio(4.0, 8, pods);
  REQUIRE(ratio);
  CHECK(*ratio == Approx(0.4));
  CHECK_FALSE(sharePoolUsageRatio(std::nullopt, 8, pods));
  CHECK_FALSE(sharePoolUsageRatio(1.0, 0, pods));
  CHECK(sharePoolUsageRatio(1.0, 2, {{QoSClass::kLSR, 2000, 0.0}}) == 1.0);

  struct Case {
    std::optional<double> ratio;
    std::int64_t threshold;
    NodeBurstState want;
  };
  const Case cases[] = {
      {0.5, 50, NodeBurstState::kOverload}, {0.9, 50, NodeBurstState::kOverload},
      {0.45, 50, NodeBurstState::kCooling}, {0.4499, 50, NodeBurstState::kIdle},
      {0.0, 0, NodeBurstState::kOverload},  {std::nullopt, 50, NodeBurstState::kUnknown},
  };
  for (const auto& c : cases) {
    INFO(c.ratio.value_or(-1) << " of threshold " << c.threshold);
    CHECK(nodeBurstState(c.ratio, c.threshold) == c.want);
  }
}

TEST_CASE("cpu burst: scale operations and the quota they give", "[koordlet][cpuburst]") {
  using Op = CfsOperation;
  CHECK(containerCfsOperation(false, true, 0.5) == Op::kReset);
  CHECK(containerCfsOperation(true, false, 0.5) == Op::kScaleDown);
  CHECK(containerCfsOperation(true, true, 0.01) == Op::kScaleUp);
  CHECK(containerCfsOperation(true, true, 0.0) == Op::kRemain);
  CHECK(containerCfsOperation(true, true, std::nullopt) == Op::kRemain);

  struct NodeCase {
    NodeBurstState node;
    Op in;
    Op out;
  };
  const NodeCase node_cases[] = {
      {NodeBurstState::kOverload, Op::kScaleUp, Op::kScaleDown},
      {NodeBurstState::kOverload, Op::kRemain, Op::kScaleDown},
      {NodeBurstState::kOverload, Op::kReset, Op::kReset},
      {NodeBurstState::kCooling, Op::kScaleUp, Op::kRemain},
      {NodeBurstState::kCooling, Op::kScaleDown, Op::kScaleDown},
      {NodeBurstState::kUnknown, Op::kScaleUp, Op::kRemain},
      {NodeBurstState::kIdle, Op::kScaleUp, Op::kScaleUp},
      {NodeBurstState::kIdle, Op::kRemain, Op::kRemain},
  };
  for (const auto& c : node_cases) {
    INFO(nodeBurstStateName(c.node) << ", " << cfsOperationName(c.in));
    CHECK(cfsOperationForNode(c.node, c.in) == c.out);
  }

  struct QuotaCase {
    std::int64_t current;
    Op op;
    std::int64_t want;
  };
  const QuotaCase quota_cases[] = {
      {100000, Op::kScaleUp, 120000},   {250000, Op::kScaleUp, 300000},
      {300000, Op::kScaleUp, 300000},   {200000, Op::kScaleDown, 160000},
      {110000, Op::kScaleDown, 100000}, {250000, Op::kReset, 100000},
      {150000, Op::kRemain, 150000},    {400000, Op::kRemain, 300000},
      {50000, Op::kRemain, 100000},
  };
  for (const auto& c : quota_cases) {
    INFO(c.current << " " << cfsOperationName(c.op));
    CHECK(targetCfsQuota(c.current, 100000, 300000, c.op) == c.want);
  }
  CHECK(targetCfsQuota(std::numeric_limits<std::int64_t>::max() - 10, 1000,
                       std::numeric_limits<std::int64_t>::max(),
                       Op::kScaleUp) == std::numeric_limits<std::int64_t>::max());

  CHECK(koord::cgroup::throttledRatio(counts(100, 10), counts(200, 35)) == Approx(0.25));
  CHECK(koord::cgroup::throttledRatio(counts(100, 10), counts(100, 10)) == 0.0);
  CHECK_FALSE(koord::cgroup::throttledRatio(counts(100, 10), counts(50, 10)));
  CHECK_FALSE(koord::cgroup::throttledRatio(counts(100, 10), counts(150, 5)));
}
