#include <catch2/catch.hpp>

#include "koord/cgroup/cgroup_reader.h"

#include <fmt/format.h>

#include "catch_expected.h"
#include "collector_fixture.h"
#include "log_lines.h"
#include "metricsadvisor/collectors/podthrottled/pod_throttled_collector_spec.h"

using namespace koord::roles::koordlet;
using namespace koord::roles::koordlet::testing;
using koord::cgroup::CgroupVersion;
namespace mc = koord::roles::koordlet::metriccache;
namespace ma = koord::roles::koordlet::metricsadvisor;

namespace {

koord::cgroup::CpuThrottling counts(std::uint64_t periods, std::uint64_t throttled) {
  return {.nr_periods = periods, .nr_throttled = throttled};
}

const std::string kUid = "6e2b5f4e-2c6a-4f0c-9a51-2d8a1c0f3b7e";

void writeCpuStat(const CollectorFixture& f, const std::string& dir, std::uint64_t periods,
                  std::uint64_t throttled) {
  const bool v1 = f.cgroups.root().version == CgroupVersion::kV1;
  f.write(
      (v1 ? "cpu/" : "") + dir + "/cpu.stat",
      v1 ? fmt::format("nr_periods {}\nnr_throttled {}\nthrottled_time 5000\n", periods, throttled)
         : fmt::format("usage_usec 100\nuser_usec 50\nsystem_usec 50\nnr_periods {}\n"
                       "nr_throttled {}\nthrottled_usec 5\n",
                       periods, throttled));
}

}  // namespace

TEST_CASE("podthrottled: the ratio is throttled over elapsed periods", "[podthrottled]") {
  CHECK(koord::cgroup::throttledRatio(counts(100, 10), counts(200, 35)) == Approx(0.25));
  CHECK(koord::cgroup::throttledRatio(counts(100, 10), counts(110, 20)) == Approx(1.0));
  // No period elapsed (an idle or unlimited cgroup): 0, as Koordinator has it.
  CHECK(koord::cgroup::throttledRatio(counts(100, 10), counts(100, 10)) == 0.0);
  // A counter went backwards: the cgroup was made anew, there is no ratio to tell.
  CHECK_FALSE(koord::cgroup::throttledRatio(counts(100, 10), counts(5, 1)));
  CHECK_FALSE(koord::cgroup::throttledRatio(counts(100, 10), counts(150, 2)));
}

TEST_CASE("podthrottled: pod and container ratios over two rounds, and after a reset",
          "[podthrottled]") {
  const auto version = GENERATE(CgroupVersion::kV1, CgroupVersion::kV2);
  INFO(koord::cgroup::cgroupVersionName(version));
  CollectorFixture f(version, ma::podThrottledCollector());
  auto p = collectorPod(kUid, 'c');
  const std::string cid(64, 'c');
  writeCpuStat(f, podDirOf(p), 1000, 100);
  writeCpuStat(f, containerDirOf(p), 500, 0);
  f.round({p});
  // One reading is no ratio yet.
  CHECK_FALSE(f.cache.last(mc::MetricKind::kPodCPUThrottled, kUid));
  CHECK_FALSE(f.cache.last(mc::MetricKind::kContainerCPUThrottled, cid));

  writeCpuStat(f, podDirOf(p), 1010, 104);
  writeCpuStat(f, containerDirOf(p), 510, 5);
  f.round({p});
  CHECK(f.cache.last(mc::MetricKind::kPodCPUThrottled, kUid)->value == Approx(0.4));
  CHECK(f.cache.last(mc::MetricKind::kContainerCPUThrottled, cid)->value == Approx(0.5));
  const auto first_sample = f.cache.last(mc::MetricKind::kPodCPUThrottled, kUid)->time;

  // The pod's cgroup was made anew: its counters restart, this round has no pod ratio.
  writeCpuStat(f, podDirOf(p), 20, 2);
  writeCpuStat(f, containerDirOf(p), 520, 5);
  f.round({p});
  CHECK(f.cache.last(mc::MetricKind::kPodCPUThrottled, kUid)->time == first_sample);
  CHECK(f.cache.last(mc::MetricKind::kContainerCPUThrottled, cid)->value == 0.0);

  // The next round measures from the new counters.
  writeCpuStat(f, podDirOf(p), 40, 12);
  f.round({p});
  CHECK(f.cache.last(mc::MetricKind::kPodCPUThrottled, kUid)->value == Approx(0.5));
  CHECK(f.cache.last(mc::MetricKind::kPodCPUThrottled, kUid)->time > first_sample);
}

TEST_CASE("podthrottled: a pod that leaves takes its series; an unreadable one says so once",
          "[podthrottled]") {
  CollectorFixture f(CgroupVersion::kV1, ma::podThrottledCollector());
  auto p = collectorPod(kUid, 'c');
  auto broken = collectorPod("0123456789abcdef0123456789abcdef", 'd');
  broken.containers.clear();
  writeCpuStat(f, podDirOf(p), 10, 1);
  writeCpuStat(f, containerDirOf(p), 10, 1);
  f.write("cpu/" + podDirOf(broken) + "/cpu.stat", "nr_periods lots\n");
  koord::testing::LogLines log;
  for (std::uint64_t i = 2; i <= 4; ++i) {
    writeCpuStat(f, podDirOf(p), 10 * i, i);
    writeCpuStat(f, containerDirOf(p), 10 * i, i);
    f.round({p, broken});
  }
  CHECK(log.count("pod throttled collector: ns/pod-0123") == 1);
  CHECK(log.problems() == 1);
  REQUIRE(f.cache.last(mc::MetricKind::kPodCPUThrottled, kUid));
  REQUIRE(f.cache.last(mc::MetricKind::kContainerCPUThrottled, std::string(64, 'c')));

  f.round({broken});
  CHECK_FALSE(f.cache.last(mc::MetricKind::kPodCPUThrottled, kUid));
  CHECK_FALSE(f.cache.last(mc::MetricKind::kContainerCPUThrottled, std::string(64, 'c')));
}

TEST_CASE("podthrottled: before the informer has synced nothing is read", "[podthrottled]") {
  CollectorFixture f(CgroupVersion::kV1, ma::podThrottledCollector());
  auto p = collectorPod(kUid, 'c');
  p.containers.clear();
  writeCpuStat(f, podDirOf(p), 10, 1);
  StatesSnapshot s;
  s.pods = std::make_shared<const std::vector<PodMeta>>(std::vector<PodMeta>{p});
  s.synced = false;
  f.collector->collect(s, f.now, std::chrono::steady_clock::now());
  writeCpuStat(f, podDirOf(p), 20, 6);
  f.round({p});
  // Had the unsynced round read the counters, this would be a first ratio.
  CHECK_FALSE(f.cache.last(mc::MetricKind::kPodCPUThrottled, kUid));
}
