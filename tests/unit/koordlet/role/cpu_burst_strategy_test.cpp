// The CPUBurst strategy on fake cgroup v1 and v2 trees: bursts at container and pod level, a
// throttled container's quota raised step by step while the share pool is idle and lowered when
// it is overloaded, back to the limit when the policy is off, and nothing written for BE and LSR
// pods, containers without a limit, bad annotations or a bad NodeSLO.
#include <boost/json/parse.hpp>

#include <catch2/catch.hpp>

#include "catch_expected.h"

#include <fmt/format.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "koord/cgroup/cgroup_reader.h"
#include "koord/cgroup/kubepods_path.h"
#include "koord/cgroup/resource_executor.h"
#include "metriccache/metric_cache.h"
#include "metricsadvisor/resource_collector.h"
#include "qos_strategy_modules.h"
#include "qosmanager/cpuburst/cpu_burst.h"
#include "qosmanager/cpuburst/cpu_burst_plugin.h"
#include "statesinformer/states_snapshot.h"
#include "temp_tree.h"

using namespace koord::roles::koordlet;
using namespace koord::roles::koordlet::qosmanager;
using koord::cgroup::CgroupVersion;
using koord::cgroup::Resource;
using koord::testing::TempTree;
namespace mc = koord::roles::koordlet::metriccache;
using namespace std::chrono_literals;

namespace {

constexpr const char* kWebUid = "0a1b2c3d-0000-4000-8000-000000000001";
constexpr const char* kFreeUid = "0a1b2c3d-0000-4000-8000-000000000002";
constexpr const char* kBEUid = "0a1b2c3d-0000-4000-8000-000000000003";
constexpr const char* kLSRUid = "0a1b2c3d-0000-4000-8000-000000000004";
constexpr const char* kDoneUid = "0a1b2c3d-0000-4000-8000-000000000005";

ContainerMeta container(std::string name, char id, const char* cpu_limit) {
  ContainerMeta c;
  c.name = std::move(name);
  c.runtime = "containerd";
  c.id = std::string(64, id);
  if (cpu_limit != nullptr)
    c.limits.emplace("cpu", koord::kube::Quantity::parse(cpu_limit).value());
  return c;
}

PodMeta pod(const char* name, const char* uid, const char* qos_label, koord::apis::KubeQoS kube_qos,
            std::vector<ContainerMeta> containers, PodPhase phase = PodPhase::kRunning) {
  PodMeta p;
  p.namespace_ = "default";
  p.name = name;
  p.uid = uid;
  p.phase = phase;
  p.kube_qos = kube_qos;
  if (qos_label != nullptr)
    p.labels["koordinator.sh/qosClass"] = qos_label;
  p.qos = koord::apis::podQoSClassWithDefault(p.labels, kube_qos);
  p.containers = std::move(containers);
  return p;
}

// web (LS): c1 1 core, c2 500m, pod quota their sum. free (no label, Burstable): one container
// without a limit. hog (BE) and db (LSR) with limits, done (LS, Succeeded): never touched.
std::vector<PodMeta> nodePods() {
  using koord::apis::KubeQoS;
  return {
      pod("web", kWebUid, "LS", KubeQoS::kBurstable,
          {container("c1", '1', "1"), container("c2", '2', "500m")}),
      pod("free", kFreeUid, nullptr, KubeQoS::kBurstable, {container("c3", '3', nullptr)}),
      pod("hog", kBEUid, "BE", KubeQoS::kBurstable, {container("c4", '4', "1")}),
      pod("db", kLSRUid, "LSR", KubeQoS::kGuaranteed, {container("c5", '5', "1")}),
      pod("done", kDoneUid, "LS", KubeQoS::kBurstable, {container("c6", '6', "1")},
          PodPhase::kSucceeded),
  };
}

StatesSnapshot snapshot(const char* strategy, std::vector<PodMeta> pods = nodePods()) {
  auto slo = std::make_shared<NodeSLOInfo>();
  if (strategy != nullptr)
    slo->cpu_burst_strategy =
        std::make_shared<const boost::json::object>(boost::json::parse(strategy).as_object());
  auto s = koord::roles::koordlet::testing::syncedSnapshot(std::move(slo));
  auto node = std::make_shared<NodeInfo>();
  node->name = "node-a";
  node->capacity.emplace("cpu", koord::kube::Quantity::parse("4").value());
  s.node = node;
  s.pods = std::make_shared<const std::vector<PodMeta>>(std::move(pods));
  return s;
}

// A cgroup tree in the layout the kubelet makes: v1 with cgroupfs, v2 with systemd.
struct Tree {
  explicit Tree(CgroupVersion v, bool burst_files = true)
      : version(v),
        cgroups({t.path("cgroup"), v,
                 v == CgroupVersion::kV1 ? koord::cgroup::CgroupDriver::kCgroupfs
                                         : koord::cgroup::CgroupDriver::kSystemd}),
        burst_files_(burst_files) {
    if (v == CgroupVersion::kV2)
      t.write("cgroup/cgroup.controllers", "cpuset cpu io memory pids\n");
    for (const auto& p : nodePods()) {
      std::int64_t pod_quota = 0;
      for (const auto& c : p.containers) {
        const auto q = c.limits.empty() ? -1 : c.limits.at("cpu").milliValue() * 100;
        pod_quota = (pod_quota < 0 || q < 0) ? -1 : pod_quota + q;
        make(containerDir(p, c), q);
      }
      make(podDir(p), pod_quota);
    }
  }

