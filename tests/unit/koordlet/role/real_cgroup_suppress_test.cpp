// BE CPU suppression on this machine's real cgroup v1 hierarchy: a CPU-bound process in a
// besteffort pod cgroup is held to the quota the formula gives. The cgroups live under a
// koord-test-<pid> directory of each controller, reached through a temp root of symlinks, so a
// kubelet's own kubepods is never touched.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/json.hpp>

#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "koord/cgroup/cgroup_version.h"
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
namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

constexpr const char* kCfsQuota =
    R"({"enable":true,"cpuSuppressThresholdPercent":65,"cpuSuppressPolicy":"cfsQuota"})";

bool writable(const fs::path& p) {
  return ::access(p.c_str(), W_OK) == 0;
}

std::int64_t readQuota(const fs::path& p) {
  std::ifstream in(p);
  std::int64_t v = 0;
  in >> v;
  return v;
}

std::uint64_t readCounter(const fs::path& p) {
  std::ifstream in(p);
  std::uint64_t v = 0;
  in >> v;
  return v;
}

// A real cgroup v1 hierarchy for cpu and cpuacct, under a directory of our own.
struct RealCgroups {
  std::string name = "koord-test-" + std::to_string(::getpid());
  fs::path cpu_base, cpuacct_base;
  koord::testing::TempTree root{"koord-realcg"};
  std::vector<pid_t> hogs;

  RealCgroups() {
    cpu_base = fs::canonical("/sys/fs/cgroup/cpu") / name;
    cpuacct_base = fs::canonical("/sys/fs/cgroup/cpuacct") / name;
    fs::create_directories(cpu_base / "kubepods/besteffort" / (std::string("pod") + kBEUid));
    fs::create_directories(cpuacct_base / "kubepods/besteffort" / (std::string("pod") + kBEUid));
    fs::create_symlink(cpu_base, root.path("cpu"));
    fs::create_symlink(cpuacct_base, root.path("cpuacct"));
    // The cfsQuota policy also puts BE cpusets back to all CPUs; a plain tree stands in for the
    // cpuset controller, which this test is not about.
    root.write("cpuset/kubepods/besteffort/cpuset.cpus", "0-1");
  }

  ~RealCgroups() {
    for (pid_t p : hogs) {
      ::kill(p, SIGKILL);
      ::waitpid(p, nullptr, 0);
    }
    for (const auto& base : {cpu_base, cpuacct_base}) {
      // Children first; rmdir is how cgroups are removed (their files cannot be unlinked).
      for (const char* d : {"kubepods/besteffort/pod6e2b5f4e-2c6a-4f0c-9a51-2d8a1c0f3b7e",
                            "kubepods/besteffort", "kubepods", ""}) {
        std::error_code ec;
        ::rmdir((base / d).c_str());
        (void)ec;
      }
    }
  }

  fs::path beDir(const fs::path& base) const { return base / "kubepods/besteffort"; }
  fs::path podDir(const fs::path& base) const {
    return beDir(base) / (std::string("pod") + kBEUid);
  }

  void startHog(int processes) {
    for (int i = 0; i < processes; ++i) {
      pid_t p = ::fork();
      if (p == 0) {
        volatile unsigned long x = 0;
        while (true)
          x = x + 1;
      }
      REQUIRE(p > 0);
      hogs.push_back(p);
      for (const auto& base : {cpu_base, cpuacct_base})
        std::ofstream(podDir(base) / "cgroup.procs") << p << "\n";
    }
  }

  // Cores the besteffort cgroup used over `d`.
  double measure(std::chrono::milliseconds d) {
    auto c0 = readCounter(beDir(cpuacct_base) / "cpuacct.usage");
    auto t0 = std::chrono::steady_clock::now();
    std::this_thread::sleep_for(d);
    auto c1 = readCounter(beDir(cpuacct_base) / "cpuacct.usage");
    auto dt = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0);
    return static_cast<double>(c1 - c0) / dt.count();
  }
};

}  // namespace

