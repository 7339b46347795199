// koordlet end to end on a real node (containerd + kubelet): its NodeMetric report follows a
// CPU-bound pod within a report interval, a BE pod's batch resources become its cgroup values,
// and node memory above the NodeSLO threshold evicts the BE pod, never the LS ones.
#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <unistd.h>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <thread>

#include "cluster_api.h"
#include "cluster_env.h"
#include "koord/cgroup/proc_readers.h"
#include "koord/http/client.h"
#include "koord/kube/quantity.h"
#include "manifests.h"
#include "node_pod.h"
#include "subprocess.h"

using namespace std::chrono_literals;
namespace json = boost::json;
using koord::kube::ResourceRef;
using koord::testing::eventually;
using koord::testing::firstLineOf;
using koord::testing::koordBinary;
using koord::testing::KubeApi;
using koord::testing::named;
using koord::testing::nodePod;
using koord::testing::ok;
using koord::testing::podRunning;
using koord::testing::str;
using koord::testing::TestNamespace;
using koord::testing::tokenConfig;
using namespace koord::testing::resources;

namespace {

std::int64_t milli(const json::value& v, std::initializer_list<const char*> path) {
  std::string q = str(v, path);
  if (q.empty())
    return -1;
  return koord::kube::Quantity::parse(q).value().milliValue();
}

// The first line a pod's main container logged, once it has one (what is there after 20 s).
// kubelet 1.20 writes container logs under /var/log/pods/<ns>_<pod>_<uid>/<container>/.
std::string firstLogLine(const std::string& ns, const std::string& pod, const std::string& uid) {
  const std::string log = "/var/log/pods/" + ns + "_" + pod + "_" + uid + "/main/0.log";
  std::string line;
  (void)eventually(std::chrono::seconds(20), [&] {
    line = firstLineOf(log);
    return line.find("first:") != std::string::npos;
  });
  return line;
}

std::string sloConfig(int memory_evict_threshold) {
  return std::string(
             R"({"clusterStrategy": {"enable": true, "cpuSuppressThresholdPercent": 65, )") +
         R"("memoryEvictThresholdPercent": )" + std::to_string(memory_evict_threshold) + "}}";
}

}  // namespace

