#include <catch2/catch.hpp>

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
using koord::apis::QoSClass;
using koord::testing::TempTree;
using namespace std::chrono_literals;

namespace {

constexpr const char* kCfsQuota =
    R"({"enable":true,"cpuSuppressThresholdPercent":65,"cpuSuppressPolicy":"cfsQuota"})";

// Node 3.7 cores busy: the LS pod 1 core, the BE pod 2 cores, the host app 0.5, the system 0.2.
struct Fixture {
  TempTree t{"koord-hostapp-suppress"};
  koord::cgroup::ResourceExecutor e{
      {t.root(), koord::cgroup::CgroupVersion::kV1, koord::cgroup::CgroupDriver::kCgroupfs}};
  mc::MetricCache cache;
  koord::metrics::Registry registry;
  const mc::TimePoint now{std::chrono::seconds(1'800'000'000)};

  Fixture() {
    t.write("cpu/kubepods/besteffort/cpu.cfs_quota_us", "-1");
    t.write("cpu/kubepods/besteffort/cpu.cfs_period_us", "100000");
    t.write("cpuset/kubepods/besteffort/cpuset.cpus", "0-3");
    REQUIRE(cache.append(mc::MetricKind::kNodeCPUUsage, "", now - 1s, 3.7));
    REQUIRE(cache.append(mc::MetricKind::kPodCPUUsage, kLSUid, now - 1s, 1.0));
    REQUIRE(cache.append(mc::MetricKind::kPodCPUUsage, kBEUid, now - 1s, 2.0));
    REQUIRE(cache.append(mc::MetricKind::kHostAppCPUUsage, "app", now - 1s, 0.5));
  }

  qosmanager::CPUSuppressRound run(QoSClass qos, bool under_besteffort, std::string name = "app") {
    auto states = testing::suppressStates("4", kCfsQuota);
    auto slo = std::make_shared<NodeSLOInfo>(*states.node_slo);
    HostApplication a;
    a.name = std::move(name);
    a.qos = qos;
    a.under_kube_besteffort = under_besteffort;
    a.has_cgroup_path = under_besteffort;
    a.base =
        under_besteffort ? HostAppCgroupBase::kKubepodsBesteffort : HostAppCgroupBase::kCgroupRoot;
    slo->host_applications.apps.push_back(a);
    states.node_slo = slo;
    koord::cgroup::CpuTopology topology;
    for (int i = 0; i < 4; ++i)
      topology.cpus.push_back({i, i % 2, 0, 0});
    qosmanager::CPUSuppress s(cache, e, topology, 1000ms, registry);
    return s.runOnce(states, now);
  }
};

}  // namespace

TEST_CASE("cpu suppress: a non-BE host app's usage is taken from the BE budget") {
  Fixture f;
  auto ls = f.run(QoSClass::kLS, false);
  REQUIRE(ls.ran);
  CHECK(ls.calculation.non_be_host_apps_used_milli == 500);
  // 4000 * 65% - 1000 (LS pod) - 500 (LS app) - max(3700 - 3000 - 500, 0 reserved) = 900m.
  CHECK(ls.calculation.system_used_milli == 200);
  CHECK(ls.calculation.suppress_milli == 900);
  CHECK(ls.be_cfs_quota == 90000);

  // The same app as BE inside the besteffort cgroup is BE's own usage: BE keeps 500m more.
  Fixture g;
  auto be = g.run(QoSClass::kBE, true);
  REQUIRE(be.ran);
  CHECK(be.calculation.non_be_host_apps_used_milli == 0);
  CHECK(be.calculation.system_used_milli == 200);
  CHECK(be.calculation.suppress_milli == 1400);
  CHECK(ls.calculation.suppress_milli < be.calculation.suppress_milli);

  // A BE app outside the besteffort cgroup is not suppressed with it, so it counts as non-BE.
  Fixture h;
  CHECK(h.run(QoSClass::kBE, false).calculation.non_be_host_apps_used_milli == 500);
}

TEST_CASE("cpu suppress: a host app without a recent sample is left out of the input") {
  Fixture f;
  auto round = f.run(QoSClass::kLS, false, "quiet");
  REQUIRE(round.ran);
  CHECK(round.calculation.non_be_host_apps_used_milli == 0);
  // Its share is the system's now: 3700 - 3000 = 700m, the same BE budget as before.
  CHECK(round.calculation.system_used_milli == 700);
  CHECK(round.calculation.suppress_milli == 900);
}
