// Resctrl on fake resctrl and cgroup trees: the LSR, LS and BE groups created, each class's
// schemata on one and two cache ids, the enabled classes' threads moved into their groups, no
// write at all where resctrl is not mounted or the NodeSLO is bad, and the collector's mon_data.
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

#include "koord/cgroup/resource_executor.h"
#include "koord/core/metrics.h"
#include "qos_strategy_modules.h"
#include "qosmanager/resctrl/resctrl_collector.h"
#include "qosmanager/resctrl/resctrl_fs.h"
#include "qosmanager/resctrl/resctrl_reconcile.h"
#include "statesinformer/states_snapshot.h"
#include "temp_tree.h"

using namespace koord::roles::koordlet;
using namespace koord::roles::koordlet::qosmanager;
using koord::testing::TempTree;
namespace fs = std::filesystem;

namespace {

constexpr const char* kBEUid = "11111111-2222-3333-4444-555555555555";
constexpr const char* kLSUid = "66666666-7777-8888-9999-000000000000";

ResctrlQOSStrategy decode(std::string_view text) {
  return decodeResctrlQOSStrategy(boost::json::parse(text).as_object()).value();
}

// A mounted resctrl with L3 CAT and MBA on `ids` (MB unlimited is 100 on Intel, 2048 on AMD),
// and the three groups as the kernel makes them (each group's schemata starts as the root's).
void mountResctrl(const TempTree& t, const std::vector<int>& ids, std::string_view cbm,
                  int min_cbm_bits, bool groups = true, std::int64_t mb_full = 100) {
  std::string l3 = "L3:";
  std::string mb = "MB:";
  for (std::size_t i = 0; i < ids.size(); ++i) {
    l3 += fmt::format("{}{}={}", i ? ";" : "", ids[i], cbm);
    mb += fmt::format("{}{}={}", i ? ";" : "", ids[i], mb_full);
  }
  const std::string schemata = "    " + l3 + "\n    " + mb + "\n";
  t.write("resctrl/schemata", schemata);
  t.write("resctrl/info/L3/cbm_mask", std::string(cbm) + "\n");
  t.write("resctrl/info/L3/min_cbm_bits", std::to_string(min_cbm_bits) + "\n");
  t.write("resctrl/info/MB/num_closids", "8\n");
  t.write("resctrl/info/MB/min_bandwidth", "10\n");
  if (!groups)
    return;
  for (auto g : {"LSR", "LS", "BE"}) {
    t.write(fmt::format("resctrl/{}/schemata", g), schemata);
    t.write(fmt::format("resctrl/{}/tasks", g), "");
  }
}

PodMeta pod(std::string uid, koord::apis::QoSClass qos, koord::apis::KubeQoS kube,
            PodPhase phase = PodPhase::kRunning) {
  PodMeta p;
  p.namespace_ = "default";
  p.name = "pod-" + uid.substr(0, 4);
  p.uid = std::move(uid);
  p.phase = phase;
  p.qos = qos;
  p.kube_qos = kube;
  return p;
}

koord::cgroup::ResourceExecutor v1Executor(const TempTree& t) {
  return koord::cgroup::ResourceExecutor({t.path("cgroup"), koord::cgroup::CgroupVersion::kV1,
                                          koord::cgroup::CgroupDriver::kCgroupfs});
}

ResctrlSchemata schemataOf(const TempTree& t, std::string_view group) {
  return parseResctrlSchemata(t.read(fmt::format("resctrl/{}/schemata", group))).value();
}

}  // namespace

