// CPUSetAllocator: the cpuset each kind of pod gets from the node's CPU pools (Koordinator's
// cpusetRule), the rule rebuilt from NodeResourceTopology annotations, the hook's answers to
// runtime-proxy, and the reconciler writing running pods' cgroups when the pools change.
#include <catch2/catch.hpp>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "koord/apis/extension.h"
#include "koord/apis/features.h"
#include "koord/apis/node_resource_topology.h"
#include "koord/cgroup/resource_executor.h"
#include "koord/core/feature_gate.h"
#include "koord/core/log.h"
#include "koordinator/runtime/v1alpha1/api.pb.h"
#include "runtimehooks/cpuset/cpuset_allocator.h"
#include "runtimehooks/cpuset/cpuset_reconcile.h"
#include "runtimehooks/cpuset/cpuset_rule.h"
#include "runtimehooks/cpuset/cpuset_rule_store.h"
#include "runtimehooks/hook_table.h"
#include "runtimehooks/hookserver/runtime_hook_service.h"
#include "temp_tree.h"

using namespace koord::roles::koordlet;
using koord::apis::KubeQoS;
using koord::kube::Annotations;
using koord::kube::Labels;

namespace {

// Two NUMA nodes: LS pools without the CPUs of an LSR pod (0 and 4), BE pools with them.
constexpr std::string_view kPools =
    R"([{"socket":0,"node":0,"cpuset":"1-3"},{"socket":0,"node":1,"cpuset":"5-7"}])";
constexpr std::string_view kBEPools =
    R"([{"socket":0,"node":0,"cpuset":"0-3"},{"socket":0,"node":1,"cpuset":"4-7"}])";

Labels nrtAnnotations(std::string_view policy = "none", std::string_view pools = kPools,
                      std::string_view system_qos = R"({"cpuset":"8-9"})") {
  Labels a = {
      {std::string(koord::apis::kAnnotationNodeCPUSharedPools), std::string(pools)},
      {std::string(koord::apis::kAnnotationNodeBECPUSharedPools), std::string(kBEPools)},
      {std::string(koord::apis::kAnnotationKubeletCPUManagerPolicy),
       R"({"policy":")" + std::string(policy) + R"("})"},
  };
  if (!system_qos.empty())
    a.emplace(koord::apis::kAnnotationNodeSystemQOSResource, std::string(system_qos));
  return a;
}

CPUSetRule ruleOf(const Labels& annotations) {
  auto rule = parseCPUSetRule(annotations);
  REQUIRE(rule.has_value());
  return *rule;
}

Labels qosLabel(std::string_view qos) {
  if (qos.empty())
    return {};
  return {{std::string(koord::apis::kLabelPodQoS), std::string(qos)}};
}

Annotations status(std::string_view value) {
  if (value.empty())
    return {};
  return {{std::string(kAnnotationResourceStatus), std::string(value)}};
}

constexpr std::string_view kNode1CPU =
    R"({"numaNodeResources":[{"node":1,"resources":{"cpu":"2"}}]})";
constexpr std::string_view kNode0Memory =
    R"({"numaNodeResources":[{"node":0,"resources":{"memory":"1Gi"}}]})";
constexpr std::string_view kBothBatch =
    R"({"numaNodeResources":[{"node":0,"resources":{"kubernetes.io/batch-cpu":"500"}},)"
    R"({"node":1,"resources":{"kubernetes.io/batch-cpu":1000}}]})";

// The rule's store is the koordlet's one: each test that fills it empties it again.
struct StoreReset {
  StoreReset() { cpusetRuleStore().reset(); }
  ~StoreReset() { cpusetRuleStore().reset(); }
};

struct LogCapture {
  LogCapture() {
    koord::log::setSink([this](std::string_view line) { lines.emplace_back(line); });
  }
  ~LogCapture() { koord::log::setSink(nullptr); }
  std::size_t count(std::string_view text) const {
    std::size_t n = 0;
    for (const auto& line : lines)
      n += line.find(text) != std::string::npos ? 1 : 0;
    return n;
  }
  std::vector<std::string> lines;
};

}  // namespace

