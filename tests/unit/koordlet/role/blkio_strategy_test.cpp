// The BlkIOReconcile strategy on fake cgroup trees (Anolis v1 with blk-iocost's files, plain v1
// with the throttles only, v2 under systemd): a sequence of NodeSLOs and pod annotations, each
// round's files checked in the besteffort tier, the pods and the root; disabled classes reset
// their devices; bad input, unresolvable blocks and missing files change nothing and are said
// once. A fake file holds the last write only (the kernel merges per device and per io.max
// key), so each round starts from files as the kernel would print them.
#include <boost/json/parse.hpp>

#include <catch2/catch.hpp>

#include "catch_expected.h"

#include <chrono>
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
#include "qosmanager/blkio/blkio_apply.h"
#include "qosmanager/blkio/blkio_reconcile.h"
#include "statesinformer/states_snapshot.h"
#include "temp_tree.h"

using namespace koord::roles::koordlet;
using namespace koord::roles::koordlet::qosmanager;
using koord::cgroup::CgroupDriver;
using koord::cgroup::CgroupVersion;
using koord::cgroup::QoSTier;
using koord::cgroup::Resource;
using koord::testing::TempTree;
namespace fs = std::filesystem;

namespace {

constexpr const char* kLSUid = "0f0e0d0c-0000-4000-8000-0000000000a1";
constexpr const char* kBEUid = "0f0e0d0c-0000-4000-8000-0000000000a2";
constexpr const char* kNoLabelUid = "0f0e0d0c-0000-4000-8000-0000000000a3";
constexpr const char* kPendingUid = "0f0e0d0c-0000-4000-8000-0000000000a4";

enum class Kernel { kAnolisV1, kPlainV1, kV2 };

// /dev/vda is 254:0, /dev/vdb 254:16, the LS pod's volume "data" 253:0; nothing else resolves.
BlockResolver fakeResolver() {
  return [](const BlockConfig& b, const PodMeta* pod) -> koord::kube::Expected<std::string> {
    if (b.type == BlockType::kPodVolume) {
      if (pod != nullptr && pod->uid == kLSUid && b.name == "data")
        return std::string("253:0");
      return koord::kube::makeKubeError("volume " + b.name + ": no CSI volume");
    }
    if (b.name == "/dev/vda")
      return std::string("254:0");
    if (b.name == "/dev/vdb")
      return std::string("254:16");
    return koord::kube::makeKubeError("device " + b.name + ": No such file or directory");
  };
}

struct Node {
  explicit Node(Kernel k)
      : kernel(k),
        version(k == Kernel::kV2 ? CgroupVersion::kV2 : CgroupVersion::kV1),
        driver(k == Kernel::kV2 ? CgroupDriver::kSystemd : CgroupDriver::kCgroupfs),
        modules(t.path("cgroup")) {
    modules.cgroups = koord::cgroup::ResourceExecutor({t.path("cgroup"), version, driver});
    using koord::cgroup::podDir;
    dirs["kubepods"] = koord::cgroup::kubepodsDir(driver);
    dirs["besteffort"] = koord::cgroup::qosTierDir(driver, QoSTier::kBestEffort);
    dirs["pod:ls"] = podDir(driver, QoSTier::kBurstable, kLSUid).value();
    dirs["pod:be"] = podDir(driver, QoSTier::kBestEffort, kBEUid).value();
    dirs["pod:nolabel"] = podDir(driver, QoSTier::kBurstable, kNoLabelUid).value();
    dirs["pod:pending"] = podDir(driver, QoSTier::kBurstable, kPendingUid).value();
    if (version == CgroupVersion::kV2)
      t.write("cgroup/cgroup.controllers", "cpu io memory\n");
    for (const auto& [label, dir] : dirs) {
      (void)label;
      for (auto r : kBlkIOCgroupResources) {
        if (r == Resource::kBlkioWeight && kernel == Kernel::kPlainV1)
          continue;
        t.write(rel(dir, r), r == Resource::kBlkioWeight ? "default 100\n" : "");
      }
    }
    if (kernel != Kernel::kPlainV1) {
      for (auto r : kBlkIORootResources)
        t.write(rootRel(r), "");
    }
  }