  std::string podDir(const PodMeta& p) const {
    return podCgroupDir(cgroups.root().driver, p).value();
  }
  std::string containerDir(const PodMeta& p, const ContainerMeta& c) const {
    return koord::cgroup::containerDir(cgroups.root().driver, podDir(p), c.runtime, c.id).value();
  }
  std::string file(const std::string& dir, const char* v1, const char* v2) const {
    return version == CgroupVersion::kV1 ? fmt::format("cgroup/cpu/{}/{}", dir, v1)
                                         : fmt::format("cgroup/{}/{}", dir, v2);
  }

  void make(const std::string& dir, std::int64_t quota) const {
    if (version == CgroupVersion::kV1) {
      t.write(file(dir, "cpu.cfs_quota_us", ""), fmt::format("{}\n", quota));
      t.write(file(dir, "cpu.cfs_period_us", ""), "100000\n");
    } else {
      t.write(file(dir, "", "cpu.max"),
              fmt::format("{} 100000\n", quota < 0 ? "max" : std::to_string(quota)));
    }
    if (burst_files_)
      t.write(file(dir, "cpu.cfs_burst_us", "cpu.max.burst"), "0\n");
    throttle(dir, 0, 0);
  }
  void throttle(const std::string& dir, std::uint64_t periods, std::uint64_t throttled) const {
    const std::string extra = version == CgroupVersion::kV1 ? "throttled_time" : "throttled_usec";
    t.write(file(dir, "cpu.stat", "cpu.stat"),
            fmt::format("nr_periods {}\nnr_throttled {}\n{} 0\n", periods, throttled, extra));
  }

  std::int64_t quota(const std::string& dir) const {
    return koord::cgroup::readInt64(cgroups, dir, Resource::kCpuCfsQuota).value();
  }
  std::string burst(const std::string& dir) const {
    std::string v = t.read(file(dir, "cpu.cfs_burst_us", "cpu.max.burst"));
    while (!v.empty() && v.back() == '\n')
      v.pop_back();
    return v;
  }

  TempTree t{"koord-cpuburst"};
  CgroupVersion version;
  koord::cgroup::ResourceExecutor cgroups;
  mc::MetricCache cache;
  koord::cgroup::CpuTopology topology;  // empty: the node's capacity (4) counts

 private:
  bool burst_files_;
};

const char* versionName(CgroupVersion v) {
  return v == CgroupVersion::kV1 ? "cgroup v1" : "cgroup v2";
}

}  // namespace