TEST_CASE("CPUSetAllocator: the cpuset each kind of pod gets", "[koordlet][cpuset]") {
  using Cpus = std::optional<std::string>;
  struct Case {
    const char* name;
    std::string_view qos;
    std::string_view resource_status;
    KubeQoS kube_qos;
    std::string_view policy;
    bool be_cpu_manager;
    Cpus rule;                 // containerCpuset
    std::string plan;          // planContainerCPUSet's cpus
    bool unset_quota = false;  // planContainerCPUSet's quota
  };
  const Case cases[] = {
      {"LSE bound", "LSE", R"({"cpuset":"11,10"})", KubeQoS::kGuaranteed, "none", false, "",
       "10-11", true},
      {"LSR bound, static kubelet", "LSR", R"({"cpuset":"0,4"})", KubeQoS::kGuaranteed, "static",
       false, "", "0,4", true},
      {"NUMA-aware LS", "LS", kNode1CPU, KubeQoS::kBurstable, "none", false, "5-7", "5-7"},
      {"NUMA-aware without a QoS label", "", kNode1CPU, KubeQoS::kGuaranteed, "static", false,
       "5-7", "5-7"},
      {"memory-only NUMA resources are not NUMA-aware", "LS", kNode0Memory, KubeQoS::kBurstable,
       "none", false, "1-3,5-7", "1-3,5-7"},
      {"NUMA-aware BE with BECPUManager: the BE pools", "BE", kBothBatch, KubeQoS::kBestEffort,
       "none", true, "0-7", "0-7"},
      {"NUMA-aware BE without BECPUManager: as any BestEffort pod", "BE", kBothBatch,
       KubeQoS::kBestEffort, "none", false, "", ""},
      {"NUMA-aware BE without BECPUManager, Burstable", "BE", kBothBatch, KubeQoS::kBurstable,
       "none", false, "1-3,5-7", "1-3,5-7"},
      {"SYSTEM: the system QoS cpuset", "SYSTEM", "", KubeQoS::kBurstable, "static", false, "8-9",
       "8-9"},
      {"LS: every pool", "LS", "", KubeQoS::kBurstable, "static", false, "1-3,5-7", "1-3,5-7"},
      {"LS in the besteffort tier is still LS", "LS", "", KubeQoS::kBestEffort, "none", false,
       "1-3,5-7", "1-3,5-7"},
      {"BE: left to BE suppression", "BE", "", KubeQoS::kBestEffort, "none", true, "", ""},
      {"BestEffort without a QoS label", "", "", KubeQoS::kBestEffort, "none", false, "", ""},
      {"Burstable, kubelet policy none", "", "", KubeQoS::kBurstable, "none", false, "1-3,5-7",
       "1-3,5-7"},
      {"Guaranteed, kubelet policy unknown (read as none)", "", "", KubeQoS::kGuaranteed, "", false,
       "1-3,5-7", "1-3,5-7"},
      {"Burstable, kubelet policy static: the kubelet's", "", "", KubeQoS::kBurstable, "static",
       false, std::nullopt, ""},
      {"Guaranteed, kubelet policy static: the kubelet's", "", "", KubeQoS::kGuaranteed, "static",
       false, std::nullopt, ""},
      {"LSR without a cpuset, static kubelet", "LSR", R"({"numaNodeResources":[]})",
       KubeQoS::kGuaranteed, "static", false, std::nullopt, ""},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    const CPUSetRule rule = ruleOf(nrtAnnotations(c.policy));
    const Labels labels = qosLabel(c.qos);
    const Annotations annotations = status(c.resource_status);
    const bool bound = c.unset_quota;
    if (!bound) {
      auto cpus = containerCpuset(rule, labels, annotations, c.kube_qos, c.be_cpu_manager);
      REQUIRE(cpus.has_value());
      CHECK(*cpus == c.rule);
    }
    auto plan = planContainerCPUSet(&rule, labels, annotations, c.kube_qos, c.be_cpu_manager);
    REQUIRE(plan.has_value());
    CHECK(plan->cpus == c.plan);
    CHECK(plan->unset_cfs_quota == c.unset_quota);
    // Without a rule only the bound pods get a cpuset.
    auto no_rule = planContainerCPUSet(nullptr, labels, annotations, c.kube_qos, c.be_cpu_manager);
    REQUIRE(no_rule.has_value());
    CHECK(no_rule->cpus == (bound ? c.plan : ""));
  }

  // A SYSTEM pod on a node without a system QoS cpuset goes on as any other pod.
  const CPUSetRule no_system = ruleOf(nrtAnnotations("static", kPools, ""));
  auto system = containerCpuset(no_system, qosLabel("SYSTEM"), {}, KubeQoS::kGuaranteed, false);
  REQUIRE(system.has_value());
  CHECK_FALSE(system->has_value());

  // Host applications: LS only.
  const CPUSetRule rule = ruleOf(nrtAnnotations());
  auto ls_app = hostAppCpuset(rule, koord::apis::QoSClass::kLS);
  REQUIRE(ls_app.has_value());
  CHECK(*ls_app == "1-3,5-7");
  auto be_app = hostAppCpuset(rule, koord::apis::QoSClass::kBE);
  REQUIRE_FALSE(be_app.has_value());
  CHECK_THAT(be_app.error().message, Catch::Contains("only LS"));
}

