// GroupIdentity on fake cgroup and /proc trees: the bvt rule per class from NodeSLO strategies,
// cpu.bvt_warp_ns on the QoS tiers, pods, containers, host applications and leftover pod
// cgroups (the reconciler's round) and on a new pod's cgroup (the PreRunPodSandbox hook), the
// kernel switch, and no write at all on a kernel without cpu.bvt_warp_ns.
#include <boost/json/parse.hpp>

#include <catch2/catch.hpp>

#include "catch_expected.h"

#include <array>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "koord/apis/features.h"
#include "koord/cgroup/resource_executor.h"
#include "koord/core/feature_gate.h"
#include "koordinator/runtime/v1alpha1/api.pb.h"
#include "runtimehooks/cpuset/cpuset_rule.h"
#include "runtimehooks/groupidentity/bvt_apply.h"
#include "runtimehooks/groupidentity/bvt_rule.h"
#include "runtimehooks/groupidentity/group_identity_hook.h"
#include "runtimehooks/hook_table.h"
#include "runtimehooks/hooks/hook_registry.h"
#include "temp_tree.h"

using namespace koord::roles::koordlet;
using koord::apis::KubeQoS;
using koord::apis::QoSClass;
using koord::cgroup::QoSTier;
using koord::testing::TempTree;
namespace fs = std::filesystem;

namespace {

constexpr const char* kLSUid = "11111111-2222-3333-4444-555555555555";
constexpr const char* kBEUid = "66666666-7777-8888-9999-000000000000";
constexpr const char* kGuaranteedUid = "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee";
constexpr const char* kGoneUid = "ffffffff-0000-1111-2222-333333333333";

BvtRule rule(std::string_view text) {
  auto o = boost::json::parse(text).as_object();
  return decodeBvtRule(&o).value().value();
}

// LS and BE enabled with Koordinator's default identities.
constexpr const char* kLSAndBE = R"({
    "lsrClass": {"cpuQOS": {"enable": false, "groupIdentity": 2}},
    "lsClass": {"cpuQOS": {"enable": true, "groupIdentity": 2}},
    "beClass": {"cpuQOS": {"enable": true, "groupIdentity": -1}}})";

PodMeta pod(const char* uid, QoSClass label, KubeQoS kube) {
  PodMeta p;
  p.namespace_ = "default";
  p.name = std::string("pod-") + std::string(uid).substr(0, 4);
  p.uid = uid;
  p.phase = PodPhase::kRunning;
  p.kube_qos = kube;
  if (label != QoSClass::kNone)
    p.labels[std::string(koord::apis::kLabelPodQoS)] =
        std::string(koord::apis::qosClassName(label));
  return p;
}

// A cgroup v1 tree on an Anolis kernel: the tiers, an LS pod and a BE pod with one container
// each, an unlabelled Guaranteed pod, a BE pod cgroup no pod owns any more, and a host app.
struct AnolisTree {
  TempTree t{"koord-bvt"};
  koord::cgroup::ResourceExecutor cgroups{
      {t.root(), koord::cgroup::CgroupVersion::kV1, koord::cgroup::CgroupDriver::kCgroupfs}};
  std::vector<PodMeta> pods{pod(kLSUid, QoSClass::kLS, KubeQoS::kBurstable),
                            pod(kBEUid, QoSClass::kBE, KubeQoS::kBestEffort),
                            pod(kGuaranteedUid, QoSClass::kNone, KubeQoS::kGuaranteed)};
  HostApplications apps;

  AnolisTree() {
    for (const auto& dir : dirs())
      t.write("cpu/" + dir + "/cpu.bvt_warp_ns", "0\n");
    HostApplication nginx;
    nginx.name = "nginx";
    nginx.qos = QoSClass::kLS;
    apps.apps.push_back(nginx);
  }

  static std::vector<std::string> dirs() {
    const std::string c(64, 'c');
    return {"kubepods",
            "kubepods/burstable",
            "kubepods/besteffort",
            fmt::format("kubepods/burstable/pod{}", kLSUid),
            fmt::format("kubepods/burstable/pod{}/{}", kLSUid, c),
            fmt::format("kubepods/besteffort/pod{}", kBEUid),
            fmt::format("kubepods/besteffort/pod{}/{}", kBEUid, c),
            fmt::format("kubepods/pod{}", kGuaranteedUid),
            fmt::format("kubepods/besteffort/pod{}", kGoneUid),
            fmt::format("kubepods/besteffort/pod{}/{}", kGoneUid, c),
            "host-latency-sensitive/nginx"};
  }