TEST_CASE("a BE CPU hog on real cgroups is held to the suppress quota", "[realcgroup]") {
  auto version = koord::cgroup::detectCgroupVersion("/sys/fs/cgroup");
  if (::geteuid() != 0 || !writable("/sys/fs/cgroup/cpu") || !writable("/sys/fs/cgroup/cpuacct") ||
      !version || *version != koord::cgroup::CgroupVersion::kV1) {
    WARN("needs root and a writable cgroup v1 cpu/cpuacct hierarchy; skipped");
    return;
  }
  RealCgroups cg;
  // As a real BE pod has: the BatchResource reconciler gives its cgroup the quota of its
  // batch-cpu limit (2 cores). v1 refused the tier's quota below it, and the hog kept the CPU.
  std::ofstream(cg.podDir(cg.cpu_base) / "cpu.cfs_quota_us") << "200000\n";
  REQUIRE(readQuota(cg.podDir(cg.cpu_base) / "cpu.cfs_quota_us") == 200000);
  cg.startHog(2);
  const double free_running = cg.measure(2000ms);
  INFO("hog without suppression: " << free_running << " cores");

  koord::cgroup::ResourceExecutor e(
      {cg.root.root(), koord::cgroup::CgroupVersion::kV1, koord::cgroup::CgroupDriver::kCgroupfs});
  mc::MetricCache cache;
  koord::metrics::Registry registry;
  koord::cgroup::CpuTopology topology;
  topology.cpus = {{0, 0, 0, 0}, {1, 1, 0, 0}};
  qosmanager::CPUSuppress suppress(cache, e, topology, 1000ms, registry);

  // Usage as the collectors would have it: LS 0.5 cores, the hog 1.4, node 2.0 (system 0.1).
  auto now = std::chrono::system_clock::now();
  REQUIRE(cache.append(mc::MetricKind::kNodeCPUUsage, "", now, 2.0));
  REQUIRE(cache.append(mc::MetricKind::kPodCPUUsage, kLSUid, now, 0.5));
  REQUIRE(cache.append(mc::MetricKind::kPodCPUUsage, kBEUid, now, 1.4));
  auto round = suppress.runOnce(testing::suppressStates("2", kCfsQuota), now);
  REQUIRE(round.ran);
  // 2000 * 65% - 500 - max(100, 0) = 700m, as CFS quota over the 100 ms period.
  CHECK(round.calculation.suppress_milli == 700);
  REQUIRE(round.be_cfs_quota == 70000);
  CHECK(readQuota(cg.beDir(cg.cpu_base) / "cpu.cfs_quota_us") == 70000);
  CHECK(readQuota(cg.podDir(cg.cpu_base) / "cpu.cfs_quota_us") == 70000);
  const double held = cg.measure(3000ms);
  INFO("hog at 700m quota: " << held << " cores");
  CHECK(held <= 0.7 * 1.1);
  CHECK(held >= 0.7 * 0.7);
  // Without the quota the two processes took clearly more than the quota lets through (on an
  // otherwise idle 2-CPU machine about 2 cores; RUN_SERIAL keeps other tests away).
  CHECK(free_running >= 0.7 * 1.2);

  // LS usage rises to 1 core: suppress = 1300 - 1000 - 100 = 200m, applied at once.
  now += 1s;
  REQUIRE(cache.append(mc::MetricKind::kNodeCPUUsage, "", now, 1.9));
  REQUIRE(cache.append(mc::MetricKind::kPodCPUUsage, kLSUid, now, 1.0));
  REQUIRE(cache.append(mc::MetricKind::kPodCPUUsage, kBEUid, now, 0.8));
  round = suppress.runOnce(testing::suppressStates("2", kCfsQuota), now);
  REQUIRE(round.ran);
  CHECK(round.calculation.suppress_milli == 200);
  REQUIRE(round.be_cfs_quota == 20000);
  const double squeezed = cg.measure(3000ms);
  INFO("hog at 200m quota: " << squeezed << " cores");
  CHECK(squeezed <= 0.2 * 1.15);
  CHECK(squeezed >= 0.2 * 0.6);
  CHECK(readQuota(cg.podDir(cg.cpu_base) / "cpu.cfs_quota_us") == 20000);

  // Suppression lifts (turned off in the NodeSLO): the tier is unlimited again and the pod gets
  // its own quota back.
  now += 1s;
  round = suppress.runOnce(
      testing::suppressStates("2", R"({"enable":false,"cpuSuppressPolicy":"cfsQuota"})"), now);
  CHECK_FALSE(round.ran);
  CHECK(readQuota(cg.beDir(cg.cpu_base) / "cpu.cfs_quota_us") == -1);
  CHECK(readQuota(cg.podDir(cg.cpu_base) / "cpu.cfs_quota_us") == 200000);
}