TEST_CASE("CPUSetAllocator: a resource-status that does not parse changes nothing",
          "[koordlet][cpuset]") {
  const CPUSetRule rule = ruleOf(nrtAnnotations());
  for (const char* text :
       {"{", "[1]", R"({"numaNodeResources":{}})", R"({"numaNodeResources":[1]})",
        R"({"numaNodeResources":[{"node":"1"}]})", R"({"numaNodeResources":[{"node":4294967296}]})",
        R"({"numaNodeResources":[{"node":1,"resources":[]}]})",
        R"({"numaNodeResources":[{"node":1,"resources":{"cpu":"two"}}]})",
        R"({"numaNodeResources":[{"node":1,"resources":{"cpu":1.5}}]})"}) {
    INFO(text);
    auto cpus = containerCpuset(rule, qosLabel("LS"), status(text), KubeQoS::kBurstable, false);
    CHECK_FALSE(cpus.has_value());
    CHECK_FALSE(planContainerCPUSet(&rule, qosLabel("LS"), status(text), KubeQoS::kBurstable, false)
                    .has_value());
  }
  // More NUMA entries than Linux has nodes: refused before any is read.
  std::string many = R"({"numaNodeResources":[)";
  for (std::size_t i = 0; i <= kMaxResourceStatusNumaNodes; ++i)
    many += std::string(i ? "," : "") + R"({"node":0})";
  many += "]}";
  auto too_many = parsePodResourceStatus(status(many));
  REQUIRE_FALSE(too_many.has_value());
  CHECK_THAT(too_many.error().message, Catch::Contains("more than 1024"));
  // null members keep their zero values, as Go reads them.
  auto nulls = parsePodResourceStatus(status(
      R"({"cpuset":null,"numaNodeResources":[null,{"node":null,"resources":{"cpu":"1"}}]})"));
  REQUIRE(nulls.has_value());
  CHECK(nulls->cpuset.empty());
  CHECK(nulls->cpu_numa_nodes == std::vector<std::int32_t>{0});
}

TEST_CASE("CPUSetAllocator: the rule from the NodeResourceTopology's annotations",
          "[koordlet][cpuset]") {
  const CPUSetRule rule = ruleOf(nrtAnnotations("static"));
  CHECK(rule.kubelet_policy == "static");
  REQUIRE(rule.pools.size() == 2);
  CHECK(rule.pools[1] == CPUSetPool{1, {5, 6, 7}});
  CHECK(rule.be_pools[0] == CPUSetPool{0, {0, 1, 2, 3}});
  CHECK(rule.system_qos_cpuset == "8-9");
  CHECK(allPoolsCpuset(rule) == "1-3,5-7");
  // Nothing reported: an empty rule (every pool joined is "").
  auto empty = parseCPUSetRule({});
  REQUIRE(empty.has_value());
  CHECK(empty->pools.empty());
  CHECK(allPoolsCpuset(*empty).empty());
  // A pool left without CPUs (the reporter keeps it, with no cpuset) adds none.
  const CPUSetRule emptied =
      ruleOf(nrtAnnotations("none", R"([{"node":0,"cpuset":""},{"node":1,"cpuset":"5"}])"));
  CHECK(allPoolsCpuset(emptied) == "5");

  struct Bad {
    const char* name;
    Labels annotations;
    const char* names;
  };
  const Bad bad[] = {
      {"pools not JSON", nrtAnnotations("none", "["), "cpu-shared-pools"},
      {"a pool's cpuset not a CPU list", nrtAnnotations("none", R"([{"node":0,"cpuset":"a"}])"),
       "cpu-shared-pools"},
      {"a reversed range", nrtAnnotations("none", R"([{"node":0,"cpuset":"3-1"}])"),
       "cpu-shared-pools"},
      {"system QoS cpuset", nrtAnnotations("none", kPools, R"({"cpuset":"x"})"),
       "system-qos-resource"},
      {"system QoS not an object", nrtAnnotations("none", kPools, "[]"), "system-qos-resource"},
      {"system QoS exclusive not a bool",
       nrtAnnotations("none", kPools, R"({"cpuset":"1","cpusetExclusive":"yes"})"),
       "system-qos-resource"},
  };
  for (const Bad& b : bad) {
    INFO(b.name);
    auto r = parseCPUSetRule(b.annotations);
    REQUIRE_FALSE(r.has_value());
    CHECK_THAT(r.error().message, Catch::Contains(b.names));
  }
  Labels bad_policy = nrtAnnotations();
  bad_policy[std::string(koord::apis::kAnnotationKubeletCPUManagerPolicy)] = R"({"policy":1})";
  CHECK_FALSE(parseCPUSetRule(bad_policy).has_value());
}

