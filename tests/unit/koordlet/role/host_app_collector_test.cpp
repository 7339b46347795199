#include <catch2/catch.hpp>

#include <algorithm>

#include <fmt/format.h>

#include "koord/cgroup/proc_readers.h"
#include "koord/cgroup/resource_executor.h"
#include "koord/core/log.h"
#include "metricsadvisor/resource_collector.h"
#include "temp_tree.h"

using namespace koord::roles::koordlet;
namespace mc = koord::roles::koordlet::metriccache;
using koord::cgroup::CgroupDriver;
using koord::cgroup::CgroupVersion;
using koord::testing::TempTree;
using namespace std::chrono_literals;

namespace {

const char* kLS = "0123456789abcdef0123456789abcdef";

PodMeta lsPod() {
  PodMeta p;
  p.namespace_ = "web";
  p.name = "nginx-pod";
  p.uid = kLS;
  p.kube_qos = koord::apis::KubeQoS::kBurstable;
  p.phase = PodPhase::kRunning;
  return p;
}

// One cgroup tree of either version, written as the kernel spells each file.
struct Tree {
  TempTree t{"koord-hostapp"};
  CgroupVersion version;
  koord::cgroup::ResourceExecutor e;

  Tree(CgroupVersion v, CgroupDriver d) : version(v), e({t.path("cgroup"), v, d}) {}