  std::string rel(const std::string& dir, Resource r) const {
    auto f = koord::cgroup::resourceFile(r, version);
    return "cgroup/" + (f.subsystem.empty() ? "" : std::string(f.subsystem) + "/") + dir + "/" +
           std::string(f.file);
  }
  std::string rootRel(Resource r) const {
    auto f = koord::cgroup::resourceFile(r, version);
    return "cgroup/" + (f.subsystem.empty() ? "" : std::string(f.subsystem) + "/") +
           std::string(f.file);
  }

  // The file's text without its last newline; nullopt when the kernel has no such file.
  std::optional<std::string> file(const std::string& label, Resource r) const {
    return text(label == "root" ? rootRel(r) : rel(dirs.at(label), r));
  }
  std::optional<std::string> text(const std::string& path) const {
    if (!fs::exists(t.path(path)))
      return std::nullopt;
    std::string v = t.read(path);
    while (!v.empty() && v.back() == '\n')
      v.pop_back();
    return v;
  }
  // Sets a file the kernel has to `content`, as the kernel would print it.
  void set(const std::string& label, Resource r, const std::string& content) const {
    const std::string path = label == "root" ? rootRel(r) : rel(dirs.at(label), r);
    if (fs::exists(t.path(path)))
      t.write(path, content + "\n");
  }

  TempTree t{"koord-blkio"};
  Kernel kernel;
  CgroupVersion version;
  CgroupDriver driver;
  koord::roles::koordlet::testing::StrategyModules modules;
  std::map<std::string, std::string> dirs;
};

PodMeta pod(const char* name, const char* uid, koord::apis::KubeQoS kube_qos, const char* label,
            PodPhase phase, std::optional<std::string> blkio) {
  PodMeta p;
  p.namespace_ = "default";
  p.name = name;
  p.uid = uid;
  p.phase = phase;
  p.kube_qos = kube_qos;
  if (label != nullptr)
    p.labels["koordinator.sh/qosClass"] = label;
  p.qos = koord::apis::podQoSClassWithDefault(p.labels, kube_qos);
  if (blkio)
    p.annotations[std::string(kAnnotationPodBlkIOQOS)] = *blkio;
  return p;
}

constexpr const char* kLSPodBlocks =
    R"({"blocks": [{"name": "data", "type": "podvolume", "ioCfg": {"writeBPS": 2097152}}]})";

StatesSnapshot snapshot(const std::string& strategy, std::vector<PodMeta> pods = {}) {
  auto slo = std::make_shared<NodeSLOInfo>();
  slo->resource_qos_strategy =
      std::make_shared<const boost::json::object>(boost::json::parse(strategy).as_object());
  auto s = koord::roles::koordlet::testing::syncedSnapshot(std::move(slo));
  s.pods = std::make_shared<const std::vector<PodMeta>>(std::move(pods));
  return s;
}

std::vector<PodMeta> somePods() {
  using koord::apis::KubeQoS;
  return {
      pod("ls", kLSUid, KubeQoS::kBurstable, "LS", PodPhase::kRunning, kLSPodBlocks),
      // "": the pod's devices reset; none are set, so nothing is written.
      pod("be", kBEUid, KubeQoS::kBestEffort, "BE", PodPhase::kRunning, ""),
      // Koordinator's rules: no QoS label of its own, or not running: left alone.
      pod("nolabel", kNoLabelUid, KubeQoS::kBurstable, nullptr, PodPhase::kRunning, kLSPodBlocks),
      pod("pending", kPendingUid, KubeQoS::kBurstable, "LS", PodPhase::kPending, kLSPodBlocks),
  };
}

constexpr const char* kEnabled = R"({
  "beClass": {"blkioQOS": {"enable": true, "blocks": [{"name": "/dev/vda", "type": "device",
    "ioCfg": {"readBPS": 1048576, "writeIOPS": 500, "ioWeightPercent": 40}}]}},
  "cgroupRoot": {"blkioQOS": {"enable": true, "blocks": [{"name": "/dev/vda", "type": "device",
    "ioCfg": {"readLatency": 2000}}]}}})";
