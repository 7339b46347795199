#include <catch2/catch.hpp>

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <map>
#include <set>

#include "catch_expected.h"
#include "collector_fixture.h"
#include "log_lines.h"
#include "metricsadvisor/collectors.h"
#include "metricsadvisor/collectors/cpi/cgroup_cpi_counters.h"
#include "metricsadvisor/collectors/cpi/cpi_collector.h"
#include "metricsadvisor/collectors/cpi/cpi_collector_spec.h"

using namespace koord::roles::koordlet;
using namespace koord::roles::koordlet::testing;
using koord::cgroup::CgroupVersion;
namespace fs = std::filesystem;
namespace mc = koord::roles::koordlet::metriccache;
namespace ma = koord::roles::koordlet::metricsadvisor;
using std::chrono::milliseconds;
using std::chrono::seconds;

namespace {

const std::string kUidA = "6e2b5f4e-2c6a-4f0c-9a51-2d8a1c0f3b7e";
const std::string kUidB = "0123456789abcdef0123456789abcdef";
const std::string kUidC = "7f3c6a5f-3d7b-4a1d-8b62-3e9b2d1a4c8f";

// The kernel's side: fds handed out from a range no real fd reaches, each remembering the
// cgroup directory its cgroup fd was open on (so a test sees which directory was measured), and
// group reads that give `base` x (cpu + 1) cycles and twice that in instructions, base chosen
// by the container ID found in the directory's path.
struct FakePerf final : ma::PerfEventApi {
  struct Counter {
    ma::HwCounter kind;
    std::string cgroup;
    int cpu;
    int group;
  };
  int probe_rc = 0;
  int probes = 0;
  std::size_t opens = 0;
  std::size_t peak = 0;
  std::map<int, Counter> open_fds;
  std::set<std::string> cgroups_seen;
  std::set<int> enabled;
  std::map<char, std::uint64_t> base{{'a', 1000}, {'b', 2000}, {'c', 3000}};
  std::uint64_t time_enabled = 100;
  std::uint64_t time_running = 100;
  // Opens of a cgroup whose path contains fail_path fail with -fail_errno; so does every open
  // once fail_after counters are open.
  std::string fail_path;
  int fail_errno = 0;
  std::size_t fail_after = SIZE_MAX;
  int next_fd = 1'000'000;

  int probe() override {
    ++probes;
    return probe_rc;
  }
  int open(ma::HwCounter kind, int cgroup_fd, int cpu, int group) override {
    ++opens;
    std::error_code ec;
    const std::string path = fs::read_symlink(fmt::format("/proc/self/fd/{}", cgroup_fd), ec);
    if (ec || !fs::is_directory(path))
      return -EBADF;
    if (!fail_path.empty() && path.find(fail_path) != std::string::npos)
      return -fail_errno;
    if (open_fds.size() >= fail_after)
      return -fail_errno;
    if (group >= 0 && !open_fds.contains(group))
      return -EINVAL;
    cgroups_seen.insert(path);
    const int fd = next_fd++;
    open_fds[fd] = {kind, path, cpu, group};
    peak = std::max(peak, open_fds.size());
    return fd;
  }
  int enable(int fd) override {
    if (!open_fds.contains(fd) || open_fds[fd].group != -1)
      return -EINVAL;
    enabled.insert(fd);
    return 0;
  }
  long read(int fd, std::span<std::uint64_t> words) override {
    auto it = open_fds.find(fd);
    if (it == open_fds.end() || words.size() < 5)
      return -EBADF;
    std::uint64_t b = 0;
    for (const auto& [c, v] : base) {
      if (it->second.cgroup.find(std::string(64, c)) != std::string::npos)
        b = v;
    }
    const auto per_cpu = b * static_cast<std::uint64_t>(it->second.cpu + 1);
    words[0] = 2;
    words[1] = time_enabled;
    words[2] = time_running;
    words[3] = per_cpu;
    words[4] = 2 * per_cpu;
    return 40;
  }
  void close(int fd) override {
    if (open_fds.erase(fd) != 1)
      FAIL("closed an fd that was not open: " << fd);
    enabled.erase(fd);
  }
};

std::size_t openFds() {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator("/proc/self/fd"))
    ++n;
  return n;
}

