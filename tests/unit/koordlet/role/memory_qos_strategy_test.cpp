// The CgroupReconcile strategy on fake cgroup trees (Anolis v1 with every memory QoS file,
// cgroup v2 with memory.min/low/high and memory.oom.group, v1 without any): a sequence of
// NodeSLOs and pod annotations, each round's values checked in every tier, pod and container
// cgroup; bad input and missing files leave the files as they were and are said once.
#include <boost/json/parse.hpp>

#include <catch2/catch.hpp>

#include "catch_expected.h"

#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "koord/cgroup/kubepods_path.h"
#include "koord/cgroup/resource_executor.h"
#include "log_lines.h"
#include "qos_strategy_modules.h"
#include "qosmanager/cgreconcile/cgroup_reconcile.h"
#include "qosmanager/cgreconcile/memory_qos_apply.h"
#include "qosmanager/cgreconcile/memory_qos_files.h"
#include "role_fixture.h"
#include "statesinformer/states_snapshot.h"
#include "temp_tree.h"

using namespace koord::roles::koordlet;
using namespace koord::roles::koordlet::qosmanager;
using koord::apis::KubeQoS;
using koord::cgroup::CgroupDriver;
using koord::cgroup::CgroupVersion;
using koord::cgroup::QoSTier;
using koord::cgroup::Resource;
using koord::roles::koordlet::testing::res;
using koord::testing::TempTree;
namespace fs = std::filesystem;

namespace {

constexpr std::int64_t kGi = std::int64_t{1} << 30;
constexpr const char* kLSUid = "0f0e0d0c-0000-4000-8000-000000000001";
constexpr const char* kLSRUid = "0f0e0d0c-0000-4000-8000-000000000002";
constexpr const char* kBEUid = "0f0e0d0c-0000-4000-8000-000000000003";
// What cgroup v1 prints for "no limit".
constexpr const char* kV1NoLimit = "9223372036854771712";

enum class Kernel { kAnolisV1, kPlainV1, kV2 };

std::int64_t pageFloor(std::int64_t bytes) {
  const std::int64_t page = ::sysconf(_SC_PAGESIZE);
  return bytes / page * page;
}

// A node's cgroup tree with the kubelet's tier, pod and container cgroups of three pods, each
// holding the memory QoS files the kernel has, at its defaults.
struct Node {
  explicit Node(Kernel k)
      : kernel(k),
        version(k == Kernel::kV2 ? CgroupVersion::kV2 : CgroupVersion::kV1),
        driver(k == Kernel::kV2 ? CgroupDriver::kSystemd : CgroupDriver::kCgroupfs),
        modules(t.path("cgroup")) {
    modules.cgroups = koord::cgroup::ResourceExecutor({t.path("cgroup"), version, driver});
    using koord::cgroup::containerDir;
    using koord::cgroup::podDir;
    dirs["kubepods"] = koord::cgroup::kubepodsDir(driver);
    dirs["burstable"] = koord::cgroup::qosTierDir(driver, QoSTier::kBurstable);
    dirs["besteffort"] = koord::cgroup::qosTierDir(driver, QoSTier::kBestEffort);
    dirs["pod:ls"] = podDir(driver, QoSTier::kBurstable, kLSUid).value();
    dirs["pod:lsr"] = podDir(driver, QoSTier::kGuaranteed, kLSRUid).value();
    dirs["pod:be"] = podDir(driver, QoSTier::kBestEffort, kBEUid).value();
    dirs["ctr:ls"] =
        containerDir(driver, dirs["pod:ls"], "containerd", std::string(64, 'c')).value();
    dirs["ctr:lsr"] =
        containerDir(driver, dirs["pod:lsr"], "containerd", std::string(64, 'd')).value();
    dirs["ctr:be-a"] =
        containerDir(driver, dirs["pod:be"], "containerd", std::string(64, 'a')).value();
    dirs["ctr:be-b"] =
        containerDir(driver, dirs["pod:be"], "containerd", std::string(64, 'b')).value();
    for (const auto& [label, dir] : dirs) {
      (void)label;
      const std::string base = rel(dir);
      t.write(base + (version == CgroupVersion::kV2 ? "/memory.max" : "/memory.limit_in_bytes"),
              version == CgroupVersion::kV2 ? "max\n" : std::string(kV1NoLimit) + "\n");
      for (const auto& [file, value] : files())
        t.write(base + "/" + file, value + "\n");
    }
  }