constexpr const char* kDisabled = R"({
  "beClass": {"blkioQOS": {"enable": false, "blocks": [{"name": "/dev/vda", "type": "device",
    "ioCfg": {"readBPS": 1048576}}]}},
  "cgroupRoot": {"blkioQOS": {"enable": false}}})";

}  // namespace

TEST_CASE("blkio strategy: cgroup v1 throttles, Anolis weight and iocost, pods, resets",
          "[koordlet][blkio]") {
  auto spec = blkioReconcileStrategy();
  CHECK(spec.gate == "BlkIOReconcile");
  CHECK(spec.name == "blkio reconcile");
  for (Kernel kernel : {Kernel::kAnolisV1, Kernel::kPlainV1}) {
    const bool anolis = kernel == Kernel::kAnolisV1;
    INFO((anolis ? "Anolis v1" : "plain v1"));
    Node n(kernel);
    n.modules.options.reconcile_interval_seconds = 7;
    CHECK(spec.interval(n.modules.options) == std::chrono::seconds(7));
    auto strategy = makeBlkIOReconcile(n.modules.context(), fakeResolver());
    const auto now = std::chrono::system_clock::now();
    const std::optional<std::string> no_file;
    auto weight = [&](const char* v) { return anolis ? std::optional<std::string>(v) : no_file; };

    // Enabled: the BE tier gets its throttles and weight, the root blk-iocost's QoS with the
    // default model, the LS pod its volume's throttle; nothing else is touched.
    strategy->runOnce(snapshot(kEnabled, somePods()), now);
    CHECK(n.file("besteffort", Resource::kBlkioReadBps) == "254:0 1048576");
    CHECK(n.file("besteffort", Resource::kBlkioWriteIops) == "254:0 500");
    CHECK(n.file("besteffort", Resource::kBlkioReadIops) == "");
    CHECK(n.file("besteffort", Resource::kBlkioWriteBps) == "");
    CHECK(n.file("besteffort", Resource::kBlkioWeight) == weight("254:0 40"));
    CHECK(n.file("root", Resource::kBlkioCostQos) ==
          (anolis ? std::optional<std::string>(
                        "254:0 enable=1 ctrl=user rpct=95 rlat=2000 wpct=95 wlat=3000")
                  : no_file));
    CHECK(n.file("root", Resource::kBlkioCostModel) == weight("254:0 ctrl=auto"));
    CHECK(n.file("pod:ls", Resource::kBlkioWriteBps) == "253:0 2097152");
    CHECK(n.file("pod:ls", Resource::kBlkioReadBps) == "");
    for (const char* label : {"pod:be", "pod:nolabel", "pod:pending", "kubepods"}) {
      INFO(label);
      CHECK(n.file(label, Resource::kBlkioWriteBps) == "");
      CHECK(n.file(label, Resource::kBlkioWeight) == weight("default 100"));
    }

    // The same NodeSLO on files as the kernel prints them: nothing is written again.
    n.set("besteffort", Resource::kBlkioWeight, "default 100\n254:0 40");
    n.set("root", Resource::kBlkioCostQos,
          "254:0 enable=1 ctrl=user rpct=95.00 rlat=2000 wpct=95.00 wlat=3000 min=1.00 "
          "max=10000.00");
    n.set("root", Resource::kBlkioCostModel,
          "254:0 ctrl=auto model=linear rbps=1 rseqiops=2 rrandiops=3 wbps=4 wseqiops=5 "
          "wrandiops=6");
    strategy->runOnce(snapshot(kEnabled, somePods()), now);
    CHECK(n.file("besteffort", Resource::kBlkioWeight) == weight("default 100\n254:0 40"));
    CHECK(n.file("root", Resource::kBlkioCostQos) ==
          (anolis ? std::optional<std::string>("254:0 enable=1 ctrl=user rpct=95.00 rlat=2000 "
                                               "wpct=95.00 wlat=3000 min=1.00 max=10000.00")
                  : no_file));

    // A device the files name that no block does (vdb, set by hand) is reset.
    n.set("besteffort", Resource::kBlkioReadIops, "254:16 300");
    strategy->runOnce(snapshot(kEnabled, somePods()), now);
    CHECK(n.file("besteffort", Resource::kBlkioReadIops) == "254:16 0");

    // Disabled: every device of the tier reset (0, weight 100), iocost's QoS off at the root,
    // its model left; the LS pod, whose annotation says the same, keeps its throttle.
    n.set("besteffort", Resource::kBlkioReadIops, "");
    strategy->runOnce(snapshot(kDisabled, somePods()), now);
    CHECK(n.file("besteffort", Resource::kBlkioReadBps) == "254:0 0");
    CHECK(n.file("besteffort", Resource::kBlkioWriteIops) == "254:0 0");
    CHECK(n.file("besteffort", Resource::kBlkioReadIops) == "");
    CHECK(n.file("besteffort", Resource::kBlkioWeight) == weight("254:0 100"));
    CHECK(n.file("root", Resource::kBlkioCostQos) == weight("254:0 enable=0"));
    CHECK(n.file("root", Resource::kBlkioCostModel) ==
          weight("254:0 ctrl=auto model=linear rbps=1 rseqiops=2 rrandiops=3 wbps=4 wseqiops=5 "
                 "wrandiops=6"));
    CHECK(n.file("pod:ls", Resource::kBlkioWriteBps) == "253:0 2097152");

    // The pod's annotation emptied: its device reset. A class without a blkioQOS section is
    // left as it is (Koordinator's rule), stale devices included.
    n.set("besteffort", Resource::kBlkioReadBps, "254:16 1024");
    auto pods = somePods();
    pods[0].annotations[std::string(kAnnotationPodBlkIOQOS)] = "";
    strategy->runOnce(snapshot(R"({"beClass": {"cpuQOS": {"enable": true}}})", pods), now);
    CHECK(n.file("pod:ls", Resource::kBlkioWriteBps) == "253:0 0");
    CHECK(n.file("besteffort", Resource::kBlkioReadBps) == "254:16 1024");
  }
}