std::size_t metricLines(const koord::metrics::Registry& registry, std::string_view name,
                        const std::vector<std::string>& needles = {}) {
  const std::string text = registry.render();
  std::size_t n = 0;
  std::size_t pos = 0;
  const std::string head = std::string(name) + "{";
  while (pos < text.size()) {
    const auto nl = text.find('\n', pos);
    const auto end = nl == std::string::npos ? text.size() : nl + 1;
    const std::string_view line(text.data() + pos, end - pos);
    pos = end;
    if (!line.starts_with(head))
      continue;
    n += std::all_of(needles.begin(), needles.end(),
                     [&](const auto& s) { return line.find(s) != std::string_view::npos; })
             ? 1
             : 0;
  }
  return n;
}

// A node's sysfs and cgroup trees with the perf_event cgroup mounted (v1: under perf_event/).
struct CPIFixture {
  koord::testing::TempTree tree{"koord-cpi"};
  CgroupVersion version;
  FakePerf perf;
  mc::MetricCache cache;
  koord::metrics::Registry registry;
  ma::CPICollectorConfig config;
  std::unique_ptr<ma::CPICollector> collector;
  mc::TimePoint now{seconds(1'800'000'000)};
  std::vector<milliseconds> waits;
  // Fds open when the window began.
  std::vector<std::size_t> open_in_window;
  bool finish_window = true;

  explicit CPIFixture(CgroupVersion v, std::size_t max_fds = ma::kMaxCPIFds) : version(v) {
    tree.write("sys/devices/system/cpu/online", "0-1\n");
    tree.mkdirs("sys/bus/event_source/devices/cpu");
    tree.write(perfDir() + "cgroup.procs", "");
    config.sys_root = tree.path("sys");
    config.cgroup_root = {tree.path("cgroup"), v, koord::cgroup::CgroupDriver::kCgroupfs};
    config.node_name = "node-1";
    config.window = seconds(10);
    config.max_fds = max_fds;
  }

  std::string perfDir() const {
    return version == CgroupVersion::kV1 ? "cgroup/perf_event/" : "cgroup/";
  }
  // The container's perf_event cgroup directory.
  void addCgroup(const PodMeta& p) const { tree.mkdirs(perfDir() + containerDirOf(p)); }

  ma::CPIRoundReport round(const std::vector<PodMeta>& pods) {
    if (collector == nullptr)
      collector = std::make_unique<ma::CPICollector>(config, perf, cache, registry);
    now += seconds(60);
    return collector->round(pods, now, [this](milliseconds w) {
      waits.push_back(w);
      open_in_window.push_back(perf.open_fds.size());
      return finish_window;
    });
  }

  std::size_t cpi(const std::vector<std::string>& needles = {}) const {
    return metricLines(registry, "koordlet_container_cpi", needles);
  }
};

PodMeta podWith(const std::string& uid, char id) {
  return collectorPod(uid, id);
}

}  // namespace

TEST_CASE("cpi: a group read is scaled by time enabled over time running", "[cpi]") {
  const std::uint64_t multiplexed[] = {2, 300, 100, 10, 20};
  auto r = ma::parseCPIGroupRead(multiplexed, 40);
  REQUIRE(r);
  CHECK(r->cycles == 30);
  CHECK(r->instructions == 60);

  // Never scheduled, or never enabled: the raw counts, as Koordinator takes them.
  const std::uint64_t idle[] = {2, 300, 0, 7, 9};
  auto raw = ma::parseCPIGroupRead(idle, 40);
  REQUIRE(raw);
  CHECK(raw->cycles == 7);
  CHECK(raw->instructions == 9);

  CHECK_FALSE(ma::parseCPIGroupRead(multiplexed, 32));
  const std::uint64_t three[] = {3, 1, 1, 1, 1};
  auto bad = ma::parseCPIGroupRead(three, 40);
  REQUIRE_FALSE(bad);
  CHECK(bad.error().message.find("3 counters") != std::string::npos);
}

TEST_CASE("cpi: a cgroup's counters are a cycles-led group per CPU, opened all or nothing",
          "[cpi]") {
  koord::testing::TempTree tree{"koord-cpi"};
  tree.mkdirs(std::string("cg/") + std::string(64, 'a'));
  const std::string dir = tree.path(std::string("cg/") + std::string(64, 'a')).string();
  const int cgroup_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  REQUIRE(cgroup_fd >= 0);
  FakePerf perf;
  const int cpus[] = {0, 1, 3};
  {
    auto c = ma::CgroupCPICounters::open(perf, cgroup_fd, cpus);
    REQUIRE(c);
    CHECK(c->fds() == 6);
    CHECK(perf.open_fds.size() == 6);
    CHECK(perf.enabled.size() == 3);
    for (const auto& [fd, counter] : perf.open_fds) {
      const bool leader = counter.kind == ma::HwCounter::kCycles;
      CHECK(leader == (counter.group == -1));
      if (!leader)
        CHECK(perf.open_fds.at(counter.group).cpu == counter.cpu);
    }
    auto counts = c->read();
    REQUIRE(counts);
    CHECK(counts->cycles == 1000 * (1 + 2 + 4));
    CHECK(counts->instructions == 2000 * (1 + 2 + 4));
  }
  CHECK(perf.open_fds.empty());

  // The second CPU's instructions counter fails: the three already open close with it.
  perf.fail_after = 3;
  perf.fail_errno = EMFILE;
  auto failed = ma::CgroupCPICounters::open(perf, cgroup_fd, cpus);
  REQUIRE_FALSE(failed);
  CHECK(failed.error().code.value() == EMFILE);
  CHECK(failed.error().message.find("instructions on cpu 1") != std::string::npos);
  CHECK(perf.open_fds.empty());
  ::close(cgroup_fd);
}

TEST_CASE(
    "cpi: a round counts each container in its perf_event cgroup into the cache and "
    "koordlet_container_cpi",
    "[cpi]") {
  const auto version = GENERATE(CgroupVersion::kV1, CgroupVersion::kV2);
  CAPTURE(version == CgroupVersion::kV1 ? "v1" : "v2");
  CPIFixture f(version);
  f.perf.time_enabled = 200;  // multiplexed half the time: counts doubled
  f.perf.time_running = 100;
  const auto a = podWith(kUidA, 'a');
  const auto b = podWith(kUidB, 'b');
  f.addCgroup(a);
  f.addCgroup(b);
  const std::size_t fds_before = openFds();

  auto r = f.round({a, b});
  CHECK(r.available);
  CHECK(r.containers == 2);
  CHECK(r.measured == 2);
  CHECK(r.errors == 0);
  CHECK(r.fds == 8);  // 2 containers x 2 CPUs x 2 counters
  REQUIRE(f.waits == std::vector<milliseconds>{seconds(10)});
  CHECK(f.open_in_window == std::vector<std::size_t>{8});
  CHECK(f.perf.open_fds.empty());
  CHECK(openFds() == fds_before);

  // Each container's own directory, under perf_event/ on v1 only.
  std::set<std::string> want;
  for (const auto* p : {&a, &b})
    want.insert(f.tree.path(f.perfDir() + containerDirOf(*p)).string());
  CHECK(f.perf.cgroups_seen == want);

  // cycles: 1000 x (cpu0: 1 + cpu1: 2) x 2 (scaling); instructions twice that.
  const std::string ida(64, 'a');
  auto cycles = f.cache.last(mc::MetricKind::kContainerCPICycles, ida);
  REQUIRE(cycles);
  CHECK(cycles->value == 6000);
  CHECK(cycles->time == f.now + seconds(10));
  CHECK(f.cache.last(mc::MetricKind::kContainerCPIInstructions, ida)->value == 12000);
  CHECK(f.cache.last(mc::MetricKind::kContainerCPICycles, std::string(64, 'b'))->value == 12000);

  CHECK(f.cpi() == 4);
  CHECK(f.cpi({"node=\"node-1\"", "container_id=\"containerd://" + ida + "\"",
               "container_name=\"app\"", "pod_uid=\"" + kUidA + "\"", "pod_name=\"pod-6e2b\"",
               "pod_namespace=\"ns\"", "cpi_field=\"cycles\"", "} 6000\n"}) == 1);
  CHECK(f.cpi({"container_id=\"containerd://" + ida + "\"", "cpi_field=\"instructions\"",
               "} 12000\n"}) == 1);
}

TEST_CASE("cpi: a pod that left takes its series from /metrics and the cache", "[cpi]") {
  CPIFixture f(CgroupVersion::kV1);
  const auto a = podWith(kUidA, 'a');
  const auto b = podWith(kUidB, 'b');
  f.addCgroup(a);
  f.addCgroup(b);
  REQUIRE(f.round({a, b}).measured == 2);
  const std::string idb(64, 'b');
  REQUIRE(f.cpi({idb}) == 2);
  REQUIRE(f.cache.last(mc::MetricKind::kContainerCPICycles, idb));

  auto r = f.round({a});
  CHECK(r.measured == 1);
  CHECK(f.cpi({idb}) == 0);
  CHECK(f.cpi({std::string(64, 'a')}) == 2);
  CHECK_FALSE(f.cache.last(mc::MetricKind::kContainerCPICycles, idb));
  CHECK_FALSE(f.cache.last(mc::MetricKind::kContainerCPIInstructions, idb));
  CHECK(f.cache.last(mc::MetricKind::kContainerCPICycles, std::string(64, 'a')));

  // No pods at all: nothing opened, nothing waited for, every series gone.
  const auto waits = f.waits.size();
  CHECK(f.round({}).measured == 0);
  CHECK(f.waits.size() == waits);
  CHECK(f.cpi() == 0);
  CHECK_FALSE(f.cache.last(mc::MetricKind::kContainerCPICycles, std::string(64, 'a')));
}

TEST_CASE(
    "cpi: the fd bound cuts a round short, says so once, and the next round measures the "
    "rest",
    "[cpi]") {
  koord::testing::LogLines log;
  // Two CPUs: 4 perf fds a container, plus its directory while they are opened. 10 fit two.
  CPIFixture f(CgroupVersion::kV1, 10);
  const auto a = podWith(kUidA, 'a');
  const auto b = podWith(kUidB, 'b');
  const auto c = podWith(kUidC, 'c');
  for (const auto* p : {&a, &b, &c})
    f.addCgroup(*p);

  auto r1 = f.round({a, b, c});
  CHECK(r1.measured == 2);
  CHECK(r1.left_out == 1);
  CHECK(r1.fds == 8);
  CHECK(f.perf.peak == 8);
  CHECK(f.cpi({std::string(64, 'a')}) == 2);
  CHECK(f.cpi({std::string(64, 'b')}) == 2);
  CHECK(f.cpi({std::string(64, 'c')}) == 0);
  CHECK(log.count("1 of 3 containers left for a later round") == 1);
  CHECK(log.count("bound of 10 perf fds") == 1);

  // The next round starts with the one left out; the same cut is not said again.
  auto r2 = f.round({a, b, c});
  CHECK(r2.measured == 2);
  CHECK(r2.left_out == 1);
  CHECK(f.perf.peak == 8);
  CHECK(f.cpi({std::string(64, 'c')}) == 2);
  CHECK(f.cpi({std::string(64, 'a')}) == 2);
  CHECK(f.cpi({std::string(64, 'b')}) == 0);
  CHECK(log.count("left for a later round") == 1);

  // Every container fits again once one pod is gone: said once.
  CHECK(f.round({a, b}).left_out == 0);
  CHECK(log.count("every container fits the fd bound again") == 1);

  // A bound below one container's fds measures nothing and opens nothing.
  CPIFixture tiny(CgroupVersion::kV1, 4);
  tiny.addCgroup(a);
  auto r3 = tiny.round({a});
  CHECK(r3.measured == 0);
  CHECK(r3.left_out == 1);
  CHECK(tiny.perf.opens == 0);
  CHECK(tiny.waits.empty());
}

TEST_CASE(
    "cpi: a host that cannot count says so once, naming what is missing, and does "
    "nothing more",
    "[cpi]") {
  struct Case {
    const char* name;
    bool pmu;
    bool perf_cgroup;
    std::vector<std::string> named;
  };
  const Case cases[] = {
      {"no PMU",
       false,
       true,
       {"no hardware counters", "No such file or directory", "bus/event_source/devices/cpu"}},
      {"no perf_event cgroup", true, false, {"perf_event cgroup is not mounted", "perf_event"}},
      {"neither", false, false, {"no hardware counters", "perf_event cgroup is not mounted"}},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    koord::testing::LogLines log;
    CPIFixture f(CgroupVersion::kV1);
    if (!c.pmu) {
      f.perf.probe_rc = -ENOENT;
      fs::remove(f.tree.path("sys/bus/event_source/devices/cpu"));
    }
    if (!c.perf_cgroup)
      fs::remove_all(f.tree.path("cgroup/perf_event"));
    const auto a = podWith(kUidA, 'a');
    if (c.perf_cgroup)
      f.addCgroup(a);
    for (int i = 0; i < 3; ++i) {
      auto r = f.round({a});
      CHECK_FALSE(r.available);
      CHECK(r.measured == 0);
    }
    CHECK(f.collector->unavailable());
    CHECK(f.perf.probes == 1);
    CHECK(f.perf.opens == 0);
    CHECK(f.waits.empty());
    CHECK(f.cpi() == 0);
    CHECK(log.count("cpi collector") == 1);
    for (const auto& needle : c.named)
      CHECK(log.count(needle) == 1);
  }
}

TEST_CASE("cpi: a host-wide perf_event_open refusal on the first container stops the collector",
          "[cpi]") {
  const int err = GENERATE(EACCES, EOPNOTSUPP, ENOENT);
  CAPTURE(err);
  koord::testing::LogLines log;
  CPIFixture f(CgroupVersion::kV2);
  const auto a = podWith(kUidA, 'a');
  const auto b = podWith(kUidB, 'b');
  f.addCgroup(a);
  f.addCgroup(b);
  f.perf.fail_path = std::string(64, 'b');
  f.perf.fail_errno = err;
  CHECK_FALSE(f.round({a, b}).available);
  CHECK(f.perf.open_fds.empty());  // a's counters, open already, closed too
  CHECK(f.waits.empty());
  CHECK(f.cpi() == 0);
  const auto opens = f.perf.opens;
  CHECK_FALSE(f.round({a, b}).available);
  CHECK(f.perf.opens == opens);
  CHECK(log.count("container CPI is not collected") == 1);
  CHECK(log.count("pod-0123/app") == 1);
}

TEST_CASE(
    "cpi: a container without a cgroup or whose counters fail is logged once, the others "
    "are measured",
    "[cpi]") {
  koord::testing::LogLines log;
  CPIFixture f(CgroupVersion::kV1);
  const auto a = podWith(kUidA, 'a');
  const auto b = podWith(kUidB, 'b');
  const auto c = podWith(kUidC, 'c');
  f.addCgroup(a);
  f.addCgroup(c);  // b has no cgroup directory
  f.perf.fail_path = std::string(64, 'c');
  f.perf.fail_errno = EINVAL;
  for (int i = 0; i < 2; ++i) {
    auto r = f.round({a, b, c});
    CHECK(r.available);
    CHECK(r.measured == 1);
    CHECK(r.errors == 2);
    CHECK(f.perf.open_fds.empty());
  }
  CHECK(f.cpi({std::string(64, 'a')}) == 2);
  CHECK(log.count("ns/pod-0123/app") == 1);
  CHECK(log.count(std::string(64, 'b')) == 1);  // the path it could not open
  CHECK(log.count("ns/pod-7f3c/app: perf_event_open cycles on cpu 0: Invalid argument") == 1);

  // A bad online list: said once, nothing opened, the series dropped.
  f.tree.write("sys/devices/system/cpu/online", "1-0\n");
  const auto opens = f.perf.opens;
  CHECK(f.round({a}).measured == 0);
  CHECK(f.round({a}).measured == 0);
  CHECK(f.perf.opens == opens);
  CHECK(f.cpi() == 0);
  CHECK(log.count("devices/system/cpu/online") == 1);
}

TEST_CASE("cpi: stopping during the window publishes nothing and leaves no counter open", "[cpi]") {
  CPIFixture f(CgroupVersion::kV2);
  const auto a = podWith(kUidA, 'a');
  f.addCgroup(a);
  f.finish_window = false;
  auto r = f.round({a});
  CHECK(r.stopped);
  CHECK(f.open_in_window == std::vector<std::size_t>{4});
  CHECK(f.perf.open_fds.empty());
  CHECK(f.cpi() == 0);
  CHECK_FALSE(f.cache.last(mc::MetricKind::kContainerCPICycles, std::string(64, 'a')));
}

TEST_CASE("cpi: the feature probe names the missing PMU directory or perf_event cgroup", "[cpi]") {
  koord::testing::TempTree tree{"koord-cpi"};
  const koord::cgroup::CgroupRoot v1{tree.path("cgroup"), CgroupVersion::kV1,
                                     koord::cgroup::CgroupDriver::kCgroupfs};
  const koord::cgroup::CgroupRoot v2{tree.path("cgroup"), CgroupVersion::kV2,
                                     koord::cgroup::CgroupDriver::kSystemd};
  const auto sys = tree.path("sys");
  CHECK(ma::cpiMissingInterface(sys, v1) == (sys / "bus/event_source/devices/cpu").string());
  const char* pmu = GENERATE("cpu", "cpu_core", "armv8_pmuv3_0");
  CAPTURE(pmu);
  tree.mkdirs(std::string("sys/bus/event_source/devices/") + pmu);
  CHECK(ma::cpiMissingInterface(sys, v1) == tree.path("cgroup/perf_event").string());
  CHECK(ma::cpiMissingInterface(sys, v2) == tree.path("cgroup").string());
  tree.write("cgroup/perf_event/cgroup.procs", "");
  tree.write("cgroup/cgroup.procs", "");
  CHECK(ma::cpiMissingInterface(sys, v1).empty());
  CHECK(ma::cpiMissingInterface(sys, v2).empty());
}

TEST_CASE("cpi: the collector table line has Koordinator's gate and interval", "[cpi]") {
  const ma::CollectorSpec* spec = nullptr;
  for (const auto& s : ma::koordletCollectors()) {
    if (s.name == "cpi collector")
      spec = &s;
  }
  REQUIRE(spec != nullptr);
  CHECK(spec->gate == "CPICollector");
  CHECK(spec->wanted == nullptr);
  KoordletOptions o;
  CHECK(spec->interval(o) == seconds(60));
  CHECK(o.collect_cpi_timewindow == seconds(10));
  o.cpi_collector_interval = seconds(5);
  CHECK(spec->interval(o) == seconds(5));
  CHECK(ma::defaultCPIFdBudget() > 0);
  CHECK(ma::defaultCPIFdBudget() <= ma::kMaxCPIFds);
}
