#include <boost/json.hpp>

#include <catch2/catch.hpp>

#include "koord/cgroup/resource_executor.h"
#include "metriccache/metric_cache.h"
#include "qosmanager/cpusuppress/cpu_suppress.h"
#include "statesinformer/states_snapshot.h"
#include "suppress_states.h"
#include "temp_tree.h"

using namespace koord::roles::koordlet;
using koord::roles::koordlet::testing::kBEUid;
using koord::roles::koordlet::testing::kLSUid;
namespace mc = koord::roles::koordlet::metriccache;
namespace json = boost::json;
using koord::testing::TempTree;
using namespace std::chrono_literals;

namespace {

koord::cgroup::CpuTopology fourCpus() {
  koord::cgroup::CpuTopology t;
  for (int i = 0; i < 4; ++i)
    t.cpus.push_back({i, i % 2, 0, 0});
  return t;
}

struct Fixture {
  TempTree t{"koord-suppress"};
  std::string be = "kubepods/besteffort";
  std::string be_pod = std::string("kubepods/besteffort/pod") + kBEUid;
  koord::cgroup::ResourceExecutor e{
      {t.root(), koord::cgroup::CgroupVersion::kV1, koord::cgroup::CgroupDriver::kCgroupfs}};
  mc::MetricCache cache;
  koord::metrics::Registry registry;
  const mc::TimePoint now{std::chrono::seconds(1'800'000'000)};

  Fixture() {
    for (const auto& d : {be, be_pod}) {
      t.write("cpu/" + d + "/cpu.cfs_quota_us", "-1");
      t.write("cpu/" + d + "/cpu.cfs_period_us", "100000");
      t.write("cpuset/" + d + "/cpuset.cpus", "0-3");
    }
    // Node 3.2 cores busy: the LS pod 1 core, the BE pod 2 cores, 0.2 for the system.
    REQUIRE(cache.append(mc::MetricKind::kNodeCPUUsage, "", now - 1s, 3.2));
    REQUIRE(cache.append(mc::MetricKind::kPodCPUUsage, kLSUid, now - 1s, 1.0));
    REQUIRE(cache.append(mc::MetricKind::kPodCPUUsage, kBEUid, now - 1s, 2.0));
  }
};

}  // namespace

TEST_CASE("cfsQuota policy: the besteffort quota follows the formula") {
  Fixture f;
  qosmanager::CPUSuppress s(f.cache, f.e, fourCpus(), 1000ms, f.registry);
  auto round = s.runOnce(
      testing::suppressStates(
          "4",
          R"({"enable":true,"cpuSuppressThresholdPercent":65,"cpuSuppressPolicy":"cfsQuota"})"),
      f.now);
  REQUIRE(round.ran);
  // 4000 * 65% - 1000 (LS) - max(3200 - 3000, 0 reserved) = 1400m.
  CHECK(round.calculation.suppress_milli == 1400);
  CHECK(round.be_cfs_quota == 140000);
  CHECK(f.t.read("cpu/" + f.be + "/cpu.cfs_quota_us") == "140000");
  // The cpuset policy is not in force: all CPUs stay.
  CHECK(f.t.read("cpuset/" + f.be + "/cpuset.cpus") == "0-3");
}

TEST_CASE("cpuset policy: BE cgroups down to the pods get ceil(suppress) CPUs") {
  Fixture f;
  qosmanager::CPUSuppress s(f.cache, f.e, fourCpus(), 1000ms, f.registry);
  auto round = s.runOnce(
      testing::suppressStates("4", R"({"enable":true,"cpuSuppressThresholdPercent":65})"), f.now);
  REQUIRE(round.ran);
  CHECK(round.policy == qosmanager::CPUSuppressPolicy::kCPUSet);
  REQUIRE(round.be_cpus.size() == 2);
  auto be_cpus = f.t.read("cpuset/" + f.be + "/cpuset.cpus");
  CHECK(be_cpus == f.t.read("cpuset/" + f.be_pod + "/cpuset.cpus"));
  CHECK(be_cpus != "0-3");
  CHECK(f.t.read("cpu/" + f.be + "/cpu.cfs_quota_us") == "-1");
}

TEST_CASE("disabled, stale or unsynced: recover or do nothing, never guess") {
  Fixture f;
  qosmanager::CPUSuppress s(f.cache, f.e, fourCpus(), 1000ms, f.registry);
  // Suppressed first, then the NodeSLO turns it off: the quota goes back to unlimited.
  s.runOnce(
      testing::suppressStates(
          "4",
          R"({"enable":true,"cpuSuppressThresholdPercent":65,"cpuSuppressPolicy":"cfsQuota"})"),
      f.now);
  REQUIRE(f.t.read("cpu/" + f.be + "/cpu.cfs_quota_us") == "140000");
  auto off = s.runOnce(testing::suppressStates("4", R"({"enable":false})"), f.now);
  CHECK_FALSE(off.ran);
  CHECK(f.t.read("cpu/" + f.be + "/cpu.cfs_quota_us") == "-1");

  // Usage older than two collect intervals: no decision.
  auto stale =
      s.runOnce(testing::suppressStates("4", R"({"enable":true,"cpuSuppressPolicy":"cfsQuota"})"),
                f.now + 10s);
  CHECK_FALSE(stale.ran);
  CHECK(f.t.read("cpu/" + f.be + "/cpu.cfs_quota_us") == "-1");

  auto unsynced = testing::suppressStates("4", R"({"enable":true,"cpuSuppressPolicy":"cfsQuota"})");
  unsynced.synced = false;
  CHECK_FALSE(s.runOnce(unsynced, f.now).ran);

  // A malformed strategy changes nothing and says why.
  auto bad = s.runOnce(
      testing::suppressStates("4", R"({"enable":true,"cpuSuppressThresholdPercent":"high"})"),
      f.now);
  CHECK_FALSE(bad.ran);
  CHECK(bad.skipped_because.find("cpuSuppressThresholdPercent") != std::string::npos);
}