TEST_CASE("resctrl: each class's schemata on one and two cache ids", "[koordlet][resctrl]") {
  struct Case {
    std::vector<int> ids;
    const char* cbm;
    int min_cbm_bits;
    CpuVendor vendor;
    std::uint64_t be_mask;  // BE 0-30%
    std::uint64_t ls_mask;  // LS 20-100%
    std::int64_t be_mb;     // BE mbaPercent 35
  };
  const Case cases[] = {
      {{0}, "fff", 1, CpuVendor::kIntel, 0xf, 0xff8, 40},
      {{0, 1}, "7ff", 2, CpuVendor::kIntel, 0xf, 0x7f8, 40},
      {{0, 1}, "fffff", 1, CpuVendor::kAMD, 0x3f, 0xffff0, 56},
  };
  const auto strategy = decode(R"({
      "lsClass": {"resctrlQOS": {"enable": true, "catRangeStartPercent": 20,
                                 "catRangeEndPercent": 100}},
      "beClass": {"resctrlQOS": {"enable": true, "mbaPercent": 35}}})");
  for (const auto& c : cases) {
    INFO(c.ids.size() << " cache ids, cbm " << c.cbm);
    TempTree t("koord-resctrl");
    const std::int64_t mb_full = c.vendor == CpuVendor::kAMD ? 2048 : 100;
    mountResctrl(t, c.ids, c.cbm, c.min_cbm_bits, true, mb_full);
    auto cgroups = v1Executor(t);
    auto stats = reconcileResctrl(t.path("resctrl"), strategy, c.vendor, nullptr, cgroups);
    CHECK(stats.missing.empty());
    CHECK(stats.errors.empty());
    CHECK(stats.groups_created == 0);
    // LSR is disabled: the whole cache and full bandwidth, as its schemata held already.
    CHECK(stats.schemata_unchanged == 1);
    CHECK(stats.schemata_written == 2);
    const std::uint64_t full = parseCbmMask(c.cbm).value();
    auto be = schemataOf(t, "BE");
    auto ls = schemataOf(t, "LS");
    auto lsr = schemataOf(t, "LSR");
    for (int id : c.ids) {
      INFO("cache id " << id);
      CHECK(be.l3.at(id) == c.be_mask);
      CHECK(be.mb.at(id) == c.be_mb);
      CHECK(ls.l3.at(id) == c.ls_mask);
      CHECK(ls.mb.at(id) == mb_full);
      CHECK(lsr.l3.at(id) == full);
      CHECK(lsr.mb.at(id) == mb_full);
    }
    CHECK(be.l3.size() == c.ids.size());
    // A second round finds everything in place and writes nothing.
    auto again = reconcileResctrl(t.path("resctrl"), strategy, c.vendor, nullptr, cgroups);
    CHECK(again.schemata_written == 0);
    CHECK(again.schemata_unchanged == 3);
  }
}

TEST_CASE("resctrl: missing groups are created, and written once the kernel fills them",
          "[koordlet][resctrl]") {
  TempTree t("koord-resctrl");
  mountResctrl(t, {0, 1}, "7ff", 1, /*groups=*/false);
  auto cgroups = v1Executor(t);
  const auto strategy = decode(R"({"beClass": {"resctrlQOS": {"enable": true}}})");
  auto first = reconcileResctrl(t.path("resctrl"), strategy, CpuVendor::kIntel, nullptr, cgroups);
  CHECK(first.groups_created == 3);
  for (auto g : {"LSR", "LS", "BE"})
    CHECK(fs::is_directory(t.path(fmt::format("resctrl/{}", g))));
  // A plain directory has no schemata (the kernel would have made one): said, not created.
  CHECK(first.errors.size() >= 3);
  CHECK_FALSE(fs::exists(t.path("resctrl/BE/schemata")));
  t.write("resctrl/BE/schemata", "L3:0=7ff;1=7ff\nMB:0=100;1=100\n");
  auto second = reconcileResctrl(t.path("resctrl"), strategy, CpuVendor::kIntel, nullptr, cgroups);
  CHECK(second.groups_created == 0);
  CHECK(schemataOf(t, "BE").l3.at(1) == 0xf);
}

