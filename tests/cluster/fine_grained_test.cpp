// Fine-grained resources end to end on the real node (containerd + kubelet behind runtime-proxy):
// the koordlet reports the node's CPU topology and two fake GPUs, koord-scheduler binds an LSR
// pod to CPUs and shares GPUs by memory ratio, and the containers see both from their first
// instruction (cpuset from the CPUSetAllocator hook, NVIDIA_VISIBLE_DEVICES from GPUEnvInject).
#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <unistd.h>
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "cluster_api.h"
#include "cluster_env.h"
#include "koord/apis/xpu_device_info.h"
#include "koord/cgroup/cpu_topology.h"
#include "koord/kube/quantity.h"
#include "loopback_http.h"
#include "manifests.h"
#include "scheduler_process.h"
#include "subprocess.h"
#include "temp_tree.h"

using namespace std::chrono_literals;
namespace json = boost::json;
using koord::kube::ResourceRef;
using koord::testing::eventually;
using koord::testing::koordBinary;
using koord::testing::KubeApi;
using koord::testing::loopbackGet;
using koord::testing::named;
using koord::testing::ok;
using koord::testing::str;
using namespace koord::testing::resources;

namespace {

const ResourceRef kNodeResourceTopologies{
    "topology.node.k8s.io", "v1alpha1", "noderesourcetopologies", "", "", ""};
constexpr const char* kSchedulerName = "koord-scheduler-fine";

std::string readLine(const std::string& path) {
  std::ifstream in(path);
  std::string s;
  std::getline(in, s);
  return s;
}

// The first line a pod's main container logged ("first: ..."), once it has one.
std::string firstLogLine(const std::string& ns, const std::string& pod, const std::string& uid) {
  const std::string log = "/var/log/pods/" + ns + "_" + pod + "_" + uid + "/main/0.log";
  std::string line;
  (void)eventually(30s, [&] {
    line = readLine(log);
    return line.find("first:") != std::string::npos;
  });
  return line;
}

// A pod for koord-scheduler, pinned to the kubelet node by label (other tests leave API-only
// nodes behind), on the host network with the local image.
json::object schedulerPod(const std::string& name, const std::string& node, const std::string& qos,
                          const std::string& script, json::object requests, json::object limits) {
  auto env = koord::testing::readClusterEnv();
  return json::object{
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata",
       json::object{{"name", name}, {"labels", json::object{{"koordinator.sh/qosClass", qos}}}}},
      {"spec", json::object{{"schedulerName", kSchedulerName},
                            {"nodeSelector", json::object{{"kubernetes.io/hostname", node}}},
                            {"hostNetwork", true},
                            {"terminationGracePeriodSeconds", 1},
                            {"containers",
                             json::array{json::object{
                                 {"name", "main"},
                                 {"image", koord::testing::needEnv(env, "KOORD_TEST_IMAGE")},
                                 {"imagePullPolicy", "Never"},
                                 {"command", json::array{"sh", "-c", script}},
                                 {"resources", json::object{{"requests", std::move(requests)},
                                                            {"limits", std::move(limits)}}}}}}}}};
}

koord::apis::XpuDeviceInfo fakeGpu(const std::string& uuid, const std::string& minor,
                                   const std::string& bus) {
  koord::apis::XpuDeviceInfo d;
  d.vendor = "nvidia";
  d.model = "NVIDIA-A100-SXM4-80GB";
  d.uuid = uuid;
  d.minor = minor;
  d.resources = {{"koordinator.sh/gpu-core", "100"}, {"koordinator.sh/gpu-memory", "81920Mi"}};
  koord::apis::XpuDeviceTopology t;
  t.socket_id = "0";
  t.node_id = "0";
  t.pcie_id = "pci0000:3a";
  t.bus_id = bus;
  d.topology = std::move(t);
  koord::apis::XpuDeviceStatus s;
  s.healthy = true;
  d.status = std::move(s);
  return d;
}