  void proc(std::uint64_t busy_ticks, std::uint64_t available_kb) const {
    t.write("proc/stat", fmt::format("cpu  {} 0 0 1000 0 0 0 0 0 0\n", busy_ticks));
    t.write(
        "proc/meminfo",
        fmt::format("MemTotal: 8388608 kB\nMemFree: 1000 kB\nMemAvailable: {} kB\n", available_kb));
  }
  void cgroup(const std::string& dir, std::uint64_t cpu_ns, std::uint64_t anon) const {
    if (version == CgroupVersion::kV1) {
      t.write("cgroup/cpuacct/" + dir + "/cpuacct.usage", std::to_string(cpu_ns));
      t.write(
          "cgroup/memory/" + dir + "/memory.stat",
          fmt::format("total_inactive_anon 0\ntotal_active_anon {}\ntotal_unevictable 0\n", anon));
    } else {
      t.write("cgroup/" + dir + "/cpu.stat", fmt::format("usage_usec {}\n", cpu_ns / 1000));
      t.write("cgroup/" + dir + "/memory.stat",
              fmt::format("inactive_anon 0\nactive_anon {}\nunevictable 0\n", anon));
    }
  }
};

// Captures log lines while alive.
struct LogLines {
  std::vector<std::string> lines;
  LogLines() {
    koord::log::setSink([this](std::string_view l) { lines.emplace_back(l); });
  }
  ~LogLines() { koord::log::setSink(nullptr); }
  std::size_t count(std::string_view needle) const {
    return static_cast<std::size_t>(std::count_if(lines.begin(), lines.end(), [&](const auto& l) {
      return l.find(needle) != std::string::npos;
    }));
  }
};

HostApplications apps(std::vector<HostApplication> list) {
  HostApplications h;
  h.apps = std::move(list);
  return h;
}

HostApplication nginx() {
  HostApplication a;
  a.name = "nginx";
  a.qos = koord::apis::QoSClass::kLS;
  a.priority = koord::apis::PriorityClass::kProd;
  return a;  // host-latency-sensitive/nginx
}

HostApplication sparkUnderBesteffort() {
  HostApplication a;
  a.name = "spark";
  a.qos = koord::apis::QoSClass::kBE;
  a.has_cgroup_path = true;
  a.base = HostAppCgroupBase::kKubepodsBesteffort;
  a.parent_dir = "host";
  a.relative_path = "spark";
  a.under_kube_besteffort = true;
  return a;
}

// Two rounds one second apart on `tree`: node 1.5 cores and 2 GiB busy, the LS pod 0.25 cores and
// 300 MiB, each app in `apps_dirs` 0.5 cores and 100 MiB. Runs the same rounds through a second
// collector that knows no host apps, to compare system usage.
void twoRounds(const Tree& tree, const HostApplications& host_apps,
               const std::vector<std::string>& app_dirs, mc::MetricCache& with,
               mc::MetricCache& without) {
  ResourceCollector collector(tree.e, tree.t.path("proc"), with);
  ResourceCollector plain(tree.e, tree.t.path("proc"), without);
  const auto ls = lsPod();
  const std::string ls_dir = podCgroupDir(tree.e.root().driver, ls).value();
  const long hz = koord::cgroup::clockTicksPerSecond();
  const mc::TimePoint t0{std::chrono::seconds(1'800'000'000)};
  const std::chrono::steady_clock::time_point s0{std::chrono::seconds(1000)};

  tree.proc(0, 6 * 1024 * 1024);
  tree.cgroup(ls_dir, 0, 300 << 20);
  for (const auto& d : app_dirs)
    tree.cgroup(d, 0, 100 << 20);
  auto first = collector.collect({ls}, host_apps, t0, s0);
  plain.collect({ls}, t0, s0);
  CHECK(first.host_apps_collected == app_dirs.size());
  CHECK_FALSE(with.last(mc::MetricKind::kHostAppCPUUsage, "nginx"));  // a rate needs two
  CHECK_FALSE(with.last(mc::MetricKind::kSystemCPUUsage, ""));

  tree.proc(static_cast<std::uint64_t>(hz * 3 / 2), 6 * 1024 * 1024);
  tree.cgroup(ls_dir, 250'000'000, 300 << 20);
  for (const auto& d : app_dirs)
    tree.cgroup(d, 500'000'000, 100 << 20);
  collector.collect({ls}, host_apps, t0 + 1s, s0 + 1s);
  plain.collect({ls}, t0 + 1s, s0 + 1s);
}

}  // namespace

TEST_CASE("host apps, cgroup v1: usage by name on the second round, subtracted from system") {
  Tree tree(CgroupVersion::kV1, CgroupDriver::kCgroupfs);
  mc::MetricCache with, without;
  twoRounds(tree, apps({nginx()}), {"host-latency-sensitive/nginx"}, with, without);

  REQUIRE(with.last(mc::MetricKind::kHostAppCPUUsage, "nginx"));
  CHECK(with.last(mc::MetricKind::kHostAppCPUUsage, "nginx")->value == Approx(0.5));
  CHECK(with.last(mc::MetricKind::kHostAppMemoryUsage, "nginx")->value == 100.0 * (1 << 20));
  const double sys_cpu = with.last(mc::MetricKind::kSystemCPUUsage, "")->value;
  const double plain_cpu = without.last(mc::MetricKind::kSystemCPUUsage, "")->value;
  CHECK(sys_cpu == Approx(1.5 - 0.25 - 0.5));
  CHECK(plain_cpu - sys_cpu == Approx(0.5));
  const double sys_mem = with.last(mc::MetricKind::kSystemMemoryUsage, "")->value;
  const double plain_mem = without.last(mc::MetricKind::kSystemMemoryUsage, "")->value;
  CHECK(plain_mem - sys_mem == Approx(100.0 * (1 << 20)));

  // The app leaves the NodeSLO: its series go, the pod's stay.
  ResourceCollector again(tree.e, tree.t.path("proc"), with);
  again.collect({lsPod()}, apps({nginx()}), mc::TimePoint{std::chrono::seconds(1'800'000'002)},
                std::chrono::steady_clock::time_point{std::chrono::seconds(1002)});
  again.collect({lsPod()}, HostApplications{}, mc::TimePoint{std::chrono::seconds(1'800'000'003)},
                std::chrono::steady_clock::time_point{std::chrono::seconds(1003)});
  CHECK_FALSE(with.last(mc::MetricKind::kHostAppCPUUsage, "nginx"));
  CHECK_FALSE(with.last(mc::MetricKind::kHostAppMemoryUsage, "nginx"));
  CHECK(with.last(mc::MetricKind::kPodMemoryUsage, kLS));
}

TEST_CASE("host apps, cgroup v2 + systemd: an app under kubepods besteffort is subtracted once") {
  Tree tree(CgroupVersion::kV2, CgroupDriver::kSystemd);
  const std::string dir = hostAppCgroupDir(CgroupDriver::kSystemd, sparkUnderBesteffort());
  CHECK(dir == "kubepods.slice/kubepods-besteffort.slice/host/spark");
  mc::MetricCache with, without;
  twoRounds(tree, apps({sparkUnderBesteffort(), nginx()}), {dir, "host-latency-sensitive/nginx"},
            with, without);

  REQUIRE(with.last(mc::MetricKind::kHostAppCPUUsage, "spark"));
  CHECK(with.last(mc::MetricKind::kHostAppCPUUsage, "spark")->value == Approx(0.5));
  CHECK(with.last(mc::MetricKind::kHostAppCPUUsage, "nginx")->value == Approx(0.5));
  CHECK(with.last(mc::MetricKind::kHostAppMemoryUsage, "spark")->value == 100.0 * (1 << 20));
  const double sys_cpu = with.last(mc::MetricKind::kSystemCPUUsage, "")->value;
  const double plain_cpu = without.last(mc::MetricKind::kSystemCPUUsage, "")->value;
  CHECK(sys_cpu == Approx(1.5 - 0.25 - 0.5 - 0.5));
  CHECK(plain_cpu - sys_cpu == Approx(1.0));
}

TEST_CASE("host apps: a skipped entry and a missing cgroup are errors, not a stuck system usage") {
  Tree tree(CgroupVersion::kV1, CgroupDriver::kCgroupfs);
  HostApplications h = apps({nginx()});
  HostApplication ghost = nginx();
  ghost.name = "ghost";  // host-latency-sensitive/ghost is never created
  h.apps.push_back(ghost);
  h.skipped.push_back({"evil", "spec.hostApplications[2]: cgroupPath.parentDir \"..\""});
  mc::MetricCache with, without;
  {
    LogLines log;
    twoRounds(tree, h, {"host-latency-sensitive/nginx"}, with, without);
    // Two rounds, one error line each: logged once per key, as errors.
    CHECK(log.count("host application evil: spec.hostApplications[2]") == 1);
    CHECK(log.count("host application ghost: ") == 1);
    REQUIRE(log.lines.size() == 2);
    CHECK(log.lines[0].front() == 'E');
    CHECK(log.lines[1].front() == 'E');
  }

  CHECK_FALSE(with.last(mc::MetricKind::kHostAppCPUUsage, "ghost"));
  CHECK_FALSE(with.last(mc::MetricKind::kHostAppMemoryUsage, "ghost"));
  CHECK_FALSE(with.last(mc::MetricKind::kHostAppCPUUsage, "evil"));
  // The missing app uses nothing; system usage is still written with nginx subtracted.
  REQUIRE(with.last(mc::MetricKind::kSystemCPUUsage, ""));
  CHECK(with.last(mc::MetricKind::kSystemCPUUsage, "")->value == Approx(1.5 - 0.25 - 0.5));

  ResourceCollector c(tree.e, tree.t.path("proc"), with);
  auto stats = c.collect({lsPod()}, h, mc::TimePoint{std::chrono::seconds(1'800'000'005)},
                         std::chrono::steady_clock::time_point{std::chrono::seconds(1005)});
  CHECK(stats.host_apps_collected == 1);
  CHECK(stats.errors == 1);  // ghost's cgroup; a skipped entry is logged, never read
}