  // The files this kernel has, with its defaults.
  std::map<std::string, std::string> files() const {
    const std::string high = version == CgroupVersion::kV2 ? "max" : kV1NoLimit;
    switch (kernel) {
      case Kernel::kAnolisV1:
        return {{"memory.min", "0"},
                {"memory.low", "0"},
                {"memory.high", high},
                {"memory.wmark_ratio", "0"},
                {"memory.wmark_scale_factor", "50"},
                {"memory.wmark_min_adj", "0"},
                {"memory.priority", "0"},
                {"memory.use_priority_oom", "0"},
                {"memory.oom.group", "0"}};
      case Kernel::kV2:
        return {{"memory.min", "0"},
                {"memory.low", "0"},
                {"memory.high", high},
                {"memory.oom.group", "0"}};
      case Kernel::kPlainV1:
        break;
    }
    return {};
  }

  std::string rel(const std::string& dir) const {
    return version == CgroupVersion::kV2 ? "cgroup/" + dir : "cgroup/memory/" + dir;
  }

  // The file's value without its newline; nullopt when it does not exist.
  std::optional<std::string> value(const std::string& label, const std::string& file) const {
    const std::string path = rel(dirs.at(label)) + "/" + file;
    if (!fs::exists(t.path(path)))
      return std::nullopt;
    std::string v = t.read(path);
    while (!v.empty() && v.back() == '\n')
      v.pop_back();
    return v;
  }

  TempTree t{"koord-memqos"};
  Kernel kernel;
  CgroupVersion version;
  CgroupDriver driver;
  koord::roles::koordlet::testing::StrategyModules modules;
  std::map<std::string, std::string> dirs;
};

ContainerMeta container(std::string name, char id, const char* request, const char* limit) {
  ContainerMeta c;
  c.name = std::move(name);
  c.runtime = "containerd";
  c.id = std::string(64, id);
  c.requests = res({{"memory", request}});
  c.limits = res({{"memory", limit}});
  return c;
}

PodMeta pod(const char* name, const char* uid, const char* qos, KubeQoS kube_qos, ContainerMeta c) {
  PodMeta p;
  p.namespace_ = "default";
  p.name = name;
  p.uid = uid;
  p.phase = PodPhase::kRunning;
  p.kube_qos = kube_qos;
  p.qos = koord::apis::qosClassByName(qos);
  p.labels["koordinator.sh/qosClass"] = qos;
  p.pod_requests = c.requests;
  p.containers = {std::move(c)};
  return p;
}

// LS (Burstable, 1Gi request, 2Gi limit), LSR (Guaranteed, 512Mi) and BE (batch-memory 1Gi
// request / 2Gi limit in container a, a 512Mi limit only in b).
std::vector<PodMeta> pods(std::optional<std::string> ls_annotation) {
  PodMeta ls = pod("ls", kLSUid, "LS", KubeQoS::kBurstable, container("c", 'c', "1Gi", "2Gi"));
  if (ls_annotation)
    ls.annotations.emplace("koordinator.sh/memoryQOS", *ls_annotation);
  PodMeta lsr =
      pod("lsr", kLSRUid, "LSR", KubeQoS::kGuaranteed, container("m", 'd', "512Mi", "512Mi"));
  return {ls, lsr, koord::roles::koordlet::testing::batchResourcePod("default", "be", kBEUid)};
}

StatesSnapshot snapshot(const char* strategy, std::vector<PodMeta> pod_list) {
  auto slo = std::make_shared<NodeSLOInfo>();
  slo->resource_qos_strategy =
      std::make_shared<const boost::json::object>(boost::json::parse(strategy).as_object());
  auto s = koord::roles::koordlet::testing::syncedSnapshot(std::move(slo));
  auto node = std::make_shared<NodeInfo>();
  node->allocatable.emplace("memory", koord::kube::Quantity::fromInt(8 * kGi));
  s.node = node;
  s.pods = std::make_shared<const std::vector<PodMeta>>(std::move(pod_list));
  return s;
}

using Values = std::map<std::string, std::string>;  // file -> value; "max" is unlimited

// A pod's or container's values for one class's settings; containers also get memory.high.
Values cgroupValues(std::int64_t min, std::int64_t low, std::int64_t ratio, std::int64_t scale,
                    std::int64_t adj, std::int64_t use_priority_oom = 0, std::int64_t priority = 0,
                    std::int64_t oom_group = 0, std::optional<std::string> high = std::nullopt) {
  Values v = {{"memory.min", std::to_string(min)},
              {"memory.low", std::to_string(low)},
              {"memory.wmark_ratio", std::to_string(ratio)},
              {"memory.wmark_scale_factor", std::to_string(scale)},
              {"memory.wmark_min_adj", std::to_string(adj)},
              {"memory.priority", std::to_string(priority)},
              {"memory.use_priority_oom", std::to_string(use_priority_oom)},
              {"memory.oom.group", std::to_string(oom_group)}};
  if (high)
    v["memory.high"] = *high;
  return v;
}
Values none(bool container) {
  return cgroupValues(0, 0, 0, 50, 0, 0, 0, 0,
                      container ? std::optional<std::string>("max") : std::nullopt);
}
Values tier(std::int64_t min, std::int64_t low, std::int64_t use_priority_oom = 0,
            std::int64_t priority = 0, std::int64_t oom_group = 0) {
  return {{"memory.min", std::to_string(min)},
          {"memory.low", std::to_string(low)},
          {"memory.priority", std::to_string(priority)},
          {"memory.use_priority_oom", std::to_string(use_priority_oom)},
          {"memory.oom.group", std::to_string(oom_group)}};
}

// Every file of every cgroup the kernel has holds the wanted value; no file the kernel lacks
// has been created.
void checkTree(const Node& node, const std::map<std::string, Values>& want) {
  const auto present = node.files();
  for (const auto& [label, dir] : node.dirs) {
    (void)dir;
    REQUIRE(want.count(label) == 1);
    for (const auto& [file, value] : want.at(label)) {
      INFO(label << " " << file);
      auto got = node.value(label, file);
      if (present.count(file) == 0) {
        CHECK_FALSE(got);
        continue;
      }
      REQUIRE(got);
      if (value == "max")
        CHECK((*got == "max" || *got == kV1NoLimit));
      else
        CHECK(*got == value);
    }
  }
}

constexpr const char* kPerClass = R"({
    "lsClass": {"memoryQOS": {"enable": true, "minLimitPercent": 50, "lowLimitPercent": 80,
                              "throttlingPercent": 80}},
    "lsrClass": {"memoryQOS": {"enable": true, "priorityEnable": 1, "priority": 6,
                               "oomKillGroup": 1}},
    "beClass": {"memoryQOS": {"enable": true, "wmarkMinAdj": 30}}})";

}  // namespace