TEST_CASE("cpu burst: limit x cpuBurstPercent at container and pod level, v1 and v2",
          "[koordlet][cpuburst]") {
  const auto version = GENERATE(CgroupVersion::kV1, CgroupVersion::kV2);
  INFO(versionName(version));
  Tree tree(version);
  CPUBurst burst(tree.cache, tree.cgroups, tree.topology, {});
  const auto pods = nodePods();
  const auto& web = pods[0];
  auto now = std::chrono::system_clock::now();

  auto round = burst.runOnce(snapshot(R"({"policy":"cpuBurstOnly","cpuBurstPercent":50})"), now);
  REQUIRE(round.ran);
  CHECK(round.errors.empty());
  CHECK(round.pods == 2);  // web and free
  CHECK(round.burst_written == 3);
  CHECK(round.burst_capped == 0);
  CHECK(tree.burst(tree.containerDir(web, web.containers[0])) == "50000");
  CHECK(tree.burst(tree.containerDir(web, web.containers[1])) == "25000");
  CHECK(tree.burst(tree.podDir(web)) == "75000");
  // Without a limit, BE, LSR or finished: nothing.
  for (std::size_t i = 1; i < pods.size(); ++i) {
    INFO(pods[i].name);
    CHECK(tree.burst(tree.podDir(pods[i])) == "0");
    CHECK(tree.burst(tree.containerDir(pods[i], pods[i].containers[0])) == "0");
  }
  // Quotas are cpuBurstOnly's to leave alone.
  CHECK(tree.quota(tree.containerDir(web, web.containers[0])) == 100000);
  CHECK(round.quota_written == 0);

  // The same again writes nothing.
  round = burst.runOnce(snapshot(R"({"policy":"cpuBurstOnly","cpuBurstPercent":50})"), now += 1s);
  CHECK(round.burst_written == 0);

  // Koordinator's default 1000% is more than the kernel takes: held to each cgroup's quota.
  round = burst.runOnce(snapshot(R"({"policy":"auto"})"), now += 1s);
  CHECK(round.errors.empty());
  // Each container capped; the pod's sum of them is within its own quota already.
  CHECK(round.burst_capped == 2);
  CHECK(tree.burst(tree.containerDir(web, web.containers[0])) == "100000");
  CHECK(tree.burst(tree.containerDir(web, web.containers[1])) == "50000");
  CHECK(tree.burst(tree.podDir(web)) == "150000");

  // Off again: every burst back to 0.
  round = burst.runOnce(snapshot(R"({"policy":"none"})"), now += 1s);
  CHECK(round.burst_written == 3);
  CHECK(tree.burst(tree.containerDir(web, web.containers[0])) == "0");
  CHECK(tree.burst(tree.podDir(web)) == "0");
}

TEST_CASE("cpu burst: a kernel without the burst file gets none, and quotas still burst",
          "[koordlet][cpuburst]") {
  const auto version = GENERATE(CgroupVersion::kV1, CgroupVersion::kV2);
  INFO(versionName(version));
  Tree tree(version, /*burst_files=*/false);
  CPUBurst burst(tree.cache, tree.cgroups, tree.topology, {});
  const auto web = nodePods()[0];
  const auto c1 = tree.containerDir(web, web.containers[0]);
  auto now = std::chrono::system_clock::now();
  REQUIRE(tree.cache.append(mc::MetricKind::kNodeCPUUsage, "", now, 0.5));
  auto round = burst.runOnce(snapshot(R"({"policy":"auto"})"), now);
  CHECK(round.ran);
  CHECK(round.burst_unsupported);
  CHECK(round.burst_written == 0);
  CHECK(round.errors.empty());
  CHECK_FALSE(
      std::filesystem::exists(tree.t.path(tree.file(c1, "cpu.cfs_burst_us", "cpu.max.burst"))));
  // Throttled since the last round, on an idle node: up by a step.
  tree.throttle(c1, 100, 40);
  now += 10s;
  REQUIRE(tree.cache.append(mc::MetricKind::kNodeCPUUsage, "", now, 0.5));
  round = burst.runOnce(snapshot(R"({"policy":"auto"})"), now);
  CHECK(tree.quota(c1) == 120000);
  // The policy asks for no burst: the missing file is not a problem to report.
  round = burst.runOnce(snapshot(R"({"policy":"cfsQuotaBurstOnly"})"), now += 10s);
  CHECK_FALSE(round.burst_unsupported);
}

