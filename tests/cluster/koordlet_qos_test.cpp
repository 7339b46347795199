// The koordlet's QoS beyond co-location on the real node (kubelet + containerd, cgroup v1):
// CPUBurst lifts a throttled LS container's CFS quota and its throttling falls; the peak
// predictor's prodReclaimableMetric survives a koordlet restart; the manager turns it into
// kubernetes.io/mid-cpu and koord-scheduler places a Mid pod on it.
#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>

#include "cluster_api.h"
#include "cluster_env.h"
#include "koord/kube/quantity.h"
#include "manifests.h"
#include "node_pod.h"
#include "scheduler_process.h"
#include "subprocess.h"
#include "temp_tree.h"

using namespace std::chrono_literals;
namespace json = boost::json;
using koord::testing::eventually;
using koord::testing::firstLineOf;
using koord::testing::koordBinary;
using koord::testing::KubeApi;
using koord::testing::named;
using koord::testing::needEnv;
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
  auto parsed = koord::kube::Quantity::parse(q);
  return parsed ? parsed->milliValue() : -1;
}

// nr_periods and nr_throttled of a v1 cpu.stat.
struct Throttling {
  std::int64_t periods = 0;
  std::int64_t throttled = 0;
};

Throttling readThrottling(const std::string& dir) {
  std::ifstream in("/sys/fs/cgroup/cpu/" + dir + "/cpu.stat");
  Throttling t;
  std::string key;
  std::int64_t value = 0;
  while (in >> key >> value) {
    if (key == "nr_periods")
      t.periods = value;
    else if (key == "nr_throttled")
      t.throttled = value;
  }
  return t;
}

// The share of CFS periods throttled over `window`.
double throttledRatio(const std::string& dir, std::chrono::seconds window) {
  const Throttling a = readThrottling(dir);
  std::this_thread::sleep_for(window);
  const Throttling b = readThrottling(dir);
  const auto periods = b.periods - a.periods;
  return periods > 0 ? static_cast<double>(b.throttled - a.throttled) / periods : 0;
}

std::string cpuBurstConfig(const std::string& policy) {
  return R"({"clusterStrategy": {"policy": ")" + policy +
         R"(", "cpuBurstPercent": 1000, "cfsQuotaBurstPercent": 500,
             "cfsQuotaBurstPeriodSeconds": -1, "sharePoolThresholdPercent": 90}})";
}

struct Koordlet {
  std::unique_ptr<koord::testing::Subprocess> process;
  int port = koord::testing::freeLoopbackPort();
};

// The koordlet with its checkpoints under `data_dir`, so a restart restores this run's models.
// Models are trained every 5 s and checkpointed every 5 s; pods are past their cold start at once.
Koordlet startKoordlet(const std::string& node, const std::string& data_dir) {
  auto env = koord::testing::readClusterEnv();
  Koordlet k;
  k.process = std::make_unique<koord::testing::Subprocess>(
      std::vector<std::string>{
          koordBinary(), "koordlet", "-kubeconfig=" + needEnv(env, "KOORD_KUBECONFIG"),
          "-cgroup-root-dir=/sys/fs/cgroup/",
          "-kubelet-config-file=" + needEnv(env, "KOORD_KUBELET_ROOT_DIR") + "/config.yaml",
          "-addr=127.0.0.1:" + std::to_string(k.port), "-feature-gates=BECPUSuppress=false",
          "-tsdb-path=" + data_dir + "/metric-data",
          "-prediction-checkpoint-filepath=" + data_dir + "/prediction-checkpoints",
          "-prediction-cold-start-duration=1s", "-prediction-training-interval=5s",
          "-prediction-model-checkpoint-interval=5s",
          // No margin: on a 2-CPU node the system's own peak leaves little to reclaim.
          "-prediction-safety-margin-percent=0", "-v=4"},
      std::map<std::string, std::optional<std::string>>{{"NODE_NAME", node},
                                                        {"agent_mode", "hostMode"}});
  return k;
}

// The updateTime of the node's NodeMetric status; "" before the first report.
std::string reportTime(koord::kube::RestClient& api, const std::string& node) {
  auto nm = api.getSync(named(kNodeMetrics, node));
  return nm ? str(*nm, {"status", "updateTime"}) : "";
}

}  // namespace

