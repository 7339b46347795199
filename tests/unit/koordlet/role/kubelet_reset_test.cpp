// The kubelet resets QoS-tier and pod cgroup values behind the koordlet's back (every minute;
// Koordinator #1734: under systemd, setting the besteffort slice's shares also resets its CFS
// quota to unlimited). The koordlet's reconcilers must put their values back in one round,
// rewrite only what was reset, and leave a converged tree alone. Writes are counted with inotify,
// from the file system, not from what the reconcilers report.
#include <sys/inotify.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "koord/cgroup/kubepods_path.h"
#include "koord/cgroup/resource_executor.h"
#include "metriccache/metric_cache.h"
#include "metricsadvisor/resource_collector.h"
#include "qosmanager/cpusuppress/cpu_suppress.h"
#include "role_fixture.h"
#include "runtimehooks/batchresource/batch_resource.h"
#include "statesinformer/states_snapshot.h"
#include "suppress_states.h"
#include "temp_tree.h"

using namespace koord::roles::koordlet;
using koord::cgroup::CgroupDriver;
using koord::cgroup::CgroupVersion;
using koord::cgroup::Resource;
using koord::roles::koordlet::testing::kBEUid;
using koord::roles::koordlet::testing::kLSUid;
namespace fs = std::filesystem;
namespace mc = koord::roles::koordlet::metriccache;
using namespace std::chrono_literals;

namespace {

// The files written under a tree since the last take(), each with how often: a file written twice
// in one round is a flip-flop even if it ends where it started.
class WriteWatch {
 public:
  explicit WriteWatch(const fs::path& root)
      : root_(root), fd_(::inotify_init1(IN_NONBLOCK | IN_CLOEXEC)) {
    REQUIRE(fd_ >= 0);
    add(root);
    for (const auto& entry : fs::recursive_directory_iterator(root)) {
      if (entry.is_directory())
        add(entry.path());
    }
  }
  ~WriteWatch() { ::close(fd_); }
  WriteWatch(const WriteWatch&) = delete;
  WriteWatch& operator=(const WriteWatch&) = delete;

  std::map<std::string, int> take() {
    std::map<std::string, int> written;
    alignas(inotify_event) char buf[64 * 1024];
    while (true) {
      auto n = ::read(fd_, buf, sizeof buf);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        break;
      for (char* p = buf; p < buf + n;) {
        const auto* ev = reinterpret_cast<const inotify_event*>(p);
        if ((ev->mask & IN_CLOSE_WRITE) != 0 && ev->len > 0)
          ++written[fs::relative(dirs_.at(ev->wd) / ev->name, root_).string()];
        p += sizeof(inotify_event) + ev->len;
      }
    }
    return written;
  }

 private:
  void add(const fs::path& dir) {
    int wd = ::inotify_add_watch(fd_, dir.c_str(), IN_CLOSE_WRITE);
    REQUIRE(wd >= 0);
    dirs_[wd] = dir;
  }

  fs::path root_;
  int fd_;
  std::map<int, fs::path> dirs_;
};

std::map<std::string, std::string> contents(const fs::path& root) {
  std::map<std::string, std::string> out;
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    if (!entry.is_regular_file())
      continue;
    std::ifstream in(entry.path());
    std::ostringstream text;
    text << in.rdbuf();
    out[fs::relative(entry.path(), root).string()] = text.str();
  }
  return out;
}

// A BE pod with batch resources (BatchResource's) whose usage the suppression formula counts.
PodMeta batchPod() {
  return testing::batchResourcePod("batch", "hog", kBEUid);
}

koord::cgroup::CpuTopology fourCpus() {
  koord::cgroup::CpuTopology t;
  for (int i = 0; i < 4; ++i)
    t.cpus.push_back({i, i % 2, 0, 0});
  return t;
}