TEST_CASE("koordlet: NodeMetric report, batch cgroups, BE memory eviction", "[koordlet]") {
  KubeApi api(tokenConfig());
  koord::testing::applyCrds(*api);
  koord::testing::applyPriorityClasses(*api);
  auto env = koord::testing::readClusterEnv();
  const std::string node = koord::testing::needEnv(env, "KOORD_NODE_NAME");
  TestNamespace sys(*api, "koord-sys");
  TestNamespace work(*api, "koordlet-e2e");

  // Colocation on, reports every 30 s over 60 s; suppression (cpuset policy, which on this
  // 2-CPU node keeps both CPUs) and BE memory eviction with a threshold nothing reaches yet.
  ok(api->createSync(named(kConfigMaps, "", sys.name()),
                     json::object{{"apiVersion", "v1"},
                                  {"kind", "ConfigMap"},
                                  {"metadata", {{"name", "slo-controller-config"}}},
                                  {"data",
                                   {{"colocation-config",
                                     R"({"enable": true, "metricReportIntervalSeconds": 30,
                                         "metricAggregateDurationSeconds": 60})"},
                                    {"resource-threshold-config", sloConfig(99)}}}}),
     "slo-controller-config");

  int manager_health = koord::testing::freeLoopbackPort();
  koord::testing::Subprocess manager(
      {koordBinary(), "manager", "--kubeconfig=" + koord::testing::needEnv(env, "KOORD_KUBECONFIG"),
       "--leader-election-namespace=" + sys.name(), "--config-namespace=" + sys.name(),
       "--metrics-addr=127.0.0.1:" + std::to_string(koord::testing::freeLoopbackPort()),
       "--health-probe-addr=127.0.0.1:" + std::to_string(manager_health),
       // No webhooks: a configuration left behind would answer for no one after the test
       // (the ElasticQuota ones with failurePolicy Fail).
       "--feature-gates=PodMutatingWebhook=false,PodValidatingWebhook=false,"
       "ElasticMutatingWebhook=false,ElasticValidatingWebhook=false"},
      {{"POD_NAMESPACE", sys.name()}});
  int koordlet_port = koord::testing::freeLoopbackPort();
  // The node's kubelet talks CRI through koord runtime-proxy (cluster/node-up), which watches
  // <cluster dir>/hookserver.d: the koordlet serves its hooks there.
  const std::string cluster_dir = koord::testing::needEnv(env, "KOORD_CLUSTER_DIR");
  const std::string hook_socket = cluster_dir + "/koordlet-run/koordlet.sock";
  std::filesystem::create_directories(cluster_dir + "/koordlet-run");
  const std::string data_dir = cluster_dir + "/koordlet-data-" + std::to_string(::getpid());
  const std::string kubelet_config =
      koord::testing::needEnv(env, "KOORD_KUBELET_ROOT_DIR") + "/config.yaml";
  koord::testing::Subprocess koordlet(
      {koordBinary(), "koordlet", "-kubeconfig=" + koord::testing::needEnv(env, "KOORD_KUBECONFIG"),
       "-cgroup-root-dir=/sys/fs/cgroup/",
       // The kubelet's secure port (no read-only port on this node), its self-signed certificate
       // verified: the config names no tlsCertFile, so /var/lib/kubelet/pki/kubelet.crt.
       "-kubelet-config-file=" + kubelet_config, "-addr=127.0.0.1:" + std::to_string(koordlet_port),
       "-feature-gates=BEMemoryEvict=true,OOMScoreAdj=true", "-runtime-hooks-addr=" + hook_socket,
       "-runtime-hooks-host-endpoint=" + hook_socket,
       "-runtime-hooks-config-path=" + cluster_dir + "/hookserver.d",
       // Checkpoints of this run only: another test's metric cache or models must not be restored.
       "-tsdb-path=" + data_dir + "/metric-data",
       "-prediction-checkpoint-filepath=" + data_dir + "/prediction-checkpoints", "-v=4"},
      {{"NODE_NAME", node}, {"agent_mode", "hostMode"}});
  struct Unregister {
    std::string file;
    ~Unregister() { std::filesystem::remove(file); }
  } unregister{cluster_dir + "/hookserver.d/koordlet.json"};

  struct Cleanup {
    koord::kube::RestClient& api;
    std::string ns;
    ~Cleanup() {
      for (const char* p : {"be-batch", "ls-hog", "ls-mem"})
        (void)koord::testing::removePodNow(api, ns, p);
    }
  } cleanup{*api, work.name()};

  {
    // 1. The first report arrives and gives the node batch resources to admit a BE pod.
    REQUIRE(eventually(120s, [&] {
      auto nm = api->getSync(named(kNodeMetrics, node));
      return nm && milli(*nm, {"status", "nodeMetric", "nodeUsage", "resources", "cpu"}) > 0;
    }));
    const bool batch_allocatable = eventually(120s, [&] {
      auto n = api->getSync(named(kNodes, node));
      return n && milli(*n, {"status", "allocatable", "kubernetes.io/batch-cpu"}) >= 100'000;
    });
    if (!batch_allocatable) {
      // Which of the two did not do its part.
      auto tail = [](const std::string& log) {
        return log.size() > 6000 ? log.substr(log.size() - 6000) : log;
      };
      WARN("manager:\n" << tail(manager.stderrSoFar()));
      WARN("koordlet:\n" << tail(koordlet.stderrSoFar()));
    }
    REQUIRE(batch_allocatable);

    // 2. A BE pod with batch resources: its cgroups get cpu.shares from the batch-cpu request,
    //    the CFS quota from its limit and the memory limit from batch-memory. The container's
    //    first command prints its own cgroup's values: they are the koordlet's from the start
    //    (runtime-proxy's PreCreateContainer hook), not kubelet's BestEffort 2 / unlimited that
    //    the reconciler would fix only later. The annotation is the manager's webhook's (off in
    //    this test).
    REQUIRE(eventually(
        30s, [&] { return std::filesystem::exists(cluster_dir + "/hookserver.d/koordlet.json"); }));
    auto be_pod = nodePod(
        "be-batch", work.name(), node,
        "echo first: $(cat /sys/fs/cgroup/cpu/cpu.shares) "
        "$(cat /sys/fs/cgroup/cpu/cpu.cfs_quota_us) "
        "$(cat /sys/fs/cgroup/memory/memory.limit_in_bytes); sleep 3600",
        json::object{{"koordinator.sh/qosClass", "BE"}},
        json::object{{"kubernetes.io/batch-cpu", "100"}, {"kubernetes.io/batch-memory", "64Mi"}},
        json::object{{"kubernetes.io/batch-cpu", "200"}, {"kubernetes.io/batch-memory", "64Mi"}},
        "koord-batch");
    be_pod["metadata"].as_object()["annotations"] = json::object{
        {"node.koordinator.sh/extended-resource-spec",
         R"({"containers":{"main":{"limits":{"kubernetes.io/batch-cpu":"200",)"
         R"("kubernetes.io/batch-memory":"64Mi"},"requests":{"kubernetes.io/batch-cpu":"100",)"
         R"("kubernetes.io/batch-memory":"64Mi"}}}})"}};
    ok(api->createSync(named(kPods, "", work.name()), be_pod), "be pod");
    REQUIRE(eventually(60s, [&] { return podRunning(*api, work.name(), "be-batch"); }));
    auto be = ok(api->getSync(named(kPods, "be-batch", work.name())), "be pod");
    const std::string first_line =
        firstLogLine(work.name(), "be-batch", str(be, {"metadata", "uid"}));
    CHECK_THAT(first_line, Catch::EndsWith("first: 102 20000 " + std::to_string(64 << 20)));
    const std::string pod_dir = "kubepods/besteffort/pod" + str(be, {"metadata", "uid"});
    CHECK(eventually(30s, [&] {
      return firstLineOf("/sys/fs/cgroup/cpu/" + pod_dir + "/cpu.shares") == "102" &&
             firstLineOf("/sys/fs/cgroup/cpu/" + pod_dir + "/cpu.cfs_quota_us") == "20000" &&
             firstLineOf("/sys/fs/cgroup/memory/" + pod_dir + "/memory.limit_in_bytes") ==
                 std::to_string(64 << 20);
    }));
    INFO("pod cgroup " << pod_dir << ": shares "
                       << firstLineOf("/sys/fs/cgroup/cpu/" + pod_dir + "/cpu.shares") << ", quota "
                       << firstLineOf("/sys/fs/cgroup/cpu/" + pod_dir + "/cpu.cfs_quota_us"));

    // 2b. An LSR pod the scheduler bound to CPU 0 (resource-status annotation):
    //     CPUSetAllocator answers PreCreateContainer, so the container's first command already
    //     runs on CPU 0, unthrottled (kubelet alone: every CPU, quota 100000). OOMScoreAdj
    //     answers too: 777 from the annotation where kubelet alone gives a burstable pod 999.
    //     A positive value on purpose: containerd's restrict_oom_score_adj clamps anything
    //     below its own score, and this VM's kernel refuses lowering it at all.
    auto bound_pod = nodePod("lsr-bound", work.name(), node,
                             "echo first: $(cat /sys/fs/cgroup/cpuset/cpuset.cpus) "
                             "$(cat /sys/fs/cgroup/cpu/cpu.cfs_quota_us) "
                             "$(cat /proc/self/oom_score_adj); sleep 3600",
                             json::object{{"koordinator.sh/qosClass", "LSR"}},
                             json::object{{"cpu", "100m"}}, json::object{{"cpu", "1"}});
    bound_pod["metadata"].as_object()["annotations"] =
        json::object{{"scheduling.koordinator.sh/resource-status", R"({"cpuset":"0"})"},
                     {"koordinator.sh/oom-score-adj", "777"}};
    ok(api->createSync(named(kPods, "", work.name()), bound_pod), "lsr pod");
    REQUIRE(eventually(60s, [&] { return podRunning(*api, work.name(), "lsr-bound"); }));
    auto bound = ok(api->getSync(named(kPods, "lsr-bound", work.name())), "lsr pod");
    const std::string bound_line =
        firstLogLine(work.name(), "lsr-bound", str(bound, {"metadata", "uid"}));
    CHECK_THAT(bound_line, Catch::EndsWith("first: 0 -1 777"));

    // 3. A CPU-bound LS pod shows up in the next report with about a core of usage.
    ok(api->createSync(named(kPods, "", work.name()),
                       nodePod("ls-hog", work.name(), node, "while :; do :; done", {},
                               json::object{{"cpu", "500m"}}, json::object{})),
       "ls hog");
    REQUIRE(eventually(60s, [&] { return podRunning(*api, work.name(), "ls-hog"); }));
    const auto hog_running = std::chrono::system_clock::now();
    std::int64_t hog_milli = -1;
    std::chrono::system_clock::time_point reported;
    CHECK(eventually(75s, [&] {
      auto nm = api->getSync(named(kNodeMetrics, node));
      if (!nm)
        return false;
      for (const auto& p : nm->at("status").at("podsMetric").as_array()) {
        if (str(p, {"name"}) == "ls-hog" && str(p, {"namespace"}) == work.name()) {
          hog_milli = milli(p, {"podUsage", "resources", "cpu"});
          reported = std::chrono::system_clock::now();
          return hog_milli >= 600;
        }
      }
      return false;
    }));
    INFO("ls-hog reported at " << hog_milli << "m");
    CHECK(hog_milli >= 600);
    // The next report after the koordlet saw the pod: one report interval (30 s) after at most
    // one kubelet sync (10 s), plus the two collector rounds a first rate needs.
    CHECK(reported - hog_running <= 45s);
    // Those pods came from the kubelet's secure port, its certificate verified: no fallback to
    // the API server (which has no container IDs to offer).
    CHECK_THAT(koordlet.stderrSoFar(),
               Catch::Contains("certificate checked against the kubelet's self-signed"));
    CHECK(koordlet.stderrSoFar().find("listing pods from the API server") == std::string::npos);

    // 3b. Pods from the kubelet itself, at another address. A second koordlet, for a Node
    //     object whose InternalIP is 127.0.0.1, reads the kubelet's /pods there (node-a's pods:
    //     the API server has none for it) and collects the hog. The kubelet's certificate
    //     names node-a, not 127.0.0.1: the probe Node's Hostname address carries that name.
    //     Its QoS parts are off: the first koordlet owns the node's cgroups.
    const std::string probe = koord::testing::uniqueName("kl-probe");
    ok(api->createSync(
           kNodes,
           json::object{{"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", {{"name", probe}}}}),
       "probe node");
    auto probe_status = named(kNodes, probe);
    probe_status.subresource = "status";
    ok(api->patchSync(
           probe_status, koord::kube::PatchType::kMergePatch,
           json::object{
               {"status",
                {{"addresses",
                  json::array{json::object{{"type", "InternalIP"}, {"address", "127.0.0.1"}},
                              json::object{{"type", "Hostname"}, {"address", node}}}},
                 {"daemonEndpoints",
                  {{"kubeletEndpoint",
                    {{"Port",
                      std::stoi(koord::testing::needEnv(env, "KOORD_KUBELET_PORT"))}}}}}}}}),
       "probe node address");
    {
      int probe_port = koord::testing::freeLoopbackPort();
      koord::testing::Subprocess probe_koordlet(
          {koordBinary(), "koordlet",
           "-kubeconfig=" + koord::testing::needEnv(env, "KOORD_KUBECONFIG"),
           "-cgroup-root-dir=/sys/fs/cgroup/", "-kubelet-config-file=" + kubelet_config,
           "-addr=127.0.0.1:" + std::to_string(probe_port),
           "-feature-gates=BECPUSuppress=false,BatchResource=false",
           "-enable-node-metric-report=false"},
          {{"NODE_NAME", probe}, {"agent_mode", "hostMode"}});
      koord::http::Client http(api.io, {});
      std::string metrics;
      CHECK(eventually(40s, [&] {
        koord::http::ClientRequest req;
        req.url = "http://127.0.0.1:" + std::to_string(probe_port) + "/metrics";
        auto r = http.sendSync(req);
        metrics = r ? r->body : std::string();
        return metrics.find("pod_name=\"ls-hog\",") != std::string::npos;
      }));
      CHECK(probe_koordlet.stderrSoFar().find("listing pods from the API server") ==
            std::string::npos);
    }
    (void)api->removeSync(named(kNodes, probe), {});

    // 4. Node memory above the threshold: the BE pod is evicted, the LS pods stay.
    auto mem = koord::cgroup::readMemInfo("/proc").value();
    auto n = ok(api->getSync(named(kNodes, node)), "node");
    const std::int64_t capacity =
        koord::kube::Quantity::parse(str(n, {"status", "capacity", "memory"})).value().value();
    const auto used_percent =
        static_cast<int>(static_cast<std::int64_t>(mem.usageWithoutPageCache()) * 100 / capacity);
    ok(api->patchSync(
           named(kConfigMaps, "slo-controller-config", sys.name()),
           koord::kube::PatchType::kMergePatch,
           json::object{{"data", {{"resource-threshold-config", sloConfig(used_percent + 2)}}}}),
       "lower the memory threshold");
    // 4% of the node held by an LS pod: pushes usage past threshold (used + 2%).
    const std::int64_t hold = capacity / 25;
    ok(api->createSync(
           named(kPods, "", work.name()),
           nodePod("ls-mem", work.name(), node,
                   "(head -c " + std::to_string(hold) + " /dev/zero; sleep 3600) | tail", {},
                   json::object{{"cpu", "100m"}}, json::object{})),
       "ls memory");
    CHECK(eventually(120s, [&] {
      auto p = api->getSync(named(kPods, "be-batch", work.name()));
      return !p || p->as_object().at("metadata").as_object().contains("deletionTimestamp");
    }));
    // The Event is written asynchronously, after the eviction itself.
    std::string evict_message;
    CHECK(eventually(30s, [&] {
      auto events = api->listSync(named(kEvents, "", work.name()));
      if (!events)
        return false;
      for (const auto& e : events->at("items").as_array()) {
        if (str(e, {"reason"}) == "evictPodSuccess" &&
            str(e, {"involvedObject", "name"}) == "be-batch") {
          evict_message = str(e, {"message"});
          return true;
        }
      }
      return false;
    }));
    CHECK(evict_message.find("BEMemoryEvict") != std::string::npos);
    for (const char* ls : {"ls-hog", "ls-mem"}) {
      auto p = api->getSync(named(kPods, ls, work.name()));
      REQUIRE(p.has_value());
      CHECK_FALSE(p->as_object().at("metadata").as_object().contains("deletionTimestamp"));
    }
  }
  koordlet.signal(SIGTERM);
  auto stopped = koordlet.wait(15s);
  if (stopped.exit_code != 0) {
    std::ofstream(std::string(std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp") +
                  "/koordlet-e2e.err")
        << stopped.err;
  }
  INFO("koordlet signal " << stopped.signal << ", timed out " << stopped.timed_out);
  CHECK(stopped.exit_code == 0);
  manager.signal(SIGTERM);
  (void)manager.wait(15s);
}