TEST_CASE("memory qos strategy: NodeSLO classes, pod overrides and bad input, on v1 and v2",
          "[koordlet][memoryqos]") {
  const std::int64_t ls_min = kGi / 2;
  const std::int64_t ls_low = 858993459;  // 80% of 1Gi, rounded down
  const std::string ls_high = std::to_string(pageFloor(kGi + 858993459));

  // The per-class NodeSLO's values for the LSR and BE pods (the LS pod's vary by case).
  std::map<std::string, Values> per_class = {
      {"pod:lsr", cgroupValues(0, 0, 95, 20, -25, 1, 6, 1)},
      {"ctr:lsr", cgroupValues(0, 0, 95, 20, -25, 1, 6, 1, "max")},
      {"pod:be", cgroupValues(0, 0, 95, 20, 30)},
      {"ctr:be-a", cgroupValues(0, 0, 95, 20, 30, 0, 0, 0, "max")},
      {"ctr:be-b", cgroupValues(0, 0, 95, 20, 30, 0, 0, 0, "max")},
      {"besteffort", tier(0, 0)},
  };
  auto with = [](std::map<std::string, Values> base, std::map<std::string, Values> more) {
    for (auto& [k, v] : more)
      base[k] = std::move(v);
    return base;
  };

  struct Case {
    const char* name;
    const char* strategy;
    std::optional<std::string> ls_annotation;
    std::map<std::string, Values> want;
  };
  std::vector<Case> cases = {
      {"per-class values", kPerClass, std::nullopt,
       with(per_class, {{"kubepods", tier(ls_min, ls_low, 1, 6, 1)},
                        {"burstable", tier(ls_min, ls_low)},
                        {"pod:ls", cgroupValues(ls_min, ls_low, 95, 20, -25)},
                        {"ctr:ls", cgroupValues(ls_min, ls_low, 95, 20, -25, 0, 0, 0, ls_high)}})},
      // memory.low (80%) falls below memory.min (100%) and is raised to it; the tiers sum the
      // pods' values before that.
      {"annotation override", kPerClass, R"({"minLimitPercent": 100})",
       with(per_class, {{"kubepods", tier(kGi, ls_low, 1, 6, 1)},
                        {"burstable", tier(kGi, ls_low)},
                        {"pod:ls", cgroupValues(kGi, kGi, 95, 20, -25)},
                        {"ctr:ls", cgroupValues(kGi, kGi, 95, 20, -25, 0, 0, 0, ls_high)}})},
      {"policy none", kPerClass, R"({"policy": "none"})",
       with(per_class, {{"kubepods", tier(0, 0, 1, 6, 1)},
                        {"burstable", tier(0, 0)},
                        {"pod:ls", none(false)},
                        {"ctr:ls", none(true)}})},
      // A bad annotation leaves the pod's cgroups (and its tier, which has no other pod) as the
      // last round left them; the other pods follow the NodeSLO (LSR's priority now 3).
      {"malformed annotation",
       R"({"lsClass": {"memoryQOS": {"enable": true, "minLimitPercent": 50}},
           "lsrClass": {"memoryQOS": {"enable": true, "priority": 3}},
           "beClass": {"memoryQOS": {"enable": true, "wmarkMinAdj": 30}}})",
       R"({"minLimitPercent": "50"})",
       with(per_class, {{"kubepods", tier(0, 0, 0, 3, 0)},
                        {"burstable", tier(0, 0)},
                        {"pod:ls", none(false)},
                        {"ctr:ls", none(true)},
                        {"pod:lsr", cgroupValues(0, 0, 95, 20, -25, 0, 3, 0)},
                        {"ctr:lsr", cgroupValues(0, 0, 95, 20, -25, 0, 3, 0, "max")}})},
      // A bad NodeSLO writes nothing at all.
      {"malformed NodeSLO", R"({"lsClass": {"memoryQOS": {"minLimitPercent": 101}}})", std::nullopt,
       with(per_class, {{"kubepods", tier(0, 0, 0, 3, 0)},
                        {"burstable", tier(0, 0)},
                        {"pod:ls", none(false)},
                        {"ctr:ls", none(true)},
                        {"pod:lsr", cgroupValues(0, 0, 95, 20, -25, 0, 3, 0)},
                        {"ctr:lsr", cgroupValues(0, 0, 95, 20, -25, 0, 3, 0, "max")}})},
      {"wrong type in NodeSLO", R"({"beClass": {"memoryQOS": {"enable": "true"}}})", std::nullopt,
       with(per_class, {{"kubepods", tier(0, 0, 0, 3, 0)},
                        {"burstable", tier(0, 0)},
                        {"pod:ls", none(false)},
                        {"ctr:ls", none(true)},
                        {"pod:lsr", cgroupValues(0, 0, 95, 20, -25, 0, 3, 0)},
                        {"ctr:lsr", cgroupValues(0, 0, 95, 20, -25, 0, 3, 0, "max")}})},
      // Every class disabled: Koordinator's none values everywhere.
      {"defaults",
       "{}",
       std::nullopt,
       {{"kubepods", tier(0, 0)},
        {"burstable", tier(0, 0)},
        {"besteffort", tier(0, 0)},
        {"pod:ls", none(false)},
        {"ctr:ls", none(true)},
        {"pod:lsr", none(false)},
        {"ctr:lsr", none(true)},
        {"pod:be", none(false)},
        {"ctr:be-a", none(true)},
        {"ctr:be-b", none(true)}}},
      // BE pods are sized by batch-memory: a's 1Gi request (b has none) and each limit.
      {"BE by batch memory",
       R"({"beClass": {"memoryQOS": {"enable": true, "minLimitPercent": 50,
                                     "throttlingPercent": 50}}})",
       std::nullopt,
       {{"kubepods", tier(kGi / 2, 0)},
        {"burstable", tier(0, 0)},
        {"besteffort", tier(kGi / 2, 0)},
        {"pod:ls", none(false)},
        {"ctr:ls", none(true)},
        {"pod:lsr", none(false)},
        {"ctr:lsr", none(true)},
        {"pod:be", cgroupValues(kGi / 2, 0, 95, 20, 50)},
        {"ctr:be-a",
         cgroupValues(kGi / 2, 0, 95, 20, 50, 0, 0, 0, std::to_string(pageFloor(3 * kGi / 2)))},
        {"ctr:be-b", cgroupValues(0, 0, 95, 20, 50, 0, 0, 0, std::to_string(pageFloor(kGi / 4)))}}},
  };

  for (Kernel kernel : {Kernel::kAnolisV1, Kernel::kV2}) {
    INFO((kernel == Kernel::kV2 ? "cgroup v2, systemd" : "Anolis cgroup v1, cgroupfs"));
    Node node(kernel);
    CHECK(memoryQOSMissingInterface(node.modules.cgroups).empty());
    auto spec = cgroupReconcileStrategy();
    CHECK(spec.gate == "CgroupReconcile");
    CHECK(spec.interval(node.modules.options) ==
          std::chrono::seconds(node.modules.options.reconcile_interval_seconds));
    auto strategy = spec.make(node.modules.context());
    koord::testing::LogLines log;
    const auto now = std::chrono::system_clock::now();
    for (const auto& c : cases) {
      INFO(c.name);
      // Twice: the second round finds everything in place.
      strategy->runOnce(snapshot(c.strategy, pods(c.ls_annotation)), now);
      strategy->runOnce(snapshot(c.strategy, pods(c.ls_annotation)), now);
      checkTree(node, c.want);
    }
    // Each bad input said once, naming what was bad.
    CHECK(log.count("default/ls") == 1);
    CHECK(log.count("minLimitPercent: must be in [0, 100], got 101") == 1);
    CHECK(log.count("beClass.memoryQOS.enable") == 1);
    // v2 has no watermark or priority files: said once, never created.
    CHECK(log.count("memory.wmark_ratio") == (kernel == Kernel::kV2 ? 1u : 0u));
    CHECK(log.count("lacks") == (kernel == Kernel::kV2 ? 1u : 0u));
  }
}