TEST_CASE("CPUSetAllocator: the store keeps its rule over a malformed NodeResourceTopology",
          "[koordlet][cpuset]") {
  StoreReset reset;
  CPUSetRuleStore store;
  CHECK(store.rule() == nullptr);
  auto first = store.update(nrtAnnotations());
  REQUIRE(first.has_value());
  CHECK(*first);
  const auto generation = store.generation();
  // The same annotations again: no change.
  auto same = store.update(nrtAnnotations());
  REQUIRE(same.has_value());
  CHECK_FALSE(*same);
  CHECK(store.generation() == generation);

  LogCapture log;
  const Labels malformed = nrtAnnotations("none", R"([{"node":0,"cpuset":"0-"}])");
  for (int i = 0; i < 3; ++i) {
    auto r = store.update(malformed);
    REQUIRE_FALSE(r.has_value());
    CHECK_THAT(r.error().message, Catch::Contains("cpu-shared-pools"));
  }
  // Logged once, the rule unchanged.
  CHECK(log.count("cpu-shared-pools") == 1);
  REQUIRE(store.rule() != nullptr);
  CHECK(allPoolsCpuset(*store.rule()) == "1-3,5-7");
  CHECK(store.generation() == generation);
  // Another error is logged; a good rule again ends the run.
  CHECK_FALSE(store.update(nrtAnnotations("none", kPools, "{")).has_value());
  CHECK(log.count("system-qos-resource") == 1);
  auto fixed = store.update(nrtAnnotations("none", R"([{"node":0,"cpuset":"2-3"}])"));
  REQUIRE(fixed.has_value());
  CHECK(*fixed);
  CHECK(allPoolsCpuset(*store.rule()) == "2-3");
  CHECK(store.generation() == generation + 1);
}

TEST_CASE("CPUSetAllocator: the store follows its source", "[koordlet][cpuset]") {
  CPUSetRuleStore store;
  std::shared_ptr<const Labels> reported;
  int calls = 0;
  store.setSource(
      [&] {
        ++calls;
        return reported;
      },
      true);
  CHECK(store.beCPUManager());
  // Nothing reported yet.
  CHECK_FALSE(store.refresh());
  CHECK(store.rule() == nullptr);
  reported = std::make_shared<const Labels>(nrtAnnotations());
  CHECK(store.refresh());
  CHECK_FALSE(store.refresh());  // the same report
  // A new report with the same annotations (the reporter's resync): the rule stays.
  reported = std::make_shared<const Labels>(nrtAnnotations());
  CHECK_FALSE(store.refresh());
  reported = std::make_shared<const Labels>(nrtAnnotations("static"));
  CHECK(store.refresh());
  REQUIRE(store.rule() != nullptr);
  CHECK(store.rule()->kubelet_policy == "static");
  // A malformed report keeps the rule.
  reported = std::make_shared<const Labels>(nrtAnnotations("static", "nope"));
  {
    LogCapture quiet;
    CHECK_FALSE(store.refresh());
  }
  CHECK(store.rule()->kubelet_policy == "static");
  CHECK(calls > 0);
  {
    CPUSetRuleSourceScope scope(
        store, [&] { return reported; }, false);
    CHECK_FALSE(store.beCPUManager());
  }
  // The scope's end takes the source and the rule away.
  CHECK(store.rule() == nullptr);
  const int before = calls;
  CHECK_FALSE(store.refresh());
  CHECK(calls == before);
}