std::string annotation(const json::value& obj, const std::string& key) {
  const auto* meta = obj.as_object().if_contains("metadata");
  if (meta == nullptr)
    return "";
  const auto* annotations = meta->as_object().if_contains("annotations");
  if (annotations == nullptr || !annotations->is_object())
    return "";
  const auto* v = annotations->as_object().if_contains(key);
  return v != nullptr && v->is_string() ? std::string(v->as_string()) : "";
}

// The cpuset of resource-status ({"cpuset":"1",...}).
std::string statusCpuset(const json::value& pod) {
  const std::string text = annotation(pod, "scheduling.koordinator.sh/resource-status");
  if (text.empty())
    return "";
  auto v = json::parse(text);
  const auto* cpuset = v.as_object().if_contains("cpuset");
  return cpuset != nullptr && cpuset->is_string() ? std::string(cpuset->as_string()) : "";
}

// The GPU minors of device-allocated, comma-separated as GPUEnvInject writes them.
std::string gpuMinors(const json::value& pod) {
  const std::string text = annotation(pod, "scheduling.koordinator.sh/device-allocated");
  if (text.empty())
    return "";
  auto v = json::parse(text);
  std::string out;
  if (const auto* gpus = v.as_object().if_contains("gpu")) {
    for (const auto& g : gpus->as_array()) {
      if (!out.empty())
        out += ',';
      out += std::to_string(g.at("minor").to_number<int>());
    }
  }
  return out;
}

std::string podScheduledMessage(const json::value& pod) {
  const auto* status = pod.as_object().if_contains("status");
  if (status == nullptr)
    return "";
  const auto* conditions = status->as_object().if_contains("conditions");
  if (conditions == nullptr)
    return "";
  for (const auto& c : conditions->as_array()) {
    if (str(c, {"type"}) == "PodScheduled")
      return str(c, {"message"});
  }
  return "";
}

}  // namespace