TEST_CASE("resctrl: the threads of enabled classes' pods move into their groups",
          "[koordlet][resctrl]") {
  TempTree t("koord-resctrl");
  mountResctrl(t, {0}, "fff", 1);
  // A BE pod with a container and its sandbox; the group already holds thread 101.
  const std::string be_dir = fmt::format("cgroup/cpu/kubepods/besteffort/pod{}", kBEUid);
  t.write(be_dir + "/tasks", "");
  t.write(be_dir + "/" + std::string(64, 'a') + "/tasks", "101\n102\n103\n");
  t.write(be_dir + "/" + std::string(64, 'b') + "/tasks", "200\n");
  t.write("resctrl/BE/tasks", "101\n");
  // An LS pod: its class is not enabled, so its threads stay where they are.
  const std::string ls_dir = fmt::format("cgroup/cpu/kubepods/burstable/pod{}", kLSUid);
  t.write(ls_dir + "/" + std::string(64, 'c') + "/tasks", "300\n");
  const std::vector<PodMeta> pods = {
      pod(kBEUid, koord::apis::QoSClass::kBE, koord::apis::KubeQoS::kBestEffort),
      pod(kLSUid, koord::apis::QoSClass::kLS, koord::apis::KubeQoS::kBurstable),
  };
  auto cgroups = v1Executor(t);
  const auto strategy = decode(R"({"beClass": {"resctrlQOS": {"enable": true}}})");
  auto stats = reconcileResctrl(t.path("resctrl"), strategy, CpuVendor::kIntel, &pods, cgroups);
  CHECK(stats.errors.empty());
  CHECK(stats.tasks_added == 3);
  CHECK(t.read("resctrl/BE/tasks") == "101\n102\n103\n200\n");
  CHECK(t.read("resctrl/LS/tasks").empty());

  // A finished pod's threads are left alone; cgroup v2 reads cgroup.threads.
  TempTree t2("koord-resctrl");
  mountResctrl(t2, {0}, "fff", 1);
  t2.write("cgroup/cgroup.controllers", "cpu");
  t2.write(fmt::format("cgroup/kubepods.slice/kubepods-besteffort.slice/"
                       "kubepods-besteffort-pod{}.slice/cri-containerd-{}.scope/cgroup.threads",
                       "11111111_2222_3333_4444_555555555555", std::string(64, 'a')),
           "7\n8\n");
  koord::cgroup::ResourceExecutor v2({t2.path("cgroup"), koord::cgroup::CgroupVersion::kV2,
                                      koord::cgroup::CgroupDriver::kSystemd});
  std::vector<PodMeta> v2_pods = {
      pod(kBEUid, koord::apis::QoSClass::kBE, koord::apis::KubeQoS::kBestEffort)};
  auto v2_stats = reconcileResctrl(t2.path("resctrl"), strategy, CpuVendor::kIntel, &v2_pods, v2);
  CHECK(v2_stats.errors.empty());
  CHECK(t2.read("resctrl/BE/tasks") == "7\n8\n");
  t2.write("resctrl/BE/tasks", "");
  v2_pods[0].phase = PodPhase::kSucceeded;
  reconcileResctrl(t2.path("resctrl"), strategy, CpuVendor::kIntel, &v2_pods, v2);
  CHECK(t2.read("resctrl/BE/tasks").empty());
}

TEST_CASE("resctrl: nothing is written where resctrl lacks L3 CAT or MBA", "[koordlet][resctrl]") {
  const auto strategy = decode(R"({"beClass": {"resctrlQOS": {"enable": true}}})");
  struct Case {
    const char* remove;
    const char* missing;
  };
  const Case cases[] = {
      {"resctrl/schemata", "resctrl/schemata"},
      {"resctrl/info/L3", "resctrl/info/L3/cbm_mask"},
      {"resctrl/info/MB", "resctrl/info/MB/num_closids"},
  };
  for (const auto& c : cases) {
    INFO(c.remove);
    TempTree t("koord-resctrl");
    mountResctrl(t, {0}, "fff", 1, /*groups=*/false);
    fs::remove_all(t.path(c.remove));
    CHECK(resctrlMissingInterface(t.path("resctrl")) == t.path(c.missing).string());
    auto cgroups = v1Executor(t);
    auto stats = reconcileResctrl(t.path("resctrl"), strategy, CpuVendor::kIntel, nullptr, cgroups);
    CHECK(stats.missing == t.path(c.missing).string());
    CHECK(stats.groups_created == 0);
    CHECK_FALSE(fs::exists(t.path("resctrl/BE")));
  }
  TempTree ok("koord-resctrl");
  mountResctrl(ok, {0}, "fff", 1);
  CHECK(resctrlMissingInterface(ok.path("resctrl")).empty());
}

TEST_CASE("resctrl: an mbaPercent of 0 leaves MB alone; a refused MB line does not hold back L3",
          "[koordlet][resctrl]") {
  TempTree t("koord-resctrl");
  mountResctrl(t, {0}, "fff", 1);
  auto cgroups = v1Executor(t);
  const auto zero = decode(R"({"beClass": {"resctrlQOS": {"enable": true, "mbaPercent": 0}}})");
  auto stats = reconcileResctrl(t.path("resctrl"), zero, CpuVendor::kIntel, nullptr, cgroups);
  REQUIRE(stats.skipped.size() == 1);
  CHECK(stats.skipped.front() == "group BE: mbaPercent 0 is not in [1, 100], MB left as it is");
  CHECK(t.read("resctrl/BE/schemata") == "L3:0=f\n");
}

namespace {

StatesSnapshot snapshotWith(std::string_view resource_qos_strategy) {
  auto slo = std::make_shared<NodeSLOInfo>();
  slo->resource_qos_strategy = std::make_shared<const boost::json::object>(
      boost::json::parse(resource_qos_strategy).as_object());
  return koord::roles::koordlet::testing::syncedSnapshot(std::move(slo));
}

}  // namespace

