// CPUBurst on this machine's real cgroup v1 cpu hierarchy: a CPU-bound container held to half a
// core is throttled in nearly every period; the strategy gives it a burst and, while the node
// is idle, raises its quota step by step, and its measured throttling falls away. The cgroups
// live under a koord-burst-<pid> directory, reached through a temp root of symlinks, so a
// kubelet's own kubepods is never touched.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/json.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "koord/cgroup/cgroup_version.h"
#include "koord/cgroup/cpu_topology.h"
#include "koord/cgroup/resource_executor.h"
#include "metriccache/metric_cache.h"
#include "qosmanager/cpuburst/cpu_burst.h"
#include "statesinformer/states_snapshot.h"
#include "temp_tree.h"

using namespace koord::roles::koordlet;
namespace mc = koord::roles::koordlet::metriccache;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

constexpr const char* kPodUid = "5b0c7d1e-3f4a-4b6c-8d9e-0f1a2b3c4d5e";
const std::string kContainerId(64, 'e');

std::int64_t readInt(const fs::path& p) {
  std::ifstream in(p);
  std::int64_t v = 0;
  in >> v;
  return v;
}

struct Throttling {
  std::uint64_t periods = 0;
  std::uint64_t throttled = 0;
};

Throttling readStat(const fs::path& p) {
  std::ifstream in(p);
  Throttling t;
  std::string key;
  std::uint64_t value = 0;
  while (in >> key >> value) {
    if (key == "nr_periods")
      t.periods = value;
    else if (key == "nr_throttled")
      t.throttled = value;
  }
  return t;
}

// A pod with one container under a directory of our own in the real cpu hierarchy.
struct RealPod {
  fs::path base =
      fs::canonical("/sys/fs/cgroup/cpu") / ("koord-burst-" + std::to_string(::getpid()));
  fs::path pod = base / "kubepods/burstable" / (std::string("pod") + kPodUid);
  fs::path container = pod / kContainerId;
  koord::testing::TempTree root{"koord-realburst"};
  pid_t hog = -1;

  RealPod() {
    fs::create_directories(container);
    fs::create_symlink(base, root.path("cpu"));
  }

  ~RealPod() {
    if (hog > 0) {
      ::kill(hog, SIGKILL);
      ::waitpid(hog, nullptr, 0);
    }
    // Children first; rmdir is how cgroups are removed (their files cannot be unlinked).
    for (const auto& d : {container, pod, base / "kubepods/burstable", base / "kubepods", base})
      ::rmdir(d.c_str());
  }

  void startHog() {
    hog = ::fork();
    if (hog == 0) {
      volatile unsigned long x = 0;
      while (true)
        x = x + 1;
    }
    REQUIRE(hog > 0);
    std::ofstream(container / "cgroup.procs") << hog << "\n";
  }

  // The share of CFS periods the container was throttled in over `d`.
  double throttledRatio(std::chrono::milliseconds d) const {
    auto a = readStat(container / "cpu.stat");
    std::this_thread::sleep_for(d);
    auto b = readStat(container / "cpu.stat");
    if (b.periods <= a.periods)
      return 0;
    return static_cast<double>(b.throttled - a.throttled) /
           static_cast<double>(b.periods - a.periods);
  }
};

StatesSnapshot states(const char* strategy) {
  StatesSnapshot s;
  auto node = std::make_shared<NodeInfo>();
  node->name = "node-a";
  node->capacity.emplace("cpu", koord::kube::Quantity::parse("2").value());
  s.node = node;
  auto slo = std::make_shared<NodeSLOInfo>();
  slo->name = "node-a";
  slo->cpu_burst_strategy =
      std::make_shared<const boost::json::object>(boost::json::parse(strategy).as_object());
  s.node_slo = slo;
  PodMeta p;
  p.namespace_ = "web";
  p.name = "hog";
  p.uid = kPodUid;
  p.phase = PodPhase::kRunning;
  p.kube_qos = koord::apis::KubeQoS::kBurstable;
  p.labels["koordinator.sh/qosClass"] = "LS";
  p.qos = koord::apis::QoSClass::kLS;
  ContainerMeta c;
  c.name = "main";
  c.runtime = "containerd";
  c.id = kContainerId;
  c.limits.emplace("cpu", koord::kube::Quantity::parse("500m").value());
  p.containers.push_back(c);
  s.pods = std::make_shared<std::vector<PodMeta>>(std::vector<PodMeta>{p});
  s.synced = true;
  return s;
}

}  // namespace