TEST_CASE("fine-grained: LSR cpuset, shared pools and shared GPUs on the real node",
          "[fine-grained]") {
  KubeApi api(koord::testing::tokenConfig());
  koord::testing::applyCrds(*api);
  koord::testing::applyPriorityClasses(*api);
  auto env = koord::testing::readClusterEnv();
  const std::string node = koord::testing::needEnv(env, "KOORD_NODE_NAME");
  koord::testing::TestNamespace sys(*api, "koord-fine-sys");
  koord::testing::PodNamespace work(*api, "koord-fine");
  struct Cleanup {
    koord::kube::RestClient& api;
    std::string ns;
    std::string node;
    ~Cleanup() {
      koord::testing::removeAllPodsNow(api, ns);
      (void)api.removeSync(named(kDevices, node));
    }
  } cleanup{*api, work.name(), node};

  // Colocation on: the manager's device plugins act only on nodes where it is.
  ok(api->createSync(named(kConfigMaps, "", sys.name()),
                     json::object{{"apiVersion", "v1"},
                                  {"kind", "ConfigMap"},
                                  {"metadata", {{"name", "slo-controller-config"}}},
                                  {"data", {{"colocation-config", R"({"enable": true})"}}}}),
     "slo-controller-config");
  koord::testing::Subprocess manager(
      {koordBinary(), "manager", "--kubeconfig=" + koord::testing::needEnv(env, "KOORD_KUBECONFIG"),
       "--leader-election-namespace=" + sys.name(), "--config-namespace=" + sys.name(),
       "--metrics-addr=127.0.0.1:" + std::to_string(koord::testing::freeLoopbackPort()),
       "--health-probe-addr=127.0.0.1:" + std::to_string(koord::testing::freeLoopbackPort()),
       "--feature-gates=PodMutatingWebhook=false,PodValidatingWebhook=false,"
       "ElasticMutatingWebhook=false,ElasticValidatingWebhook=false"},
      {{"POD_NAMESPACE", sys.name()}});

  // Two GPUs as the device-daemon would report them.
  koord::testing::TempTree tree("koord-fine-e2e");
  tree.mkdirs("infos");
  {
    std::vector<koord::apis::XpuDeviceInfo> gpus = {fakeGpu("GPU-fine-0", "0", "0000:3b:00.0"),
                                                    fakeGpu("GPU-fine-1", "1", "0000:86:00.0")};
    std::ofstream out(tree.path("infos/ic-device"));
    out << koord::apis::formatXpuDeviceInfos(gpus);
  }
  const std::string cluster_dir = koord::testing::needEnv(env, "KOORD_CLUSTER_DIR");
  const std::string hook_socket = cluster_dir + "/koordlet-run/koordlet.sock";
  std::filesystem::create_directories(cluster_dir + "/koordlet-run");
  const std::string data_dir = cluster_dir + "/koordlet-data-" + std::to_string(::getpid());
  koord::testing::Subprocess koordlet(
      {koordBinary(), "koordlet", "-kubeconfig=" + koord::testing::needEnv(env, "KOORD_KUBECONFIG"),
       "-cgroup-root-dir=/sys/fs/cgroup/",
       "-kubelet-config-file=" + koord::testing::needEnv(env, "KOORD_KUBELET_ROOT_DIR") +
           "/config.yaml",
       "-addr=127.0.0.1:" + std::to_string(koord::testing::freeLoopbackPort()),
       "-xpu-device-infos-dir=" + tree.path("infos").string(), "-node-topology-sync-interval=1s",
       "-feature-gates=Accelerators=true,GPUEnvInject=true,BECPUSuppress=false",
       "-runtime-hooks-addr=" + hook_socket, "-runtime-hooks-host-endpoint=" + hook_socket,
       "-runtime-hooks-config-path=" + cluster_dir + "/hookserver.d",
       // Checkpoints of this run only: another test's metric cache or models must not be restored.
       "-tsdb-path=" + data_dir + "/metric-data",
       "-prediction-checkpoint-filepath=" + data_dir + "/prediction-checkpoints", "-v=4"},
      {{"NODE_NAME", node}, {"agent_mode", "hostMode"}});
  struct Unregister {
    std::string file;
    ~Unregister() { std::filesystem::remove(file); }
  } unregister{cluster_dir + "/hookserver.d/koordlet.json"};

  // koord-scheduler with the two plugins as the chart enables them, DeviceShare packing.
  const auto config_path = tree.path("scheduler.yaml");
  {
    std::ofstream f(config_path);
    f << koord::testing::schedulerConfigHeader(sys.name())
      << "profiles:\n"
         "- schedulerName: "
      << kSchedulerName
      << "\n"
         "  plugins:\n"
         "    preFilter: {enabled: [{name: NodeNUMAResource}, {name: DeviceShare}]}\n"
         "    filter: {enabled: [{name: NodeNUMAResource}, {name: DeviceShare}]}\n"
         "    score: {enabled: [{name: NodeNUMAResource, weight: 1}, {name: DeviceShare, "
         "weight: 1}]}\n"
         "    reserve: {enabled: [{name: NodeNUMAResource}, {name: DeviceShare}]}\n"
         "    preBind: {enabled: [{name: DefaultPreBind}]}\n"
         "  pluginConfig:\n"
         "  - name: DeviceShare\n"
         "    args: {scoringStrategy: {type: MostAllocated, resources: [{name: "
         "koordinator.sh/gpu-memory-ratio, weight: 1}]}}\n";
  }
  koord::testing::SchedulerProcess scheduler(config_path.string());

  // The koordlet's reports and the manager's node resources.
  INFO("koordlet:\n" << koordlet.stderrSoFar().substr(0, 4000));
  REQUIRE(eventually(90s, [&] {
    auto nrt = api->getSync(named(kNodeResourceTopologies, node));
    return nrt && !annotation(*nrt, "node.koordinator.sh/cpu-topology").empty();
  }));
  REQUIRE(eventually(90s, [&] {
    auto n = api->getSync(named(kNodes, node));
    return n && str(*n, {"status", "allocatable", "koordinator.sh/gpu-memory-ratio"}) == "200";
  }));
  REQUIRE(eventually(
      30s, [&] { return std::filesystem::exists(cluster_dir + "/hookserver.d/koordlet.json"); }));
  REQUIRE(eventually(60s, [&] { return loopbackGet(scheduler.port, "/healthz") == "ok"; }));

  // 1. An LSR pod with one CPU: bound with a resource-status cpuset, which its container's
  //    cpuset.cpus equals from its first command (the hook answered PreCreateContainer).
  const std::string first_cpuset =
      "echo first: $(cat /sys/fs/cgroup/cpuset/cpuset.cpus); "
      "sleep 3600";
  ok(api->createSync(named(kPods, "", work.name()),
                     schedulerPod("lsr", node, "LSR", first_cpuset,
                                  json::object{{"cpu", "1"}, {"memory", "64Mi"}},
                                  json::object{{"cpu", "1"}, {"memory", "64Mi"}})),
     "lsr pod");
  json::value lsr;
  REQUIRE(eventually(90s, [&] {
    auto p = api->getSync(named(kPods, "lsr", work.name()));
    if (!p || str(*p, {"status", "phase"}) != "Running")
      return false;
    lsr = *p;
    return true;
  }));
  const std::string lsr_cpus = statusCpuset(lsr);
  auto lsr_list = koord::cgroup::parseCpuList(lsr_cpus);
  REQUIRE(lsr_list.has_value());
  CHECK(lsr_list->size() == 1);
  // The kubelet's log line starts with the time and stream: the container's text ends it.
  CHECK_THAT(firstLogLine(work.name(), "lsr", str(lsr, {"metadata", "uid"})),
             Catch::EndsWith("first: " + lsr_cpus));

  // 2. The shared pool now leaves the LSR pod's CPU out, and an LS pod created afterwards runs
  //    on that pool from its first command.
  std::string pools;
  std::string nrt_text;
  const bool pools_follow = eventually(60s, [&] {
    auto nrt = api->getSync(named(kNodeResourceTopologies, node));
    if (!nrt)
      return false;
    nrt_text = json::serialize(*nrt);
    pools = annotation(*nrt, "node.koordinator.sh/cpu-shared-pools");
    auto parsed = json::parse(pools.empty() ? "null" : pools);
    if (!parsed.is_array() || parsed.as_array().empty())
      return false;
    for (const auto& pool : parsed.as_array()) {
      auto cpus = koord::cgroup::parseCpuList(str(pool, {"cpuset"}));
      if (!cpus || std::find(cpus->begin(), cpus->end(), lsr_list->front()) != cpus->end())
        return false;
    }
    return true;
  });
  INFO("NodeResourceTopology: " << nrt_text);
  REQUIRE(pools_follow);
  // The kubelet's CPU manager as its /configz says (this kubelet runs the default "none").
  {
    auto nrt = api->getSync(named(kNodeResourceTopologies, node));
    REQUIRE(nrt.has_value());
    const auto policy = json::parse(annotation(*nrt, "kubelet.koordinator.sh/cpu-manager-policy"));
    CHECK(str(policy, {"policy"}) == "none");
  }
  // Long enough for the koordlet's rule to follow its own report.
  std::this_thread::sleep_for(3s);
  ok(api->createSync(named(kPods, "", work.name()),
                     schedulerPod("ls", node, "LS", first_cpuset,
                                  json::object{{"cpu", "100m"}, {"memory", "32Mi"}},
                                  json::object{{"memory", "32Mi"}})),
     "ls pod");
  json::value ls;
  REQUIRE(eventually(90s, [&] {
    auto p = api->getSync(named(kPods, "ls", work.name()));
    if (!p || str(*p, {"status", "phase"}) != "Running")
      return false;
    ls = *p;
    return true;
  }));
  CHECK(statusCpuset(ls).empty());
  const std::string ls_line = firstLogLine(work.name(), "ls", str(ls, {"metadata", "uid"}));
  const auto first = ls_line.find("first: ");
  REQUIRE(first != std::string::npos);
  auto ls_cpus = koord::cgroup::parseCpuList(ls_line.substr(first + 7));
  REQUIRE(ls_cpus.has_value());
  CHECK(!ls_cpus->empty());
  for (int cpu : *ls_cpus)
    CHECK(cpu != lsr_list->front());

  // 3. GPUs by memory ratio, packed: 50 and 50 share one card, 100 takes the other, a fourth
  //    100 waits with DeviceShare's reason. Each container sees its card from the start.
  const std::string first_gpu = "echo first: $NVIDIA_VISIBLE_DEVICES; sleep 3600";
  struct GpuPod {
    const char* name;
    const char* ratio;
  };
  std::vector<std::string> minors;
  for (GpuPod g : {GpuPod{"gpu-a", "50"}, GpuPod{"gpu-b", "50"}, GpuPod{"gpu-c", "100"}}) {
    ok(api->createSync(named(kPods, "", work.name()),
                       schedulerPod(g.name, node, "LS", first_gpu,
                                    json::object{{"cpu", "10m"},
                                                 {"memory", "16Mi"},
                                                 {"koordinator.sh/gpu-memory-ratio", g.ratio}},
                                    json::object{{"memory", "16Mi"},
                                                 {"koordinator.sh/gpu-memory-ratio", g.ratio}})),
       g.name);
    json::value p;
    REQUIRE(eventually(90s, [&] {
      auto got = api->getSync(named(kPods, g.name, work.name()));
      if (!got || str(*got, {"status", "phase"}) != "Running")
        return false;
      p = *got;
      return true;
    }));
    const std::string m = gpuMinors(p);
    INFO(g.name << " device-allocated: "
                << annotation(p, "scheduling.koordinator.sh/device-allocated"));
    REQUIRE(!m.empty());
    CHECK_THAT(firstLogLine(work.name(), g.name, str(p, {"metadata", "uid"})),
               Catch::EndsWith("first: " + m));
    minors.push_back(m);
  }
  CHECK(minors[0] == minors[1]);
  CHECK(minors[2] != minors[0]);
  ok(api->createSync(
         named(kPods, "", work.name()),
         schedulerPod(
             "gpu-d", node, "LS", first_gpu,
             json::object{
                 {"cpu", "10m"}, {"memory", "16Mi"}, {"koordinator.sh/gpu-memory-ratio", "100"}},
             json::object{{"memory", "16Mi"}, {"koordinator.sh/gpu-memory-ratio", "100"}})),
     "gpu-d");
  // The node's allocatable gpu-memory-ratio is used up: NodeResourcesFit refuses it before
  // DeviceShare would ("Insufficient gpu devices"), either way a reason naming the GPUs.
  std::string waiting;
  (void)eventually(60s, [&] {
    auto p = api->getSync(named(kPods, "gpu-d", work.name()));
    if (!p)
      return false;
    waiting = podScheduledMessage(*p);
    return !waiting.empty();
  });
  CHECK_THAT(waiting, Catch::Contains("Insufficient") && Catch::Contains("gpu"));
  std::this_thread::sleep_for(2s);
  auto d = api->getSync(named(kPods, "gpu-d", work.name()));
  REQUIRE(d.has_value());
  CHECK(str(*d, {"spec", "nodeName"}).empty());
}