  std::string bvt(const std::string& dir) const {
    std::string v = t.read("cpu/" + dir + "/cpu.bvt_warp_ns");
    while (!v.empty() && v.back() == '\n')
      v.pop_back();
    return v;
  }
};

// Resets the hook's shared state when a test ends.
struct StateReset {
  ~StateReset() {
    groupIdentityState().set(nullptr, false);
    groupIdentityState().setProcRoot("/proc");
  }
};

}  // namespace

TEST_CASE("group identity rule: values per class and Kubernetes QoS", "[koordlet][bvt]") {
  auto r = rule(kLSAndBE);
  CHECK(r.enable);
  CHECK(r.podValue(QoSClass::kLS, KubeQoS::kBurstable) == 2);
  CHECK(r.podValue(QoSClass::kBE, KubeQoS::kBestEffort) == -1);
  CHECK(r.podValue(QoSClass::kLSR, KubeQoS::kGuaranteed) == 0);  // LSR disabled
  // Unlabelled: Guaranteed follows LS when LSR is off; SYSTEM has no value of its own.
  CHECK(r.podValue(QoSClass::kNone, KubeQoS::kGuaranteed) == 2);
  CHECK(r.podValue(QoSClass::kSystem, KubeQoS::kBestEffort) == -1);
  CHECK(r.tierValue(QoSTier::kGuaranteed) == 0);
  CHECK(r.tierValue(QoSTier::kBurstable) == 2);
  CHECK(r.tierValue(QoSTier::kBestEffort) == -1);
  CHECK(r.hostAppValue(QoSClass::kLS) == 2);
  CHECK(r.hostAppValue(QoSClass::kNone) == 0);

  // LSR enabled: Guaranteed pods follow it, the tiers stay neutral.
  auto lsr = rule(R"({"lsrClass": {"cpuQOS": {"enable": true, "groupIdentity": 1}}})");
  CHECK(lsr.podValue(QoSClass::kNone, KubeQoS::kGuaranteed) == 1);
  CHECK(lsr.podValue(QoSClass::kLSE, KubeQoS::kGuaranteed) == 1);
  CHECK(lsr.tierValue(QoSTier::kBurstable) == 0);
  // Enabled without a value: Koordinator's class defaults (LS 2, BE -1).
  auto defaults = rule(R"({"beClass": {"cpuQOS": {"enable": true}}})");
  CHECK(defaults.be == -1);
  // The coreSched policy, or nothing enabled: every value 0.
  auto core = rule(R"({"policies": {"cpuPolicy": "coreSched"},
      "lsClass": {"cpuQOS": {"enable": true, "groupIdentity": 2}},
      "beClass": {"cpuQOS": {"enable": true, "groupIdentity": -1}}})");
  CHECK_FALSE(core.enable);
  CHECK(core == rule(R"({})"));
  CHECK(core.be == 0);

  // No NodeSLO: nothing decided.
  auto none = decodeBvtRule(nullptr);
  REQUIRE(none);
  CHECK_FALSE(*none);
  // Bad input is an error naming the field.
  auto bad = boost::json::parse(R"({"beClass": {"cpuQOS": {"groupIdentity": -2}}})").as_object();
  auto e = decodeBvtRule(&bad);
  REQUIRE_FALSE(e);
  CHECK(e.error().message ==
        "resourceQOSStrategy.beClass.cpuQOS.groupIdentity: must be in [-1, 2], got -2");
  auto bad_type = boost::json::parse(R"({"lsClass": {"cpuQOS": {"enable": "yes"}}})").as_object();
  CHECK_FALSE(decodeBvtRule(&bad_type));

  CHECK(kubeQoSOfCgroupParent("/kubepods/besteffort/pod1") == KubeQoS::kBestEffort);
  CHECK(kubeQoSOfCgroupParent("kubepods-burstable-pod1.slice") == KubeQoS::kBurstable);
  CHECK(kubeQoSOfCgroupParent("/kubepods/pod1") == KubeQoS::kGuaranteed);
}