TEST_CASE("koordlet QoS: CPU burst, predictor restart, Mid pods", "[koordlet-qos]") {
  KubeApi api(tokenConfig());
  koord::testing::applyCrds(*api);
  koord::testing::applyPriorityClasses(*api);
  auto env = koord::testing::readClusterEnv();
  const std::string node = needEnv(env, "KOORD_NODE_NAME");
  const std::string cluster_dir = needEnv(env, "KOORD_CLUSTER_DIR");
  TestNamespace sys(*api, "koord-sys");
  koord::testing::PodNamespace work(*api, "koordlet-qos");

  // Reports every 15 s; Mid resources up to the whole allocatable; CPU burst off until step 2.
  ok(api->createSync(named(kConfigMaps, "", sys.name()),
                     json::object{{"apiVersion", "v1"},
                                  {"kind", "ConfigMap"},
                                  {"metadata", {{"name", "slo-controller-config"}}},
                                  {"data",
                                   {{"colocation-config",
                                     R"({"enable": true, "metricReportIntervalSeconds": 15,
                                         "metricAggregateDurationSeconds": 60,
                                         "midCPUThresholdPercent": 100,
                                         "midMemoryThresholdPercent": 100})"},
                                    {"cpu-burst-config", cpuBurstConfig("none")}}}}),
     "slo-controller-config");
  koord::testing::Subprocess manager(
      {koordBinary(), "manager", "--kubeconfig=" + needEnv(env, "KOORD_KUBECONFIG"),
       "--leader-election-namespace=" + sys.name(), "--config-namespace=" + sys.name(),
       "--metrics-addr=127.0.0.1:" + std::to_string(koord::testing::freeLoopbackPort()),
       "--health-probe-addr=127.0.0.1:" + std::to_string(koord::testing::freeLoopbackPort()),
       "--feature-gates=PodMutatingWebhook=false,PodValidatingWebhook=false,"
       "ElasticMutatingWebhook=false,ElasticValidatingWebhook=false"},
      {{"POD_NAMESPACE", sys.name()}});
  const std::string data_dir = cluster_dir + "/koordlet-qos-" + std::to_string(::getpid());
  auto koordlet = startKoordlet(node, data_dir);

  struct Cleanup {
    koord::kube::RestClient& api;
    std::string ns;
    std::string data_dir;
    ~Cleanup() {
      koord::testing::removeAllPodsNow(api, ns);
      std::error_code ec;
      std::filesystem::remove_all(data_dir, ec);
    }
  } cleanup{*api, work.name(), data_dir};

  // 1. A prod LS pod that asks for most of the node and uses none (what Mid reclaims: its
  //    request less the peaks of the system and the prod pods), and one held to
  //    200m by its limit while it spins: throttled in most periods.
  ok(api->createSync(named(kPods, "", work.name()),
                     nodePod("ls-idle", work.name(), node, "sleep 3600",
                             json::object{{"koordinator.sh/qosClass", "LS"}},
                             json::object{{"cpu", "1500m"}, {"memory", "8Gi"}},
                             json::object{{"cpu", "1500m"}, {"memory", "8Gi"}}, "koord-prod")),
     "ls-idle");
  ok(api->createSync(named(kPods, "", work.name()),
                     nodePod("ls-spin", work.name(), node, "while :; do :; done",
                             json::object{{"koordinator.sh/qosClass", "LS"}},
                             json::object{{"cpu", "100m"}, {"memory", "32Mi"}},
                             json::object{{"cpu", "200m"}, {"memory", "32Mi"}}, "koord-prod")),
     "ls-spin");
  REQUIRE(eventually(90s, [&] {
    return podRunning(*api, work.name(), "ls-idle") && podRunning(*api, work.name(), "ls-spin");
  }));
  auto spin = ok(api->getSync(named(kPods, "ls-spin", work.name())), "ls-spin");
  const std::string spin_dir = "kubepods/burstable/pod" + str(spin, {"metadata", "uid"});
  const double ratio_before = throttledRatio(spin_dir, 6s);
  INFO("throttled before the burst: " << ratio_before);
  CHECK(ratio_before > 0.5);

  // 2. The report carries prodReclaimableMetric (ls-idle's unused request) ...
  std::string reclaimable;
  const bool reported = eventually(120s, [&] {
    auto nm = api->getSync(named(kNodeMetrics, node));
    if (!nm)
      return false;
    const auto* status = nm->as_object().if_contains("status");
    const auto* metric = status != nullptr && status->is_object()
                             ? status->as_object().if_contains("prodReclaimableMetric")
                             : nullptr;
    reclaimable = metric != nullptr ? json::serialize(*metric) : "";
    return milli(*nm, {"status", "prodReclaimableMetric", "resource", "resources", "cpu"}) > 0;
  });
  INFO("prodReclaimableMetric " << reclaimable);
  if (!reported) {
    const std::string log = koordlet.process->stderrSoFar();
    WARN("koordlet:\n" << (log.size() > 8000 ? log.substr(log.size() - 8000) : log));
  }
  REQUIRE(reported);
  // ... and still does in the first report after a restart, from the checkpointed models.
  std::this_thread::sleep_for(6s);  // one checkpoint interval
  koordlet.process->signal(SIGTERM);
  CHECK(koordlet.process->wait(15s).exit_code == 0);
  const std::string before_restart = reportTime(*api, node);
  koordlet = startKoordlet(node, data_dir);
  // The first report comes one report interval after start (60 s until the NodeMetric's own
  // interval is read).
  std::string after_restart;
  CHECK(eventually(100s, [&] {
    after_restart = reportTime(*api, node);
    return !after_restart.empty() && after_restart != before_restart;
  }));
  auto nm = ok(api->getSync(named(kNodeMetrics, node)), "node metric");
  INFO("koordlet after restart:\n" << koordlet.process->stderrSoFar().substr(0, 6000));
  CHECK(milli(nm, {"status", "prodReclaimableMetric", "resource", "resources", "cpu"}) > 0);

  // 3. The manager's MidResource gives the node mid-cpu, and koord-scheduler places a Mid pod
  //    on it (the pod names no node).
  REQUIRE(eventually(120s, [&] {
    auto n = api->getSync(named(kNodes, node));
    return n && milli(*n, {"status", "allocatable", "kubernetes.io/mid-cpu"}) >= 100'000;
  }));
  koord::testing::TempTree tree("koordlet-qos");
  const auto config_path = tree.path("scheduler.yaml");
  {
    std::ofstream f(config_path);
    f << koord::testing::schedulerConfigHeader(sys.name())
      << "profiles:\n- schedulerName: koord-scheduler\n";
  }
  // Stopped once the Mid pod runs: step 4 wants the node as quiet as it can be.
  auto scheduler = std::make_unique<koord::testing::SchedulerProcess>(config_path.string());
  auto mid = nodePod(
      "mid-pod", work.name(), node, "sleep 3600", json::object{{"koordinator.sh/qosClass", "LS"}},
      json::object{{"kubernetes.io/mid-cpu", "100"}, {"kubernetes.io/mid-memory", "64Mi"}},
      json::object{{"kubernetes.io/mid-cpu", "100"}, {"kubernetes.io/mid-memory", "64Mi"}},
      "koord-mid");
  auto& mid_spec = mid["spec"].as_object();
  mid_spec.erase("nodeName");
  mid_spec["schedulerName"] = "koord-scheduler";
  ok(api->createSync(named(kPods, "", work.name()), mid), "mid pod");
  CHECK(eventually(90s, [&] {
    auto p = api->getSync(named(kPods, "mid-pod", work.name()));
    return p && str(*p, {"spec", "nodeName"}) == node && str(*p, {"status", "phase"}) == "Running";
  }));
  scheduler.reset();

  // 4. CPU burst on (auto: cfs burst and the cfsQuota burst), last: the bursting pod's usage
  //    raises the prod peak the reclaimable figure above is computed from, so with the host's
  //    own load it could leave nothing to reclaim. The container's quota rises step
  //    by step from its 20000 us limit (measured once past three times that) and its throttling
  //    falls.
  ok(api->patchSync(named(kConfigMaps, "slo-controller-config", sys.name()),
                    koord::kube::PatchType::kMergePatch,
                    json::object{{"data", {{"cpu-burst-config", cpuBurstConfig("auto")}}}}),
     "cpu burst on");
  std::string container_dir;
  CHECK(eventually(90s, [&] {
    for (const auto& e : std::filesystem::directory_iterator("/sys/fs/cgroup/cpu/" + spin_dir)) {
      if (e.is_directory() &&
          std::stoll("0" + firstLineOf(e.path().string() + "/cpu.cfs_quota_us")) >= 60000) {
        container_dir = spin_dir + "/" + e.path().filename().string();
        return true;
      }
    }
    return false;
  }));
  INFO("container " << container_dir);
  CHECK(std::stoll("0" + firstLineOf("/sys/fs/cgroup/cpu/" + spin_dir + "/cpu.cfs_burst_us")) > 0);
  // The auto policy scales the quota back down while the host is busy (its share pool past
  // sharePoolThresholdPercent), and this host is also the control plane: a few windows are
  // measured, and one with less throttling than before the burst is enough.
  double ratio_after = 1;
  CHECK(eventually(60s, [&] {
    ratio_after = throttledRatio(spin_dir, 3s);
    return ratio_after < ratio_before;
  }));
  INFO("throttled with the burst: " << ratio_after);

  koordlet.process->signal(SIGTERM);
  CHECK(koordlet.process->wait(15s).exit_code == 0);
  manager.signal(SIGTERM);
  (void)manager.wait(15s);
}