TEST_CASE("fine-grained: vNPU requests wait for the GPU shared-resource templates ConfigMap",
          "[fine-grained]") {
  KubeApi api(koord::testing::tokenConfig());
  koord::testing::applyCrds(*api);
  auto env = koord::testing::readClusterEnv();
  const std::string node = koord::testing::needEnv(env, "KOORD_NODE_NAME");
  koord::testing::TestNamespace sys(*api, "koord-vnpu-sys");
  koord::testing::PodNamespace work(*api, "koord-vnpu");
  struct Cleanup {
    koord::kube::RestClient& api;
    std::string ns;
    ~Cleanup() { koord::testing::removeAllPodsNow(api, ns); }
  } cleanup{*api, work.name()};

  // The templates are read from the args' namespace alone (the informer is narrowed to it).
  koord::testing::TempTree tree("koord-vnpu-e2e");
  const auto config_path = tree.path("scheduler.yaml");
  {
    std::ofstream f(config_path);
    f << koord::testing::schedulerConfigHeader(sys.name())
      << "profiles:\n"
         "- schedulerName: "
      << kSchedulerName
      << "\n"
         "  plugins:\n"
         "    preFilter: {enabled: [{name: DeviceShare}]}\n"
         "    filter: {enabled: [{name: DeviceShare}]}\n"
         "    reserve: {enabled: [{name: DeviceShare}]}\n"
         "  pluginConfig:\n"
         "  - name: DeviceShare\n"
         "    args:\n"
         "      gpuSharedResourceTemplatesConfig:\n"
         "        configMapNamespace: "
      << sys.name()
      << "\n"
         "        configMapName: gpu-shared-resource-templates\n"
         "        matchedResources: [huawei.com/npu-core]\n";
  }
  koord::testing::SchedulerProcess scheduler(config_path.string());
  REQUIRE(eventually(60s, [&] { return loopbackGet(scheduler.port, "/healthz") == "ok"; }));

  json::object vnpu{{"koordinator.sh/gpu.shared", "1"},
                    {"huawei.com/npu-core", "1"},
                    {"huawei.com/npu-cpu", "1"},
                    {"huawei.com/npu-dvpp", "12"},
                    {"koordinator.sh/gpu-memory", "3Gi"}};
  ok(api->createSync(named(kPods, "", work.name()),
                     schedulerPod("vnpu", node, "LS", "sleep 3600", vnpu, vnpu)),
     "vnpu pod");
  const auto waitingWith = [&](const std::string& text) {
    std::string message;
    const bool seen = eventually(60s, [&] {
      auto p = api->getSync(named(kPods, "vnpu", work.name()));
      message = p ? podScheduledMessage(*p) : "";
      return message.find(text) != std::string::npos;
    });
    INFO("PodScheduled: " << message << "\nscheduler:\n" << scheduler.process->stderrSoFar());
    CHECK(seen);
    return seen;
  };
  // 1. No ConfigMap: DeviceShare refuses the slice at PreFilter, in Koordinator's words, and
  //    the pod waits in the unschedulable queue under that plugin.
  REQUIRE(waitingWith("no matched GPU shared resource template"));
  const std::string unschedulable =
      std::string("scheduler_unschedulable_pods{plugin=\"DeviceShare\",profile=\"") +
      kSchedulerName + "\"} 1";
  std::string scraped;
  CHECK(eventually(30s, [&] {
    scraped = loopbackGet(scheduler.port, "/metrics");
    return scraped.find(unschedulable) != std::string::npos;
  }));

  // 2. The same templates in another namespace change nothing; in the args' one, the slice
  //    matches vir01 and the pod moves on to the node's resources (this node offers no NPU).
  const std::string data =
      "huawei-Ascend-310P3:\n"
      "  vir01:\n"
      "    huawei.com/npu-core: \"1\"\n"
      "    huawei.com/npu-cpu: \"1\"\n"
      "    huawei.com/npu-dvpp: \"12\"\n"
      "    koordinator.sh/gpu-memory: 3Gi\n";
  const auto templates = [&](const std::string& ns) {
    return json::object{
        {"apiVersion", "v1"},
        {"kind", "ConfigMap"},
        {"metadata", {{"name", "gpu-shared-resource-templates"}, {"namespace", ns}}},
        {"data", {{"data.yaml", data}}}};
  };
  ok(api->createSync(named(kConfigMaps, "", work.name()), templates(work.name())),
     "templates elsewhere");
  std::this_thread::sleep_for(3s);
  auto still = api->getSync(named(kPods, "vnpu", work.name()));
  REQUIRE(still.has_value());
  CHECK_THAT(podScheduledMessage(*still), Catch::Contains("no matched GPU shared resource"));
  ok(api->createSync(named(kConfigMaps, "", sys.name()), templates(sys.name())), "templates");
  CHECK(waitingWith("Insufficient huawei.com/npu-core"));
}