TEST_CASE("group identity reconcile: the tiers, pods, containers, host apps and leftovers",
          "[koordlet][bvt]") {
  struct Case {
    const char* name;
    const char* strategy;
    // burstable tier, besteffort tier, LS pod, BE pod, Guaranteed pod, leftover BE pod, nginx
    std::array<const char*, 7> want;
  };
  const Case cases[] = {
      {"LS and BE", kLSAndBE, {"2", "-1", "2", "-1", "2", "-1", "2"}},
      {"LSR only",
       R"({"lsrClass": {"cpuQOS": {"enable": true, "groupIdentity": 1}}})",
       {"0", "0", "0", "0", "1", "0", "0"}},
      {"coreSched policy",
       R"({"policies": {"cpuPolicy": "coreSched"},
          "beClass": {"cpuQOS": {"enable": true, "groupIdentity": -1}}})",
       {"0", "0", "0", "0", "0", "0", "0"}},
  };
  AnolisTree tree;
  CHECK(groupIdentityMissingInterface(tree.cgroups).empty());
  const std::string c(64, 'c');
  for (const auto& cs : {cases[0], cases[1], cases[0], cases[2]}) {
    INFO(cs.name);
    auto stats = applyBvtRule(tree.cgroups, rule(cs.strategy), tree.pods, &tree.apps);
    CHECK(stats.errors.empty());
    CHECK(stats.refused == 0);
    CHECK(tree.bvt("kubepods") == "0");
    CHECK(tree.bvt("kubepods/burstable") == cs.want[0]);
    CHECK(tree.bvt("kubepods/besteffort") == cs.want[1]);
    CHECK(tree.bvt(fmt::format("kubepods/burstable/pod{}", kLSUid)) == cs.want[2]);
    CHECK(tree.bvt(fmt::format("kubepods/burstable/pod{}/{}", kLSUid, c)) == cs.want[2]);
    CHECK(tree.bvt(fmt::format("kubepods/besteffort/pod{}", kBEUid)) == cs.want[3]);
    CHECK(tree.bvt(fmt::format("kubepods/besteffort/pod{}/{}", kBEUid, c)) == cs.want[3]);
    CHECK(tree.bvt(fmt::format("kubepods/pod{}", kGuaranteedUid)) == cs.want[4]);
    CHECK(tree.bvt(fmt::format("kubepods/besteffort/pod{}", kGoneUid)) == cs.want[5]);
    CHECK(tree.bvt(fmt::format("kubepods/besteffort/pod{}/{}", kGoneUid, c)) == cs.want[5]);
    CHECK(tree.bvt("host-latency-sensitive/nginx") == cs.want[6]);
  }
  // A second identical round writes nothing.
  auto again = applyBvtRule(tree.cgroups, rule(cases[2].strategy), tree.pods, &tree.apps);
  CHECK(again.written == 0);
  CHECK(again.unchanged == AnolisTree::dirs().size());
}

TEST_CASE("group identity: a kernel without cpu.bvt_warp_ns gets no write", "[koordlet][bvt]") {
  TempTree t("koord-bvt");
  t.mkdirs(fmt::format("cpu/kubepods/besteffort/pod{}", kBEUid));
  t.mkdirs("cpu/kubepods/burstable");
  koord::cgroup::ResourceExecutor cgroups(
      {t.root(), koord::cgroup::CgroupVersion::kV1, koord::cgroup::CgroupDriver::kCgroupfs});
  CHECK(groupIdentityMissingInterface(cgroups) == t.path("cpu/kubepods/cpu.bvt_warp_ns").string());
  // Even asked directly, the executor creates no file.
  applyBvtRule(cgroups, rule(kLSAndBE), {pod(kBEUid, QoSClass::kBE, KubeQoS::kBestEffort)},
               nullptr);
  CHECK_FALSE(fs::exists(t.path("cpu/kubepods/besteffort/cpu.bvt_warp_ns")));
  CHECK_FALSE(
      fs::exists(t.path(fmt::format("cpu/kubepods/besteffort/pod{}/cpu.bvt_warp_ns", kBEUid))));
}