TEST_CASE("blkio strategy: cgroup v2 io.max keys, io.weight, io.cost at the root",
          "[koordlet][blkio]") {
  Node n(Kernel::kV2);
  auto strategy = makeBlkIOReconcile(n.modules.context(), fakeResolver());
  const auto now = std::chrono::system_clock::now();

  strategy->runOnce(snapshot(kEnabled, somePods()), now);
  // Each throttle is its own io.max key; the fake keeps the last write (wiops; rbps before it).
  CHECK(n.file("besteffort", Resource::kBlkioReadBps) == "254:0 wiops=500");
  CHECK(n.file("besteffort", Resource::kBlkioWeight) == "254:0 40");
  CHECK(n.file("root", Resource::kBlkioCostQos) ==
        "254:0 enable=1 ctrl=user rpct=95 rlat=2000 wpct=95 wlat=3000");
  CHECK(n.file("root", Resource::kBlkioCostModel) == "254:0 ctrl=auto");
  CHECK(n.file("pod:ls", Resource::kBlkioWriteBps) == "253:0 wbps=2097152");
  CHECK(n.file("pod:nolabel", Resource::kBlkioWriteBps) == "");

  // As the kernel prints them: nothing is written again.
  const std::string io_max = "254:0 rbps=1048576 wbps=max riops=max wiops=500";
  n.set("besteffort", Resource::kBlkioReadBps, io_max);
  n.set("besteffort", Resource::kBlkioWeight, "default 100\n254:0 40");
  strategy->runOnce(snapshot(kEnabled, somePods()), now);
  CHECK(n.file("besteffort", Resource::kBlkioReadBps) == io_max);
  CHECK(n.file("besteffort", Resource::kBlkioWeight) == "default 100\n254:0 40");

  // Disabled: the one key still limited is set back to max, the weight to 100, iocost off.
  n.set("besteffort", Resource::kBlkioReadBps, "254:0 rbps=max wbps=max riops=max wiops=500");
  strategy->runOnce(snapshot(kDisabled, somePods()), now);
  CHECK(n.file("besteffort", Resource::kBlkioReadBps) == "254:0 wiops=max");
  CHECK(n.file("besteffort", Resource::kBlkioWeight) == "254:0 100");
  CHECK(n.file("root", Resource::kBlkioCostQos) == "254:0 enable=0");
}