TEST_CASE("CPUSetAllocator: what runtime-proxy is told", "[koordlet][cpuset]") {
  StoreReset reset;
  koord::FeatureGate gates(koord::apis::koordletFeatures());
  const auto registry = enabledHooks(koordletRuntimeHooks(), gates);
  auto request = [](std::string_view qos, std::string_view parent,
                    std::string_view resource_status = "") {
    hookapi::ContainerResourceHookRequest req;
    req.mutable_pod_meta()->set_name("pod");
    req.mutable_pod_meta()->set_namespace_("default");
    req.mutable_container_meta()->set_name("main");
    req.set_pod_cgroup_parent(std::string(parent));
    for (const auto& [k, v] : qosLabel(qos))
      (*req.mutable_pod_labels())[k] = v;
    for (const auto& [k, v] : status(resource_status))
      (*req.mutable_pod_annotations())[k] = v;
    return req;
  };
  auto answer = [&](const hookapi::ContainerResourceHookRequest& req) {
    return containerHookAnswer(HookStage::kPreCreateContainer, req, registry, nullptr);
  };
  const auto ls = request("LS", "/kubepods/burstable/pod1");
  const auto burstable = request("", "kubepods-burstable-pod1.slice");
  const auto best_effort = request("", "/kubepods/besteffort/pod1");
  // No NodeResourceTopology read yet: nothing for unbound pods.
  CHECK_FALSE(answer(ls).has_container_resources());

  REQUIRE(cpusetRuleStore().update(nrtAnnotations()).has_value());
  auto ls_answer = answer(ls);
  CHECK(ls_answer.container_resources().cpuset_cpus() == "1-3,5-7");
  CHECK(ls_answer.container_resources().cpu_quota() == 0);  // the quota is left alone
  CHECK(answer(burstable).container_resources().cpuset_cpus() == "1-3,5-7");
  CHECK(answer(request("LS", "/kubepods/burstable/pod1", kNode1CPU))
            .container_resources()
            .cpuset_cpus() == "5-7");
  // BestEffort: "" in Koordinator's terms, which koord's proxy cannot send: no change.
  CHECK_FALSE(answer(best_effort).has_container_resources());
  // A bound pod as before: its CPUs and no quota.
  auto bound = answer(request("LSR", "/kubepods/pod1", R"({"cpuset":"0,4"})"));
  CHECK(bound.container_resources().cpuset_cpus() == "0,4");
  CHECK(bound.container_resources().cpu_quota() == -1);
  // A malformed annotation: nothing.
  CHECK_FALSE(answer(request("LS", "/kubepods/burstable/pod1", "{")).has_container_resources());
  // The kubelet's static policy keeps its own pods.
  REQUIRE(cpusetRuleStore().update(nrtAnnotations("static")).has_value());
  CHECK_FALSE(answer(burstable).has_container_resources());
  CHECK(answer(ls).container_resources().cpuset_cpus() == "1-3,5-7");
  // The gate off: nothing at all.
  gates.set({{"CPUSetAllocator", false}});
  const auto off = enabledHooks(koordletRuntimeHooks(), gates);
  CHECK_FALSE(containerHookAnswer(HookStage::kPreCreateContainer, ls, off, nullptr)
                  .has_container_resources());

  // The bound pod's sandbox: no CFS quota either; other pods' sandboxes are left alone.
  hookapi::PodSandboxHookRequest sandbox;
  sandbox.mutable_pod_meta()->set_name("pod");
  (*sandbox.mutable_labels())[std::string(koord::apis::kLabelPodQoS)] = "LSR";
  (*sandbox.mutable_annotations())[std::string(kAnnotationResourceStatus)] = R"({"cpuset":"0"})";
  CHECK(podSandboxHookAnswer(HookStage::kPreRunPodSandbox, sandbox, registry, nullptr)
            .resources()
            .cpu_quota() == -1);
  (*sandbox.mutable_labels())[std::string(koord::apis::kLabelPodQoS)] = "LS";
  CHECK_FALSE(podSandboxHookAnswer(HookStage::kPreRunPodSandbox, sandbox, registry, nullptr)
                  .has_resources());
}

