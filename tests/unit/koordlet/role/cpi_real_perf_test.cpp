// The CPI collector on this host's real perf_event_open(2), /sys and cgroup mount: whatever the
// host lacks (a PMU, the perf_event cgroup) is said once, nothing crashes and no fd is left open.
#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <thread>

#include "collector_fixture.h"
#include "koord/cgroup/resource_executor.h"
#include "log_lines.h"
#include "metricsadvisor/collectors/cpi/cpi_collector.h"
#include "metricsadvisor/collectors/cpi/cpi_collector_spec.h"

using namespace koord::roles::koordlet;
using namespace koord::roles::koordlet::testing;
namespace fs = std::filesystem;
namespace mc = koord::roles::koordlet::metriccache;
namespace ma = koord::roles::koordlet::metricsadvisor;

namespace {

std::size_t openFds() {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator("/proc/self/fd"))
    ++n;
  return n;
}

koord::cgroup::CgroupRoot hostCgroups() {
  std::error_code ec;
  const bool v2 = fs::exists("/sys/fs/cgroup/cgroup.controllers", ec);
  return {"/sys/fs/cgroup",
          v2 ? koord::cgroup::CgroupVersion::kV2 : koord::cgroup::CgroupVersion::kV1,
          koord::cgroup::CgroupDriver::kCgroupfs};
}

}  // namespace

TEST_CASE(
    "cpi real: this host's perf_event_open and cgroups give the honest outcome, once, "
    "without leaking an fd",
    "[cpi][real]") {
  const auto root = hostCgroups();
  // What the sysfs and cgroup trees say is missing; the collector asks the kernel itself.
  const std::string missing = ma::cpiMissingInterface("/sys", root);
  const auto pod = collectorPod("6e2b5f4e-2c6a-4f0c-9a51-2d8a1c0f3b7e", 'a');
  koord::testing::LogLines log;
  mc::MetricCache cache;
  koord::metrics::Registry registry;
  const std::size_t fds_before = openFds();
  {
    ma::CPICollector collector({.sys_root = "/sys",
                                .cgroup_root = root,
                                .node_name = "node-1",
                                .window = std::chrono::milliseconds(50),
                                .max_fds = ma::defaultCPIFdBudget()},
                               ma::systemPerfEventApi(), cache, registry);
    std::size_t waits = 0;
    auto wait = [&](std::chrono::milliseconds) {
      ++waits;
      return true;
    };
    const auto now = std::chrono::system_clock::now();
    auto r1 = collector.round({pod}, now, wait);
    auto r2 = collector.round({pod}, now + std::chrono::seconds(1), wait);
    if (!missing.empty()) {
      INFO("missing on this host: " << missing);
      CHECK_FALSE(r1.available);
      CHECK_FALSE(r2.available);
      CHECK(collector.unavailable());
      CHECK(waits == 0);
      CHECK(log.count("container CPI is not collected") == 1);
      CHECK(log.count(missing) == 1);
      std::error_code ec;
      if (!fs::exists(ma::perfEventCgroupRoot(root) / "cgroup.procs", ec))
        CHECK(log.count("perf_event cgroup is not mounted") == 1);
      if (!fs::exists("/sys/bus/event_source/devices/cpu", ec))
        CHECK(log.count("no hardware counters") == 1);
    } else {
      // A host with a PMU and the cgroup: the fake pod has no cgroup, so nothing is measured.
      WARN("this host has a PMU and the perf_event cgroup; outcome: "
           << (r1.available ? "available" : "refused (see log)"));
      CHECK(r1.measured == 0);
      CHECK(log.count("container CPI is not collected") <= 1);
    }
    CHECK(r1.measured == 0);
    CHECK(registry.render().find("koordlet_container_cpi{") == std::string::npos);
  }
  CHECK(openFds() == fds_before);
}

TEST_CASE("cpi real: the collector loop's worker says so once and joins cleanly", "[cpi][real]") {
  koord::testing::LogLines log;
  const std::size_t fds_before = openFds();
  {
    const koord::cgroup::ResourceExecutor cgroups(hostCgroups());
    mc::MetricCache cache;
    koord::metrics::Registry registry;
    KoordletOptions options;
    options.node_name = "node-1";
    options.sys_root_dir = "/sys";
    options.collect_cpi_timewindow = std::chrono::milliseconds(50);
    auto collector = ma::cpiCollector().make(ma::CollectorContext{
        .cgroups = cgroups, .cache = cache, .metrics = registry, .options = options});
    StatesSnapshot s;
    s.pods = std::make_shared<const std::vector<PodMeta>>(
        std::vector<PodMeta>{collectorPod("6e2b5f4e-2c6a-4f0c-9a51-2d8a1c0f3b7e", 'a')});
    s.synced = true;
    const auto expect_refusal = !ma::cpiMissingInterface("/sys", cgroups.root()).empty();
    for (int i = 0; i < 3; ++i) {
      collector->collect(s, std::chrono::system_clock::now(), std::chrono::steady_clock::now());
      // Each round's window ends on the worker; give it time before the next.
      for (int t = 0; t < 100 && expect_refusal && log.count("cpi collector") == 0; ++t)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    if (expect_refusal)
      CHECK(log.count("container CPI is not collected") == 1);
  }  // the worker is joined here
  CHECK(openFds() == fds_before);
}