// A node's cgroups, the kubelet that owns them, and the koordlet's two reconcilers of CFS values:
// CPU suppression (the besteffort tier's quota) and BatchResource (the BE pod's and containers').
struct Node {
  koord::testing::TempTree t{"koord-kubelet-reset"};
  PodMeta pod = batchPod();  // before pod_dir, which is made from it
  CgroupVersion version;
  CgroupDriver driver;
  koord::cgroup::ResourceExecutor e;
  std::string tier;
  std::string pod_dir;
  std::vector<std::string> containers;
  StatesSnapshot states;
  mc::MetricCache cache;
  koord::metrics::Registry registry;
  const mc::TimePoint now{std::chrono::seconds(1'800'000'000)};
  std::unique_ptr<qosmanager::CPUSuppress> suppress;

  Node(CgroupVersion v, CgroupDriver d)
      : version(v),
        driver(d),
        e({t.root(), v, d}),
        tier(koord::cgroup::qosTierDir(d, koord::cgroup::QoSTier::kBestEffort)),
        pod_dir(podCgroupDir(d, pod).value()) {
    for (const auto& c : pod.containers)
      containers.push_back(koord::cgroup::containerDir(d, pod_dir, c.runtime, c.id).value());
    if (v == CgroupVersion::kV2)
      t.write("cgroup.controllers", "cpuset cpu io memory pids\n");
    for (const auto& dir : dirs()) {
      file(dir, Resource::kCpusetCpus, "0-3\n");
      if (v == CgroupVersion::kV1)
        file(dir, Resource::kCpuCfsPeriod, "100000\n");
    }
    kubelet();
    // Node 3.2 cores busy: the LS pod 1 core, the BE pod 2 cores, 0.2 for the system.
    REQUIRE(cache.append(mc::MetricKind::kNodeCPUUsage, "", now - 1s, 3.2));
    REQUIRE(cache.append(mc::MetricKind::kPodCPUUsage, kLSUid, now - 1s, 1.0));
    REQUIRE(cache.append(mc::MetricKind::kPodCPUUsage, kBEUid, now - 1s, 2.0));
    states = testing::suppressStates(
        "4", R"({"enable":true,"cpuSuppressThresholdPercent":65,"cpuSuppressPolicy":"cfsQuota"})");
    auto pods = *states.pods;
    pods.back() = pod;
    states.pods = std::make_shared<std::vector<PodMeta>>(std::move(pods));
    suppress = std::make_unique<qosmanager::CPUSuppress>(cache, e, fourCpus(), 1000ms, registry);
  }

  std::vector<std::string> dirs() const {
    std::vector<std::string> out{tier, pod_dir};
    out.insert(out.end(), containers.begin(), containers.end());
    return out;
  }
  void file(const std::string& dir, Resource r, const std::string& raw) const {
    const auto path = e.pathOf(dir, r);
    fs::create_directories(path.parent_path());
    std::ofstream(path) << raw;
  }

  // What the kubelet writes: the besteffort tier's minimum shares, and for a BestEffort pod (no
  // CPU or memory limits of its own) minimum shares, no quota, no memory limit, down to the
  // containers. `tier_quota` is #1734: systemd resets the slice's quota along with its shares.
  void kubelet(bool tier_quota = true, bool pod_values = true) const {
    const bool v1 = version == CgroupVersion::kV1;
    file(tier, Resource::kCpuShares, v1 ? "2\n" : "1\n");
    if (tier_quota)
      file(tier, Resource::kCpuCfsQuota, v1 ? "-1\n" : "max 100000\n");
    if (!pod_values)
      return;
    for (const auto& dir : dirs()) {
      if (dir == tier)
        continue;
      file(dir, Resource::kCpuShares, v1 ? "2\n" : "1\n");
      file(dir, Resource::kCpuCfsQuota, v1 ? "-1\n" : "max 100000\n");
      file(dir, Resource::kMemoryLimit, v1 ? "9223372036854771712\n" : "max\n");
    }
  }

  // One reconcile round as the koordlet runs them: suppression, then BatchResource.
  void round() {
    REQUIRE(suppress->runOnce(states, now).ran);
    auto stats = applyBatchResource(e, pod, planBatchResource(pod).value());
    CHECK(stats.errors.empty());
    CHECK(stats.refused == 0);
  }
  std::string read(const std::string& dir, Resource r) const { return e.read(dir, r).value(); }
};

void convergesAfterEveryReset(CgroupVersion version, CgroupDriver driver) {
  Node node(version, driver);
  WriteWatch watch(node.t.root());

  // From the kubelet's values to koord's, then nothing to do.
  node.round();
  const auto first = watch.take();
  CHECK(first.size() == 10);  // the tier's quota, 3 values in each of 3 cgroups
  for (const auto& [path, times] : first) {
    INFO(path);
    CHECK(times == 1);
  }
  const auto converged = contents(node.t.root());
  // 4000 * 65% - 1000 (LS) - 200 (system) = 1400m on the tier; the pod's batch-cpu limit of
  // 2.5 cores and container a's of 2 are held within it, container b's 0.5 is not touched.
  CHECK(node.read(node.tier, Resource::kCpuCfsQuota) == "140000");
  CHECK(node.read(node.pod_dir, Resource::kCpuCfsQuota) == "140000");
  CHECK(node.read(node.containers[0], Resource::kCpuCfsQuota) == "140000");
  CHECK(node.read(node.containers[1], Resource::kCpuCfsQuota) == "50000");
  CHECK(node.read(node.pod_dir, Resource::kMemoryLimit) == std::to_string((5LL << 30) / 2));
  for (int quiet = 0; quiet < 3; ++quiet) {
    node.round();
    CHECK(watch.take().empty());
  }

  struct Reset {
    const char* what;
    bool tier_quota;
    bool pod_values;
  };
  // Each reset comes back, minute after minute: the tier's quota alone (#1734), the pod's values
  // alone, both.
  const Reset resets[] = {{"the tier's quota", true, false},
                          {"the pod's and containers' values", false, true},
                          {"everything", true, true},
                          {"the tier's quota again", true, false},
                          {"only unchanged values", false, false}};
  for (const auto& reset : resets) {
    INFO(reset.what);
    node.kubelet(reset.tier_quota, reset.pod_values);
    watch.take();  // the kubelet's own writes
    std::map<std::string, int> expected;
    const auto after_reset = contents(node.t.root());
    for (const auto& [path, content] : converged) {
      if (after_reset.at(path) != content)
        expected[path] = 1;
    }
    // Restored in one round, each reset file written once, no other file touched.
    node.round();
    CHECK(watch.take() == expected);
    CHECK(contents(node.t.root()) == converged);
    // And no flip-flop afterwards.
    for (int quiet = 0; quiet < 2; ++quiet) {
      node.round();
      CHECK(watch.take().empty());
    }
  }
}

}  // namespace

TEST_CASE("kubelet resets come back in one round, only reset files are rewritten (v1 cgroupfs)") {
  convergesAfterEveryReset(CgroupVersion::kV1, CgroupDriver::kCgroupfs);
}

TEST_CASE("kubelet resets come back in one round, only reset files are rewritten (v2 systemd)") {
  convergesAfterEveryReset(CgroupVersion::kV2, CgroupDriver::kSystemd);
}