TEST_CASE("resctrl strategy: the NodeSLO's classes applied; a bad NodeSLO changes nothing",
          "[koordlet][resctrl]") {
  TempTree t("koord-resctrl");
  mountResctrl(t, {0, 1}, "7ff", 1);
  t.write("proc/cpuinfo", "processor\t: 0\nvendor_id\t: GenuineIntel\n");
  koord::roles::koordlet::testing::StrategyModules m(t.path("cgroup"));
  m.options.sys_fs_root_dir = t.root().string();
  m.options.proc_root_dir = t.path("proc").string();
  auto spec = resctrlStrategy();
  CHECK(spec.gate == "RdtResctrl");
  auto strategy = spec.make(m.context());
  const std::string before = t.read("resctrl/BE/schemata");
  // Bad input: nothing changes.
  strategy->runOnce(snapshotWith(R"({"beClass": {"resctrlQOS": {"catRangeEndPercent": 120}}})"),
                    std::chrono::system_clock::now());
  CHECK(t.read("resctrl/BE/schemata") == before);
  // No NodeSLO yet, or not synced: nothing either.
  StatesSnapshot unsynced = snapshotWith(R"({"beClass": {"resctrlQOS": {"enable": true}}})");
  unsynced.synced = false;
  strategy->runOnce(unsynced, std::chrono::system_clock::now());
  StatesSnapshot no_slo;
  no_slo.synced = true;
  strategy->runOnce(no_slo, std::chrono::system_clock::now());
  CHECK(t.read("resctrl/BE/schemata") == before);
  strategy->runOnce(snapshotWith(R"({"beClass": {"resctrlQOS": {"enable": true,
                                     "mbaPercent": 50}}})"),
                    std::chrono::system_clock::now());
  CHECK(t.read("resctrl/BE/schemata") == "L3:0=f;1=f\nMB:0=50;1=50\n");
}

TEST_CASE("resctrl collector: mon_data counters per group and cache id as Koordinator's gauges",
          "[koordlet][resctrl]") {
  TempTree t("koord-resctrl");
  t.write("resctrl/BE/mon_data/mon_L3_00/llc_occupancy", "1048576\n");
  t.write("resctrl/BE/mon_data/mon_L3_00/mbm_total_bytes", "5000\n");
  t.write("resctrl/BE/mon_data/mon_L3_00/mbm_local_bytes", "4000\n");
  t.write("resctrl/BE/mon_data/mon_L3_01/llc_occupancy", "2048\n");
  t.write("resctrl/BE/mon_data/mon_L3_01/mbm_total_bytes", "Unavailable\n");
  // LS has monitoring without MBM; LSR has no mon_data at all.
  t.write("resctrl/LS/mon_data/mon_L3_00/llc_occupancy", "77\n");
  t.mkdirs("resctrl/LSR");
  auto samples = readResctrlMonData(t.path("resctrl"));
  REQUIRE(samples);
  REQUIRE(samples->size() == 3);
  const auto& ls = (*samples)[0];
  CHECK(ls.group == ResctrlGroup::kLS);
  CHECK(ls.llc_occupancy_bytes == 77u);
  CHECK_FALSE(ls.mbm_total_bytes);
  const auto& be0 = (*samples)[1];
  CHECK(be0.group == ResctrlGroup::kBE);
  CHECK(be0.cache_id == 0);
  CHECK(be0.llc_occupancy_bytes == 1048576u);
  CHECK(be0.mbm_total_bytes == 5000u);
  CHECK(be0.mbm_local_bytes == 4000u);
  const auto& be1 = (*samples)[2];
  CHECK(be1.cache_id == 1);
  CHECK_FALSE(be1.mbm_total_bytes);  // "Unavailable"
  CHECK_FALSE(be1.mbm_local_bytes);  // absent

  koord::metrics::Registry registry;
  ResctrlMetrics metrics(registry, "node-a");
  metrics.update(*samples);
  const std::string text = registry.render();
  CHECK_THAT(text,
             Catch::Contains(
                 R"(koordlet_resctrl_llc_occupancy{node="node-a",cache_id="0",qos="BE"} 1048576)"));
  CHECK_THAT(
      text,
      Catch::Contains(
          R"(koordlet_resctrl_memory_bandwidth{node="node-a",cache_id="0",qos="BE",mb_type="mbm_local_bytes"} 4000)"));
  // A domain gone from the next reading loses its series.
  samples->pop_back();
  metrics.update(*samples);
  CHECK_THAT(registry.render(),
             !Catch::Contains(R"(koordlet_resctrl_llc_occupancy{node="node-a",cache_id="1")"));

  t.write("resctrl/BE/mon_data/mon_L3_00/llc_occupancy", "lots\n");
  CHECK_FALSE(readResctrlMonData(t.path("resctrl")));
}