TEST_CASE("blkio strategy: user cost model, duplicate disks, the later block's settings",
          "[koordlet][blkio]") {
  Node n(Kernel::kAnolisV1);
  auto strategy = makeBlkIOReconcile(n.modules.context(), fakeResolver());
  strategy->runOnce(snapshot(R"({
    "beClass": {"blkioQOS": {"enable": true, "blocks": [
      {"name": "/dev/vda", "type": "device", "ioCfg": {"writeBPS": 100}},
      {"name": "/dev/vda", "type": "device", "ioCfg": {"writeBPS": 200}}]}},
    "cgroupRoot": {"blkioQOS": {"enable": true, "blocks": [{"name": "/dev/vda",
      "type": "device", "ioCfg": {"enableUserModel": true, "modelReadBPS": 10,
      "modelWriteBPS": 20, "modelReadSeqIOPS": 11, "modelWriteSeqIOPS": 21,
      "modelReadRandIOPS": 12, "modelWriteRandIOPS": 22}}]}}})"),
                    std::chrono::system_clock::now());
  CHECK(n.file("besteffort", Resource::kBlkioWriteBps) == "254:0 200");
  CHECK(n.file("root", Resource::kBlkioCostModel) ==
        "254:0 ctrl=user rbps=10 rseqiops=11 rrandiops=12 wbps=20 wseqiops=21 wrandiops=22");
}

TEST_CASE("blkio strategy: bad input, skipped blocks and missing files said once",
          "[koordlet][blkio]") {
  Node n(Kernel::kPlainV1);
  auto strategy = makeBlkIOReconcile(n.modules.context(), fakeResolver());
  const auto now = std::chrono::system_clock::now();
  koord::testing::LogLines log;

  // A NodeSLO that does not decode: nothing written, one warning over two rounds.
  n.set("besteffort", Resource::kBlkioReadBps, "254:0 1048576");
  for (int i = 0; i < 2; ++i) {
    strategy->runOnce(snapshot(R"({"beClass": {"blkioQOS": {"enable": false,
                         "blocks": [{"name": "/dev/vda", "type": "lvm"}]}}})"),
                      now);
  }
  CHECK(n.file("besteffort", Resource::kBlkioReadBps) == "254:0 1048576");
  CHECK(log.count("NodeSLO node-a: resourceQOSStrategy.beClass.blkioQOS.blocks[0].type") == 1);
  CHECK(log.count("nothing written") == 1);

  // Blocks koord cannot resolve are skipped, one line each; the rest is applied. LS classes'
  // blocks are not applied (as in Koordinator), said once too. A pod's bad annotation is named.
  auto pods = somePods();
  pods[0].annotations[std::string(kAnnotationPodBlkIOQOS)] = "{not json";
  const std::string slo = R"({
    "lsClass": {"blkioQOS": {"enable": true, "blocks": [{"name": "/dev/vda", "type": "device"}]}},
    "beClass": {"blkioQOS": {"enable": true, "blocks": [
      {"name": "/dev/sdz", "type": "device", "ioCfg": {"readBPS": 1}},
      {"name": "vg0", "type": "volumegroup", "ioCfg": {"readBPS": 2}},
      {"name": "data", "type": "podvolume", "ioCfg": {"readBPS": 3}},
      {"name": "/dev/vdb", "type": "device", "ioCfg": {"writeBPS": 4096}}]}}})";
  n.set("besteffort", Resource::kBlkioReadBps, "");
  for (int i = 0; i < 3; ++i)
    strategy->runOnce(snapshot(slo, pods), now);
  CHECK(n.file("besteffort", Resource::kBlkioWriteBps) == "254:16 4096");
  CHECK(n.file("besteffort", Resource::kBlkioReadBps) == "");
  CHECK(log.count("beClass: device block \"/dev/sdz\": device /dev/sdz: No such file") == 1);
  CHECK(log.count("beClass: volumegroup block \"vg0\": a volume group's disk needs the LVM") == 1);
  CHECK(log.count("beClass: podvolume block \"data\": podvolume blocks apply only") == 1);
  CHECK(log.count("lsClass: blkioQOS applies to beClass and cgroupRoot only") == 1);
  CHECK(log.count("pod default/ls: koordinator.sh/blkioQOS: not JSON") == 1);
  // The plain v1 kernel lacks the weight and blk-iocost's files: said once, at info.
  CHECK(log.count("blkio: the kernel lacks") == 1);
  CHECK(log.count("kubepods/blkio.cost.weight") == 1);
  CHECK(log.count("blkio/blkio.cost.qos") == 1);
  for (const auto& line : log.lines) {
    if (line.find("lacks") != std::string::npos)
      CHECK(line[0] == 'I');
  }
}