TEST_CASE(
    "cpu burst: a throttled container's quota rises to the ceiling while the node is idle, "
    "falls when overloaded, and returns to the limit when the policy is off",
    "[koordlet][cpuburst]") {
  const auto version = GENERATE(CgroupVersion::kV1, CgroupVersion::kV2);
  INFO(versionName(version));
  Tree tree(version);
  CPUBurst burst(tree.cache, tree.cgroups, tree.topology, {});
  const auto pods = nodePods();
  const auto& web = pods[0];
  const auto pod_dir = tree.podDir(web);
  const auto c1 = tree.containerDir(web, web.containers[0]);
  const auto c2 = tree.containerDir(web, web.containers[1]);
  const auto be = tree.containerDir(pods[2], pods[2].containers[0]);
  const auto lsr = tree.containerDir(pods[3], pods[3].containers[0]);
  const char* kPolicy = R"({"policy":"cfsQuotaBurstOnly"})";

  auto now = std::chrono::system_clock::now();
  std::uint64_t periods = 0;
  std::uint64_t throttled = 0;
  // One round, 10 s after the last (past the usage window), with the node at `node_cores` of its
  // 4 CPUs; c1 (and the BE and LSR containers) throttled in a quarter of the periods since, c2
  // never.
  auto round = [&](double node_cores, const char* policy) {
    now += 10s;
    periods += 100;
    throttled += 25;
    for (const auto& dir : {c1, be, lsr})
      tree.throttle(dir, periods, throttled);
    tree.throttle(c2, periods, 0);
    REQUIRE(tree.cache.append(mc::MetricKind::kNodeCPUUsage, "", now, node_cores));
    return burst.runOnce(snapshot(policy), now);
  };

  // The first round only takes the counters in.
  auto r = round(0.5, kPolicy);
  CHECK(r.node_state == NodeBurstState::kIdle);
  CHECK(r.scaled.empty());
  CHECK(tree.quota(c1) == 100000);

  const std::int64_t up[] = {120000, 144000, 172800, 207360, 248832, 298598, 300000};
  for (std::int64_t want : up) {
    INFO("to " << want);
    r = round(0.5, kPolicy);
    CHECK(r.errors.empty());
    CHECK(tree.quota(c1) == want);
    // The pod's quota moves with its container's.
    CHECK(tree.quota(pod_dir) == want + 50000);
    CHECK(tree.quota(c2) == 50000);
  }
  // At the ceiling (300%), nothing more.
  r = round(0.5, kPolicy);
  CHECK(r.scaled.empty());
  CHECK(tree.quota(c1) == 300000);
  // BE and LSR containers, throttled all along, were never raised.
  CHECK(tree.quota(be) == 100000);
  CHECK(tree.quota(lsr) == 100000);

  // Cooling (1.85 of 4 cores: between 90% of the 50% threshold and it): held.
  r = round(1.85, kPolicy);
  CHECK(r.node_state == NodeBurstState::kCooling);
  CHECK(tree.quota(c1) == 300000);

  // Overloaded (3 of 4 cores): down by steps to the limit's quota, throttled or not.
  const std::int64_t down[] = {240000, 192000, 153600, 122880, 100000, 100000};
  for (std::int64_t want : down) {
    INFO("down to " << want);
    r = round(3.0, kPolicy);
    CHECK(r.node_state == NodeBurstState::kOverload);
    CHECK(tree.quota(c1) == want);
    CHECK(tree.quota(pod_dir) == want + 50000);
  }

  // Up again, then the policy turned off: straight back to the original quotas.
  round(0.5, kPolicy);
  round(0.5, kPolicy);
  CHECK(tree.quota(c1) == 144000);
  r = round(0.5, R"({"policy":"cpuBurstOnly"})");
  REQUIRE(r.scaled.size() == 1);
  CHECK(r.scaled[0].operation == CfsOperation::kReset);
  CHECK(r.scaled[0].container == "default/web/c1");
  CHECK(tree.quota(c1) == 100000);
  CHECK(tree.quota(pod_dir) == 150000);
  CHECK(tree.quota(c2) == 50000);

  // Without the node's usage the state is unknown: nothing is raised.
  now += 10s;
  periods += 100;
  throttled += 50;
  tree.throttle(c1, periods, throttled);
  r = burst.runOnce(snapshot(kPolicy), now);
  CHECK(r.node_state == NodeBurstState::kUnknown);
  CHECK(tree.quota(c1) == 100000);
}