TEST_CASE("memory qos strategy: a v1 kernel without the files is left alone, said once",
          "[koordlet][memoryqos]") {
  Node node(Kernel::kPlainV1);
  const std::string min_path =
      (node.t.path("cgroup/memory") / node.dirs.at("kubepods") / "memory.min").string();
  CHECK(memoryQOSMissingInterface(node.modules.cgroups) == min_path);
  CHECK(missingMemoryQOSFiles(node.modules.cgroups).size() == kMemoryQOSResources.size());
  auto strategy = cgroupReconcileStrategy().make(node.modules.context());
  koord::testing::LogLines log;
  const auto now = std::chrono::system_clock::now();
  for (int round = 0; round < 3; ++round)
    strategy->runOnce(snapshot(kPerClass, pods(std::nullopt)), now);
  // Nothing but the limit file in any cgroup.
  for (const auto& entry : fs::recursive_directory_iterator(node.t.path("cgroup"))) {
    if (entry.is_regular_file())
      CHECK(entry.path().filename() == "memory.limit_in_bytes");
  }
  CHECK(log.count(min_path) == 1);
  CHECK(log.count("memory.oom.group") == 1);
  CHECK(log.problems() == 0);
}

TEST_CASE("memory qos apply: what the kernel keeps is not written again; levels settle",
          "[koordlet][memoryqos]") {
  Node node(Kernel::kAnolisV1);
  auto& cgroups = node.modules.cgroups;
  const std::string kubepods = node.dirs.at("kubepods");
  const std::string pod = node.dirs.at("pod:ls");
  const std::string gone = node.dirs.at("pod:ls") + "/gone";
  // The kernel keeps pages: 1000000 reads back as 999424.
  node.t.write(node.rel(kubepods) + "/memory.min", "999424\n");
  // Lowering a parent below its child's current value: the child first.
  node.t.write(node.rel(pod) + "/memory.min", std::to_string(2 * kGi) + "\n");
  MemoryQOSPlan plan;
  plan.levels[0] = {{kubepods, Resource::kMemoryMin, 1000000},
                    {kubepods, Resource::kMemoryHigh, kMemoryUnlimited},
                    {kubepods, Resource::kMemoryOomGroup, 1}};
  plan.levels[1] = {{pod, Resource::kMemoryMin, kGi / 4},
                    {pod, Resource::kMemoryLow, kGi / 2},
                    {gone, Resource::kMemoryMin, 1}};
  auto stats = applyMemoryQOSPlan(plan, {Resource::kMemoryLow}, 4096, cgroups);
  CHECK(stats.errors.empty());
  CHECK(stats.written == 2);    // oom.group, the pod's memory.min
  CHECK(stats.unchanged == 2);  // memory.min in the same page, memory.high "no limit"
  CHECK(stats.absent == 1);
  CHECK(node.value("kubepods", "memory.min") == "999424");
  CHECK(node.value("kubepods", "memory.high") == kV1NoLimit);
  CHECK(node.value("kubepods", "memory.oom.group") == "1");
  CHECK(node.value("pod:ls", "memory.min") == std::to_string(kGi / 4));
  CHECK(node.value("pod:ls", "memory.low") == "0");  // skipped: as if the kernel lacked it
  CHECK_FALSE(fs::exists(node.t.path(node.rel(gone))));
  // Again: nothing to write.
  auto again = applyMemoryQOSPlan(plan, {Resource::kMemoryLow}, 4096, cgroups);
  CHECK(again.written == 0);
  CHECK(again.unchanged == 4);
}
