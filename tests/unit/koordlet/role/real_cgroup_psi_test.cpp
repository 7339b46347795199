// PSICollector on this machine's real cgroups: on a cgroup v1 host the pressure files come from
// the hybrid cgroup2 mount (/sys/fs/cgroup/unified), which carries them for every directory even
// without controllers. CPU hogs in a pod directory there must show as cpu some pressure.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "collector_fixture.h"
#include "koord/cgroup/cgroup_version.h"
#include "metricsadvisor/collectors/psi/psi_collector_spec.h"

using namespace koord::roles::koordlet;
using namespace koord::roles::koordlet::testing;
namespace mc = koord::roles::koordlet::metriccache;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

const std::string kUid = "6e2b5f4e-2c6a-4f0c-9a51-2d8a1c0f3b7e";

// Our own directories under the unified and cpuacct mounts; the cpuacct one has no pressure
// files, so the collector has to fall back to the unified one.
struct RealPSICgroups {
  std::string name = "koord-psi-test-" + std::to_string(::getpid());
  fs::path unified = fs::path("/sys/fs/cgroup/unified") / name;
  fs::path cpuacct = fs::path("/sys/fs/cgroup/cpuacct") / name;
  std::string pod_rel = "kubepods/burstable/pod" + kUid;
  std::vector<pid_t> hogs;

  RealPSICgroups() {
    fs::create_directories(unified / pod_rel);
    fs::create_directories(cpuacct / pod_rel);
  }
  ~RealPSICgroups() {
    for (pid_t p : hogs) {
      ::kill(p, SIGKILL);
      ::waitpid(p, nullptr, 0);
    }
    // Children first; rmdir is how a cgroup is removed.
    for (const auto& base : {unified, cpuacct}) {
      for (const char* d : {"/kubepods/burstable/pod6e2b5f4e-2c6a-4f0c-9a51-2d8a1c0f3b7e",
                            "/kubepods/burstable", "/kubepods", ""})
        ::rmdir((base.string() + d).c_str());
    }
  }

  void startHogs(int n) {
    for (int i = 0; i < n; ++i) {
      pid_t p = ::fork();
      if (p == 0) {
        volatile unsigned long x = 0;
        while (true)
          x = x + 1;
      }
      REQUIRE(p > 0);
      hogs.push_back(p);
      std::ofstream(unified / pod_rel / "cgroup.procs") << p << "\n";
    }
  }
};

}  // namespace

TEST_CASE("PSI of CPU hogs in a real cgroup rises above zero", "[realcgroup][psi]") {
  auto version = koord::cgroup::detectCgroupVersion("/sys/fs/cgroup");
  if (::geteuid() != 0 || !version || *version != koord::cgroup::CgroupVersion::kV1 ||
      !fs::exists("/sys/fs/cgroup/unified/cpu.pressure") ||
      ::access("/sys/fs/cgroup/unified", W_OK) != 0 ||
      ::access("/sys/fs/cgroup/cpuacct", W_OK) != 0) {
    WARN("needs root, cgroup v1 and a writable hybrid cgroup2 mount with PSI; skipped");
    return;
  }
  RealPSICgroups cg;
  CollectorFixture f(koord::cgroup::CgroupVersion::kV1,
                     koord::roles::koordlet::metricsadvisor::psiCollector());
  f.tree.mkdirs("cgroup");
  f.tree.symlink("cgroup/unified", cg.unified);
  f.tree.symlink("cgroup/cpuacct", cg.cpuacct);
  auto pod = collectorPod(kUid, 'c');
  pod.containers.clear();

  // One more hog than CPUs: one is always runnable but waiting, which is what "some" counts. A
  // single hog on an otherwise idle multi-core machine never waits and shows no pressure.
  const long cpus = ::sysconf(_SC_NPROCESSORS_ONLN);
  REQUIRE(cpus > 0);
  cg.startHogs(static_cast<int>(cpus) + 1);

  // avg10 is a running average the kernel updates every 2 s; give it a few updates.
  double some = 0;
  for (int i = 0; i < 10 && some <= 0; ++i) {
    std::this_thread::sleep_for(1s);
    f.round({pod});
    auto last = f.cache.last(mc::MetricKind::kPodPSICPUSome, kUid);
    REQUIRE(last);
    some = last->value;
  }
  INFO("cpu some avg10 of " << cpus + 1 << " hogs on " << cpus << " CPUs: " << some);
  CHECK(some > 0);
  CHECK(f.lines("koordlet_pod_psi", {"psi_resource_type=\"cpu\"", "psi_precision=\"avg10\"",
                                     "psi_degree=\"some\""}) == 1);
  CHECK(f.lines("koordlet_pod_psi", {"psi_resource_type=\"cpu\"", "psi_precision=\"avg10\"",
                                     "psi_degree=\"some\"", "} 0\n"}) == 0);
}