TEST_CASE("cpu burst: the limiter takes a raised quota down once its tokens are spent",
          "[koordlet][cpuburst]") {
  Tree tree(CgroupVersion::kV1);
  CPUBurst burst(tree.cache, tree.cgroups, tree.topology,
                 {.reconcile_interval = 1000ms,
                  .collect_interval = 1000ms,
                  .limiter_init_ratio = [] { return 0.5; }});
  const auto web = nodePods()[0];
  const auto c1 = tree.containerDir(web, web.containers[0]);
  const auto& c1_id = web.containers[0].id;
  auto now = std::chrono::system_clock::now();
  std::uint64_t n = 0;
  // 10 s at up to 300%: 2000 percent-seconds, starting half full.
  const char* kPolicy = R"({"policy":"cfsQuotaBurstOnly","cfsQuotaBurstPeriodSeconds":10})";
  auto round = [&](double used_cores) {
    now += 10s;
    n += 100;
    tree.throttle(c1, n, n / 2);
    REQUIRE(tree.cache.append(mc::MetricKind::kNodeCPUUsage, "", now, 0.5));
    REQUIRE(tree.cache.append(mc::MetricKind::kContainerCPUUsage, c1_id, now, used_cores));
    return burst.runOnce(snapshot(kPolicy), now);
  };
  round(1.0);  // counters taken in; 1000 tokens
  round(1.2);  // 10 s at 120%: 800 left, raised
  CHECK(tree.quota(c1) == 120000);
  round(1.2);  // 600 left
  CHECK(tree.quota(c1) == 144000);
  round(1.5);  // 10 s at 150%: 100 left
  CHECK(tree.quota(c1) == 172800);
  auto r = round(1.5);  // spent: down though throttled and idle
  REQUIRE(r.scaled.size() == 1);
  CHECK(r.scaled[0].operation == CfsOperation::kScaleDown);
  CHECK(tree.quota(c1) == 138240);
  // Well below the limit for a while saves tokens again.
  round(0.1);  // +900: 500
  CHECK(tree.quota(c1) == 165888);
}

TEST_CASE("cpu burst: a pod's annotation overrides the node; a bad one leaves the pod alone",
          "[koordlet][cpuburst]") {
  Tree tree(CgroupVersion::kV1);
  CPUBurst burst(tree.cache, tree.cgroups, tree.topology, {});
  auto pods = nodePods();
  const auto web_c1 = tree.containerDir(pods[0], pods[0].containers[0]);
  // A second LS pod, its own burst asked for on a node whose policy is none.
  constexpr const char* kApiUid = "0a1b2c3d-0000-4000-8000-000000000006";
  auto api =
      pod("api", kApiUid, "LS", koord::apis::KubeQoS::kBurstable, {container("c7", '7', "2")});
  api.annotations["koordinator.sh/cpuBurst"] = R"({"policy":"cpuBurstOnly","cpuBurstPercent":20})";
  tree.make(tree.containerDir(api, api.containers[0]), 200000);
  tree.make(tree.podDir(api), 200000);
  pods.push_back(api);
  auto now = std::chrono::system_clock::now();
  auto r = burst.runOnce(snapshot(R"({"policy":"none"})", pods), now);
  CHECK(r.errors.empty());
  CHECK(tree.burst(tree.containerDir(api, api.containers[0])) == "40000");
  CHECK(tree.burst(tree.podDir(api)) == "40000");

  // Unreadable: the pod keeps what it has, while the node's policy reaches the others.
  pods.back().annotations["koordinator.sh/cpuBurst"] = R"({"policy":"cpuBurstOnly",)";
  r = burst.runOnce(snapshot(R"({"policy":"cpuBurstOnly","cpuBurstPercent":10})", pods), now += 1s);
  CHECK(r.pods == 2);
  CHECK(tree.burst(tree.containerDir(api, api.containers[0])) == "40000");
  CHECK(tree.burst(web_c1) == "10000");
}