TEST_CASE("CPUSetAllocator: kube QoS from the CRI cgroup parent", "[koordlet][cpuset]") {
  CHECK(kubeQoSOfCgroupParent("/kubepods/besteffort/pod1") == KubeQoS::kBestEffort);
  CHECK(kubeQoSOfCgroupParent("kubepods-besteffort-pod1.slice") == KubeQoS::kBestEffort);
  CHECK(kubeQoSOfCgroupParent("/kubepods/burstable/pod1") == KubeQoS::kBurstable);
  CHECK(kubeQoSOfCgroupParent("/kubepods/pod1") == KubeQoS::kGuaranteed);
  CHECK(kubeQoSOfCgroupParent("") == KubeQoS::kGuaranteed);
}

namespace {

const std::string kLSUid = "6e2b5f4e-2c6a-4f0c-9a51-2d8a1c0f3b7e";
const std::string kLSRUid = "7f3c6a5f-3d7b-4a1d-8b62-3e9b2d1a4c8f";
const std::string kMain(64, 'a');
const std::string kSandbox(64, 'b');
const std::string kBoundMain(64, 'c');
const std::string kBoundSandbox(64, 'd');

PodMeta runningPod(const std::string& uid, std::string_view qos, KubeQoS kube_qos,
                   const std::string& container_id) {
  PodMeta pod;
  pod.namespace_ = "default";
  pod.name = "pod-" + uid.substr(0, 4);
  pod.uid = uid;
  pod.phase = PodPhase::kRunning;
  pod.kube_qos = kube_qos;
  pod.labels = qosLabel(qos);
  ContainerMeta c;
  c.name = "main";
  c.runtime = "containerd";
  c.id = container_id;
  pod.containers.push_back(c);
  return pod;
}

}  // namespace

TEST_CASE("CPUSetAllocator: the reconciler follows the pools into running containers",
          "[koordlet][cpuset]") {
  koord::testing::TempTree t("koord-cpuset");
  const std::string ls_dir = "cpuset/kubepods/burstable/pod" + kLSUid;
  const std::string lsr_dir = "kubepods/pod" + kLSRUid;
  t.write(ls_dir + "/cpuset.cpus", "0-15\n");
  t.write(ls_dir + "/" + kMain + "/cpuset.cpus", "0-15\n");
  t.write(ls_dir + "/" + kSandbox + "/cpuset.cpus", "0-15\n");
  for (const auto& id : {kBoundMain, kBoundSandbox}) {
    t.write("cpuset/" + lsr_dir + "/" + id + "/cpuset.cpus", "0-15\n");
    t.write("cpu/" + lsr_dir + "/" + id + "/cpu.cfs_quota_us", "100000\n");
  }
  t.write("cpu/" + lsr_dir + "/cpu.cfs_quota_us", "200000\n");
  t.write("cpuset/host-latency-sensitive/nginx/cpuset.cpus", "0-15\n");
  koord::cgroup::ResourceExecutor e(
      {t.root(), koord::cgroup::CgroupVersion::kV1, koord::cgroup::CgroupDriver::kCgroupfs});

  std::vector<PodMeta> pods = {
      runningPod(kLSUid, "LS", KubeQoS::kBurstable, kMain),
      runningPod(kLSRUid, "LSR", KubeQoS::kGuaranteed, kBoundMain),
  };
  pods[1].annotations = status(R"({"cpuset":"0,4"})");
  HostApplication app;
  app.name = "nginx";
  app.qos = koord::apis::QoSClass::kLS;
  const std::vector<HostApplication> apps = {app};

  // No rule yet: only the bound pod, its CPUs and no quota, sandbox included.
  auto before = reconcileCPUSets(e, nullptr, pods, apps, false);
  CHECK(before.errors.empty());
  CHECK(t.read(ls_dir + "/" + kMain + "/cpuset.cpus") == "0-15\n");
  CHECK(t.read("cpuset/" + lsr_dir + "/" + kBoundMain + "/cpuset.cpus") == "0,4");
  CHECK(t.read("cpuset/" + lsr_dir + "/" + kBoundSandbox + "/cpuset.cpus") == "0,4");
  CHECK(t.read("cpu/" + lsr_dir + "/" + kBoundMain + "/cpu.cfs_quota_us") == "-1");
  CHECK(t.read("cpu/" + lsr_dir + "/cpu.cfs_quota_us") == "-1");

  StoreReset reset;
  CPUSetRuleStore& store = cpusetRuleStore();
  REQUIRE(store.update(nrtAnnotations()).has_value());
  auto stats = reconcileCPUSets(e, store.rule().get(), pods, apps, false);
  CHECK(stats.errors.empty());
  CHECK(t.read(ls_dir + "/" + kMain + "/cpuset.cpus") == "1-3,5-7");
  CHECK(t.read(ls_dir + "/" + kSandbox + "/cpuset.cpus") == "1-3,5-7");
  CHECK(t.read(ls_dir + "/cpuset.cpus") == "0-15\n");  // the pod's own cgroup is left alone
  CHECK(t.read("cpuset/host-latency-sensitive/nginx/cpuset.cpus") == "1-3,5-7");
  CHECK(stats.written == 3);

  // The pools change (a new LSE pod took CPUs 5-7): the next round writes the new pool.
  REQUIRE(store.update(nrtAnnotations("none", R"([{"node":0,"cpuset":"1-3"}])")).has_value());
  reconcileCPUSets(e, store.rule().get(), pods, apps, false);
  CHECK(t.read(ls_dir + "/" + kMain + "/cpuset.cpus") == "1-3");
  CHECK(t.read("cpuset/host-latency-sensitive/nginx/cpuset.cpus") == "1-3");
  // A steady node writes nothing.
  auto again = reconcileCPUSets(e, store.rule().get(), pods, apps, false);
  CHECK(again.written == 0);
  CHECK(again.errors.empty());

  // Pods that are not running, and BestEffort pods, are left alone; a malformed annotation and
  // a non-LS host application are reported, by pod and by app.
  std::vector<PodMeta> others = {runningPod(kLSUid, "LS", KubeQoS::kBurstable, kMain)};
  others[0].phase = PodPhase::kPending;
  REQUIRE(store.update(nrtAnnotations("none", R"([{"node":0,"cpuset":"9"}])")).has_value());
  reconcileCPUSets(e, store.rule().get(), others, {}, false);
  CHECK(t.read(ls_dir + "/" + kMain + "/cpuset.cpus") == "1-3");
  others[0].phase = PodPhase::kRunning;
  others[0].annotations = status("{");
  HostApplication be_app = app;
  be_app.qos = koord::apis::QoSClass::kBE;
  const std::vector<HostApplication> be_apps = {be_app};
  auto bad = reconcileCPUSets(e, store.rule().get(), others, be_apps, false);
  REQUIRE(bad.errors.size() == 2);
  CHECK(bad.errors[0].first == others[0].key());
  CHECK_THAT(bad.errors[0].second, Catch::Contains("resource-status"));
  CHECK(bad.errors[1].first == "host application nginx");
  CHECK(t.read(ls_dir + "/" + kMain + "/cpuset.cpus") == "1-3");
  CHECK(t.read("cpuset/host-latency-sensitive/nginx/cpuset.cpus") == "1-3");
}