TEST_CASE(
    "a throttled CPU hog on real cgroups gets a burst and a raised quota, and its "
    "throttling falls",
    "[realcgroup]") {
  auto version = koord::cgroup::detectCgroupVersion("/sys/fs/cgroup");
  if (::geteuid() != 0 || ::access("/sys/fs/cgroup/cpu", W_OK) != 0 || !version ||
      *version != koord::cgroup::CgroupVersion::kV1 ||
      !fs::exists("/sys/fs/cgroup/cpu/cpu.cfs_burst_us")) {
    WARN("needs root and a writable cgroup v1 cpu hierarchy with cpu.cfs_burst_us; skipped");
    return;
  }
  RealPod rp;
  // As the kubelet sets a 500m limit: the pod's and the container's quota.
  for (const auto& d : {rp.pod, rp.container}) {
    std::ofstream(d / "cpu.cfs_quota_us") << "50000\n";
    REQUIRE(readInt(d / "cpu.cfs_quota_us") == 50000);
  }
  rp.startHog();
  const double before = rp.throttledRatio(1500ms);
  INFO("throttled at the limit: " << before);
  // One busy thread against half a core is throttled in most periods, unless the machine's CPUs
  // are so busy elsewhere that it gets less than its quota: nothing to show then.
  if (before < 0.3) {
    WARN("the hog was throttled in only " << before << " of its periods; skipped");
    return;
  }

  koord::cgroup::ResourceExecutor e(
      {rp.root.root(), koord::cgroup::CgroupVersion::kV1, koord::cgroup::CgroupDriver::kCgroupfs});
  mc::MetricCache cache;
  koord::cgroup::CpuTopology topology;
  topology.cpus = {{0, 0, 0, 0}, {1, 1, 0, 0}};
  qosmanager::CPUBurst burst(cache, e, topology, {});
  const char* kAuto = R"({"policy":"auto","cpuBurstPercent":100,"cfsQuotaBurstPercent":300})";
  // Rounds 300 ms apart on the real counters; the node's usage as the collectors would have it
  // (0.4 of 2 CPUs: idle), stamped 10 s apart so each round's window holds one sample. They go
  // on until the quota holds one busy thread (the hog cannot be throttled past that) or, on a
  // machine whose other work keeps the hog below its quota, for a bounded number.
  auto now = std::chrono::system_clock::now();
  std::vector<std::int64_t> quotas;
  for (int i = 0; i < 40 && (quotas.empty() || quotas.back() < 100000); ++i) {
    now += 10s;
    REQUIRE(cache.append(mc::MetricKind::kNodeCPUUsage, "", now, 0.4));
    auto round = burst.runOnce(states(kAuto), now);
    REQUIRE(round.ran);
    CHECK(round.errors.empty());
    CHECK(round.node_state == qosmanager::NodeBurstState::kIdle);
    quotas.push_back(readInt(rp.container / "cpu.cfs_quota_us"));
    std::this_thread::sleep_for(300ms);
  }
  std::ostringstream trail;
  for (auto q : quotas)
    trail << q << " ";
  INFO("container quota after each round: " << trail.str());
  // The burst: 100% of the limit, the most the kernel takes beside a 50 ms quota.
  CHECK(readInt(rp.container / "cpu.cfs_burst_us") == 50000);
  CHECK(readInt(rp.pod / "cpu.cfs_burst_us") == 50000);
  // Raised by 1.2 steps while throttled, the pod's with it, never past the 300% ceiling and
  // never lowered on the idle node.
  CHECK(quotas.front() == 50000);
  CHECK(std::is_sorted(quotas.begin(), quotas.end()));
  CHECK(quotas.back() >= 60000);
  CHECK(quotas.back() <= 150000);
  CHECK(readInt(rp.pod / "cpu.cfs_quota_us") == quotas.back());

  // A quota of a whole thread's worth cannot be hit by one thread; short of it (the hog kept
  // below its quota by other work all along) the ratio depends on that work.
  const double after = rp.throttledRatio(1500ms);
  INFO("throttled with the raised quota: " << after);
  if (quotas.back() >= 100000) {
    CHECK(after < before / 2);
    CHECK(after <= 0.1);
  } else {
    WARN("the quota stopped at " << quotas.back() << ": the hog was not throttled any more");
  }

  // The policy off: straight back to the limit, and no burst.
  now += 10s;
  REQUIRE(cache.append(mc::MetricKind::kNodeCPUUsage, "", now, 0.4));
  auto off = burst.runOnce(states(R"({"policy":"none"})"), now);
  CHECK(off.errors.empty());
  CHECK(readInt(rp.container / "cpu.cfs_quota_us") == 50000);
  CHECK(readInt(rp.pod / "cpu.cfs_quota_us") == 50000);
  CHECK(readInt(rp.container / "cpu.cfs_burst_us") == 0);
}