TEST_CASE("group identity: the kernel switch", "[koordlet][bvt]") {
  const auto gi = "proc/sys/kernel/sched_group_identity_enabled";
  const auto core = "proc/sys/kernel/sched_core";
  {
    // Older Anolis kernels have no switch: always on, nothing written or created.
    TempTree t("koord-bvt");
    CHECK(prepareGroupIdentitySysctl(t.path("proc"), true).value());
    CHECK(prepareGroupIdentitySysctl(t.path("proc"), false).value());
    CHECK_FALSE(fs::exists(t.path(gi)));
  }
  {
    TempTree t("koord-bvt");
    t.write(gi, "0\n");
    t.write(core, "1\n");
    // A disabled rule on a switched-off kernel: nothing to undo, no cgroup write.
    CHECK_FALSE(prepareGroupIdentitySysctl(t.path("proc"), false).value());
    CHECK(t.read(gi) == "0\n");
    // Enabling turns core scheduling off first, then group identity on.
    CHECK(prepareGroupIdentitySysctl(t.path("proc"), true).value());
    CHECK(t.read(core) == "0");
    CHECK(t.read(gi) == "1");
    // Disabled again: the switch stays on, and the cgroups are reset to 0.
    CHECK(prepareGroupIdentitySysctl(t.path("proc"), false).value());
    CHECK(t.read(gi) == "1");
    t.write(gi, "on\n");
    CHECK_FALSE(prepareGroupIdentitySysctl(t.path("proc"), true));
  }
}

TEST_CASE("group identity hook: a new pod's cgroup at PreRunPodSandbox", "[koordlet][bvt]") {
  StateReset reset;
  AnolisTree tree;
  koord::FeatureGate gates(koord::apis::koordletFeatures());
  CHECK(gates.enabled("GroupIdentity"));
  const auto registry = enabledHooks(koordletRuntimeHooks(), gates);
  const auto& sandbox_hooks = registry.at(HookStage::kPreRunPodSandbox);
  const RuntimeHook* hook = nullptr;
  for (const auto* h : sandbox_hooks) {
    if (h->name == "GroupIdentity")
      hook = h;
  }
  REQUIRE(hook != nullptr);
  REQUIRE(hook->reconcile);
  CHECK(hook->reconcile->level == ReconcileLevel::kPod);

  auto call = [&](const char* qos, const std::string& parent,
                  const koord::cgroup::ResourceExecutor* cgroups) {
    hookapi::PodSandboxHookRequest req;
    req.mutable_pod_meta()->set_name("new");
    req.mutable_pod_meta()->set_namespace_("default");
    if (qos != nullptr)
      (*req.mutable_labels())[std::string(koord::apis::kLabelPodQoS)] = qos;
    req.set_cgroup_parent(parent);
    hookapi::PodSandboxHookResponse resp;
    hook->pod_hook(PodHookContext{req, cgroups}, resp);
    // Nothing for runtime-proxy to apply: the value is in the cgroup.
    CHECK_FALSE(resp.has_resources());
  };
  const std::string be_pod = fmt::format("kubepods/besteffort/pod{}", kBEUid);
  const std::string ls_pod = fmt::format("kubepods/burstable/pod{}", kLSUid);
  const std::string g_pod = fmt::format("kubepods/pod{}", kGuaranteedUid);

  // No rule read yet: nothing.
  call("BE", "/" + be_pod, &tree.cgroups);
  CHECK(tree.bvt(be_pod) == "0");

  groupIdentityState().set(std::make_shared<const BvtRule>(rule(kLSAndBE)), true);
  call("BE", "/" + be_pod, &tree.cgroups);
  CHECK(tree.bvt(be_pod) == "-1");
  call(nullptr, "/" + ls_pod, &tree.cgroups);  // unlabelled Burstable: LS's value
  CHECK(tree.bvt(ls_pod) == "2");
  call("LSR", "/" + g_pod, &tree.cgroups);  // LSR disabled: 0
  CHECK(tree.bvt(g_pod) == "0");
  // A cgroup not there yet, or no cgroups to write: nothing, and no file created.
  call("BE", "/kubepods/besteffort/pod" + std::string(kGoneUid) + "x", &tree.cgroups);
  call("LS", "/" + ls_pod, nullptr);

  // A disabled rule on a kernel whose switch is off: the hook leaves cgroups alone.
  groupIdentityState().set(std::make_shared<const BvtRule>(rule("{}")), false);
  call("BE", "/" + be_pod, &tree.cgroups);
  CHECK(tree.bvt(be_pod) == "-1");
  // The same rule on a kernel still switched on resets the pod.
  groupIdentityState().set(std::make_shared<const BvtRule>(rule("{}")), true);
  call("BE", "/" + be_pod, &tree.cgroups);
  CHECK(tree.bvt(be_pod) == "0");
}