TEST_CASE("CPUSetAllocator: the sandbox is the one other container directory",
          "[koordlet][cpuset]") {
  koord::testing::TempTree t("koord-sandbox");
  const std::string pod_dir = "kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" +
                              std::string("6e2b5f4e_2c6a_4f0c_9a51_2d8a1c0f3b7e") + ".slice";
  t.mkdirs("cpuset/" + pod_dir + "/cri-containerd-" + kMain + ".scope");
  t.mkdirs("cpuset/" + pod_dir + "/cri-containerd-" + kSandbox + ".scope");
  t.mkdirs("cpuset/" + pod_dir + "/not-a-container");
  koord::cgroup::ResourceExecutor e(
      {t.root(), koord::cgroup::CgroupVersion::kV1, koord::cgroup::CgroupDriver::kSystemd});
  PodMeta pod = runningPod(kLSUid, "LS", KubeQoS::kBurstable, kMain);
  auto sandbox = sandboxCgroupDir(e, pod_dir, pod);
  REQUIRE(sandbox.has_value());
  CHECK(*sandbox == pod_dir + "/cri-containerd-" + kSandbox + ".scope");
  // Two candidates (a container the pod list does not know yet): none.
  t.mkdirs("cpuset/" + pod_dir + "/cri-containerd-" + std::string(64, 'e') + ".scope");
  CHECK_FALSE(sandboxCgroupDir(e, pod_dir, pod).has_value());
  // No container created yet: the runtime is unknown, nothing.
  pod.containers[0].id.clear();
  CHECK_FALSE(sandboxCgroupDir(e, pod_dir, pod).has_value());
}