TEST_CASE("cpu burst: a bad or missing NodeSLO strategy writes nothing", "[koordlet][cpuburst]") {
  Tree tree(CgroupVersion::kV1);
  CPUBurst burst(tree.cache, tree.cgroups, tree.topology, {});
  const auto web = nodePods()[0];
  const auto c1 = tree.containerDir(web, web.containers[0]);
  auto now = std::chrono::system_clock::now();
  struct Case {
    const char* strategy;
    const char* says;
  };
  const Case cases[] = {
      {nullptr, "no NodeSLO cpuBurstStrategy"},
      {R"({"policy":"cpuBurstOnly","cpuBurstPercent":0})", "cpuBurstStrategy.cpuBurstPercent"},
      {R"({"policy":"turbo"})", "cpuBurstStrategy.policy"},
      {R"({"policy":"auto","sharePoolThresholdPercent":"50"})", "sharePoolThresholdPercent"},
  };
  for (const auto& c : cases) {
    INFO((c.strategy ? c.strategy : "(none)"));
    auto r = burst.runOnce(snapshot(c.strategy), now += 1s);
    CHECK_FALSE(r.ran);
    CHECK_THAT(r.skipped_because, Catch::Contains(c.says));
    CHECK(tree.burst(c1) == "0");
  }
  // Not synced yet: skipped too.
  auto unsynced = snapshot(R"({"policy":"auto"})");
  unsynced.synced = false;
  CHECK_FALSE(burst.runOnce(unsynced, now += 1s).ran);
  CHECK(tree.burst(c1) == "0");
}

TEST_CASE("cpu burst: the strategy's table line, gate and interval", "[koordlet][cpuburst]") {
  TempTree t("koord-cpuburst");
  koord::roles::koordlet::testing::StrategyModules m(t.path("cgroup"));
  m.options.reconcile_interval_seconds = 3;
  const auto spec = cpuBurstStrategy();
  CHECK(spec.name == "cpu burst");
  CHECK(spec.gate == "CPUBurst");
  CHECK(spec.interval(m.options) == 3s);
  const auto web = nodePods()[0];
  const std::string pod_dir = fmt::format("cgroup/cpu/kubepods/burstable/pod{}", kWebUid);
  const std::string c1 = pod_dir + "/" + web.containers[0].id;
  t.write(pod_dir + "/cpu.cfs_quota_us", "150000\n");
  t.write(pod_dir + "/cpu.cfs_burst_us", "0\n");
  t.write(c1 + "/cpu.cfs_quota_us", "100000\n");
  t.write(c1 + "/cpu.cfs_burst_us", "0\n");
  t.write(c1 + "/cpu.stat", "nr_periods 0\nnr_throttled 0\nthrottled_time 0\n");
  auto strategy = spec.make(m.context());
  REQUIRE(strategy);
  strategy->runOnce(snapshot(R"({"policy":"cpuBurstOnly","cpuBurstPercent":30})", {web}),
                    std::chrono::system_clock::now());
  CHECK(t.read(c1 + "/cpu.cfs_burst_us") == "30000");
  CHECK(t.read(pod_dir + "/cpu.cfs_burst_us") == "30000");
}