TEST_CASE("blkio strategy: the feature probe and the missing files", "[koordlet][blkio]") {
  Node plain(Kernel::kPlainV1);
  CHECK(blkioMissingInterface(plain.modules.cgroups).empty());
  auto missing = missingBlkIOFiles(plain.modules.cgroups);
  REQUIRE(missing.size() == 3);
  CHECK(missing[0].resource == Resource::kBlkioWeight);
  CHECK(missing[1].resource == Resource::kBlkioCostQos);
  CHECK(missing[2].resource == Resource::kBlkioCostModel);

  Node v2(Kernel::kV2);
  CHECK(missingBlkIOFiles(v2.modules.cgroups).empty());

  TempTree bare("koord-blkio-bare");
  bare.mkdirs("cgroup/blkio/kubepods");
  koord::cgroup::ResourceExecutor cgroups(
      {bare.path("cgroup"), CgroupVersion::kV1, CgroupDriver::kCgroupfs});
  CHECK(blkioMissingInterface(cgroups) ==
        bare.path("cgroup/blkio/kubepods/blkio.throttle.read_bps_device").string());
}

TEST_CASE("blkio strategy: a pod whose cgroup is not there yet is counted, not an error",
          "[koordlet][blkio]") {
  Node n(Kernel::kAnolisV1);
  fs::remove_all(n.t.path("cgroup/blkio/" + n.dirs.at("pod:ls")));
  BlkIOQOSStrategy none;
  auto plan = planBlkIO(none, somePods(), n.driver, fakeResolver());
  REQUIRE(plan.targets.size() == 2);  // the LS and BE pods
  CHECK(plan.targets[0].owner == "pod default/ls");
  REQUIRE(plan.targets[0].devices.size() == 1);
  CHECK(plan.targets[0].devices[0].device == "253:0");
  auto stats = applyBlkIOPlan(plan, {}, n.modules.cgroups);
  CHECK(stats.absent == 1);
  CHECK(stats.errors.empty());
  CHECK(stats.written == 0);
}

TEST_CASE("blkio strategy: the pod annotation survives the pod's decoding", "[koordlet][blkio]") {
  auto v = boost::json::parse(R"({
    "metadata": {"namespace": "default", "name": "ls", "uid": "0f0e0d0c-0000-4000-8000-0000000000a1",
                 "labels": {"koordinator.sh/qosClass": "LS"},
                 "annotations": {"koordinator.sh/blkioQOS": "{\"blocks\": []}"}},
    "spec": {"containers": [{"name": "a"}]},
    "status": {"phase": "Running", "qosClass": "Burstable"}})");
  auto pod = decodePodMeta(v);
  REQUIRE(pod);
  CHECK(pod->annotations.at(std::string(kAnnotationPodBlkIOQOS)) == R"({"blocks": []})");
}
