#include <catch2/catch.hpp>

#include <fmt/format.h>

#include "koord/cgroup/proc_readers.h"
#include "koord/cgroup/resource_executor.h"
#include "metricsadvisor/resource_collector.h"
#include "temp_tree.h"

using namespace koord::roles::koordlet;
namespace mc = koord::roles::koordlet::metriccache;
using koord::testing::TempTree;
using namespace std::chrono_literals;

namespace {

const char* kBE = "6e2b5f4e-2c6a-4f0c-9a51-2d8a1c0f3b7e";
const char* kLS = "0123456789abcdef0123456789abcdef";

PodMeta pod(const char* uid, koord::apis::KubeQoS kq, koord::apis::QoSClass q) {
  PodMeta p;
  p.namespace_ = "ns";
  p.name = uid;
  p.uid = uid;
  p.kube_qos = kq;
  p.qos = q;
  p.phase = PodPhase::kRunning;
  if (q == koord::apis::QoSClass::kBE)
    p.labels["koordinator.sh/qosClass"] = "BE";
  return p;
}

// /proc/stat with `busy` user ticks (USER_HZ) and a fixed idle count; meminfo with 8 GiB total.
void writeProc(const TempTree& t, std::uint64_t busy, std::uint64_t available_kb) {
  t.write("proc/stat",
          fmt::format("cpu  {} 0 0 1000 0 0 0 0 0 0\ncpu0 {} 0 0 1000 0 0 0 0 0 0\n", busy, busy));
  t.write("proc/meminfo", fmt::format("MemTotal: 8388608 kB\nMemFree: 1000 kB\n"
                                      "MemAvailable: {} kB\n",
                                      available_kb));
}

void writePod(const TempTree& t, const std::string& dir, std::uint64_t cpu_ns, std::uint64_t anon) {
  t.write("cgroup/cpuacct/" + dir + "/cpuacct.usage", std::to_string(cpu_ns));
  t.write("cgroup/memory/" + dir + "/memory.stat",
          fmt::format("total_inactive_anon 0\ntotal_active_anon {}\ntotal_unevictable 0\n", anon));
}

}  // namespace

TEST_CASE("two rounds give node, pod, BE and system usage; a pod that leaves is forgotten") {
  TempTree t("koord-collect");
  koord::cgroup::ResourceExecutor e({t.path("cgroup"), koord::cgroup::CgroupVersion::kV1,
                                     koord::cgroup::CgroupDriver::kCgroupfs});
  auto be = pod(kBE, koord::apis::KubeQoS::kBestEffort, koord::apis::QoSClass::kBE);
  auto ls = pod(kLS, koord::apis::KubeQoS::kBurstable, koord::apis::QoSClass::kNone);
  const std::string be_dir = podCgroupDir(e.root().driver, be).value();
  const std::string ls_dir = podCgroupDir(e.root().driver, ls).value();
  CHECK(ls_dir == std::string("kubepods/burstable/pod") + kLS);

  mc::MetricCache cache;
  ResourceCollector collector(e, t.path("proc"), cache);
  const long hz = koord::cgroup::clockTicksPerSecond();
  const mc::TimePoint t0{std::chrono::seconds(1'800'000'000)};
  const std::chrono::steady_clock::time_point s0{std::chrono::seconds(1000)};

  writeProc(t, 0, 6 * 1024 * 1024);
  writePod(t, be_dir, 0, 100 << 20);
  writePod(t, ls_dir, 0, 300 << 20);
  t.write("cgroup/cpuacct/kubepods/besteffort/cpuacct.usage", "0");
  t.write("cgroup/cpuset/kubepods/besteffort/cpuset.cpus", "0-3");
  t.write("cgroup/cpu/kubepods/besteffort/cpu.cfs_quota_us", "150000");
  t.write("cgroup/cpu/kubepods/besteffort/cpu.cfs_period_us", "100000");
  auto first = collector.collect({be, ls}, t0, s0);
  CHECK(first.pods_collected == 2);
  CHECK_FALSE(cache.last(mc::MetricKind::kNodeCPUUsage, ""));  // a rate needs two readings
  CHECK(cache.last(mc::MetricKind::kNodeMemoryUsage, "")->value == 2.0 * (1 << 30));
  CHECK(cache.last(mc::MetricKind::kPodMemoryUsage, kLS)->value == 300.0 * (1 << 20));

  // One second later: node busy 1.5 s of CPU, BE pod 1 s, LS pod 0.25 s.
  writeProc(t, static_cast<std::uint64_t>(hz * 3 / 2), 6 * 1024 * 1024);
  t.write("cgroup/cpuacct/" + be_dir + "/cpuacct.usage", "1000000000");
  t.write("cgroup/cpuacct/" + ls_dir + "/cpuacct.usage", "250000000");
  t.write("cgroup/cpuacct/kubepods/besteffort/cpuacct.usage", "1000000000");
  collector.collect({be, ls}, t0 + 1s, s0 + 1s);
  CHECK(cache.last(mc::MetricKind::kNodeCPUUsage, "")->value == Approx(1.5));
  CHECK(cache.last(mc::MetricKind::kPodCPUUsage, kBE)->value == Approx(1.0));
  CHECK(cache.last(mc::MetricKind::kPodCPUUsage, kLS)->value == Approx(0.25));
  CHECK(cache.last(mc::MetricKind::kBECPUUsage, "")->value == Approx(1.0));
  CHECK(cache.last(mc::MetricKind::kSystemCPUUsage, "")->value == Approx(0.25));
  CHECK(cache.last(mc::MetricKind::kSystemMemoryUsage, "")->value == Approx(1648.0 * (1 << 20)));
  // BE real limit: the quota (1.5 cores) is tighter than the 4-CPU cpuset.
  CHECK(cache.last(mc::MetricKind::kBECPULimit, "")->value == Approx(1.5));

  // The LS pod is gone: its series go with it.
  collector.collect({be}, t0 + 2s, s0 + 2s);
  CHECK_FALSE(cache.last(mc::MetricKind::kPodMemoryUsage, kLS));
  CHECK(cache.last(mc::MetricKind::kPodMemoryUsage, kBE));
}

TEST_CASE("a pod with a hostile UID is skipped, never read") {
  TempTree t("koord-collect");
  koord::cgroup::ResourceExecutor e({t.path("cgroup"), koord::cgroup::CgroupVersion::kV1,
                                     koord::cgroup::CgroupDriver::kCgroupfs});
  writeProc(t, 0, 1024);
  auto evil = pod("../../../etc", koord::apis::KubeQoS::kBestEffort, koord::apis::QoSClass::kBE);
  mc::MetricCache cache;
  ResourceCollector collector(e, t.path("proc"), cache);
  auto stats = collector.collect({evil}, mc::TimePoint{}, std::chrono::steady_clock::now());
  CHECK(stats.pods_collected == 0);
  CHECK(stats.errors == 1);
}
