// noderesource benchmark: the batch-resource reconcile of a large cluster, in memory. Nodes, pods
// and NodeMetrics are generated as the API server's JSON, projected into the controller's views
// (timed apart), then every node is reconciled: pods grouped by node, calculateBatchResource,
// needSync, and the status patch built and serialised.
//
//   koord_bench_noderesource [--nodes N] [--pods-per-node M] [--rounds R]
#include <boost/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "koord/apis/node_metric.h"
#include "koord/kube/time.h"
#include "noderesource/batch_resource.h"
#include "noderesource/need_sync.h"
#include "noderesource/node_status_patch.h"
#include "noderesource/node_view.h"

namespace json = boost::json;
using namespace koord::roles::manager::noderesource;
using Clock = std::chrono::steady_clock;

namespace {

struct Options {
  int nodes = 5000;
  int pods_per_node = 20;
  int rounds = 5;
};

[[noreturn]] void usage(std::string_view why) {
  std::cerr << "koord_bench_noderesource: " << why
            << "\nusage: koord_bench_noderesource [--nodes N] [--pods-per-node M] [--rounds R]\n";
  std::exit(2);
}

Options parseArgs(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    auto value = [&]() -> int {
      if (i + 1 >= argc)
        usage(fmt::format("{} needs a value", a));
      int v = std::atoi(argv[++i]);
      if (v <= 0)
        usage(fmt::format("{} must be a positive integer", a));
      return v;
    };
    if (a == "--nodes")
      o.nodes = value();
    else if (a == "--pods-per-node")
      o.pods_per_node = value();
    else if (a == "--rounds")
      o.rounds = value();
    else
      usage(fmt::format("unknown argument {}", a));
  }
  return o;
}

// Deterministic figures, so two runs reconcile the same cluster.
struct Rng {
  std::uint64_t s = 0x9e3779b97f4a7c15ULL;
  std::uint64_t next() {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return s;
  }
  int in(int lo, int hi) {
    return lo + static_cast<int>(next() % static_cast<std::uint64_t>(hi - lo + 1));
  }
};

const char* kTimestamp = "2024-05-01T09:00:00Z";

json::object resources(int milli_cpu, std::int64_t mem_mi) {
  return {{"cpu", fmt::format("{}m", milli_cpu)}, {"memory", fmt::format("{}Mi", mem_mi)}};
}

// A node as a kubelet of a 64-core, 256Gi machine reports it, with the batch resources a previous
// manager wrote.
std::string nodeJson(int i) {
  std::string name = fmt::format("node-{:05}", i);
  json::object node{
      {"kind", "Node"},
      {"apiVersion", "v1"},
      {"metadata",
       {{"name", name},
        {"uid", fmt::format("6f1c0f6e-0000-4000-8000-{:012}", i)},
        {"resourceVersion", std::to_string(100000 + i)},
        {"creationTimestamp", kTimestamp},
        {"labels",
         {{"kubernetes.io/arch", "amd64"},
          {"kubernetes.io/hostname", name},
          {"kubernetes.io/os", "linux"},
          {"node.kubernetes.io/instance-type", "ecs.g7.16xlarge"},
          {"topology.kubernetes.io/zone", fmt::format("zone-{}", i % 3)}}},
        {"annotations",
         {{"node.alpha.kubernetes.io/ttl", "0"},
          {"volumes.kubernetes.io/controller-managed-attach-detach", "true"},
          {"node.koordinator.sh/reservation", i % 4 == 0
                                                  ? R"({"resources":{"cpu":"2","memory":"4Gi"}})"
                                                  : R"({"reservedCPUs":"0-1"})"}}}}},
      {"spec", {{"podCIDR", fmt::format("10.{}.{}.0/24", i / 256, i % 256)}, {"providerID", "x"}}},
      {"status",
       {{"capacity",
         {{"cpu", "64"},
          {"memory", "263868104Ki"},
          {"pods", "110"},
          {"ephemeral-storage", "515923820Ki"},
          {"hugepages-1Gi", "0"},
          {"hugepages-2Mi", "0"},
          {"kubernetes.io/batch-cpu", "20k"},
          {"kubernetes.io/batch-memory", "80Gi"}}},
        {"allocatable",
         {{"cpu", "63800m"},
          {"memory", "261668104Ki"},
          {"pods", "110"},
          {"ephemeral-storage", "475478577208"},
          {"hugepages-1Gi", "0"},
          {"hugepages-2Mi", "0"},
          {"kubernetes.io/batch-cpu", "20k"},
          {"kubernetes.io/batch-memory", "80Gi"}}},
        {"conditions", json::array{}},
        {"addresses", json::array{{{"type", "InternalIP"},
                                   {"address", fmt::format("192.168.{}.{}", i / 256, i % 256)}},
                                  {{"type", "Hostname"}, {"address", name}}}},
        {"daemonEndpoints", {{"kubeletEndpoint", {{"Port", 10250}}}}},
        {"nodeInfo",
         {{"machineID", "m"},
          {"systemUUID", "s"},
          {"bootID", "b"},
          {"kernelVersion", "5.10.0"},
          {"osImage", "Debian GNU/Linux 12"},
          {"containerRuntimeVersion", "containerd://1.6.20"},
          {"kubeletVersion", "v1.20.2"},
          {"kubeProxyVersion", "v1.20.2"},
          {"operatingSystem", "linux"},
          {"architecture", "amd64"}}}}}};
  json::array& conditions = node["status"].as_object()["conditions"].as_array();
  for (const char* type : {"MemoryPressure", "DiskPressure", "PIDPressure", "Ready"}) {
    conditions.push_back(
        json::object{{"type", type},
                     {"status", std::string_view(type) == "Ready" ? "True" : "False"},
                     {"lastHeartbeatTime", kTimestamp},
                     {"lastTransitionTime", kTimestamp},
                     {"reason", "KubeletReady"},
                     {"message", "kubelet is posting ready status"}});
  }
  return json::serialize(node);
}

struct PodSpecShape {
  std::string_view qos_label;       // koordinator.sh/qosClass; "" for none
  std::string_view priority_class;  // spec.priorityClassName
  int priority;                     // spec.priority
  std::string_view phase;
  bool batch_resources;  // requests kubernetes.io/batch-* instead of cpu/memory
};

// Per node: 12 LS prod, 1 LSR, 1 LSE, 4 BE batch, 2 Succeeded (of 20; the mix repeats).
PodSpecShape shapeFor(int j) {
  switch (j % 20) {
    case 12:
      return {"LSR", "koord-prod", 9500, "Running", false};
    case 13:
      return {"LSE", "koord-prod", 9500, "Running", false};
    case 14:
    case 15:
    case 16:
    case 17:
      return {"BE", "koord-batch", 5500, "Running", true};
    case 18:
    case 19:
      return {"LS", "koord-prod", 9500, "Succeeded", false};
    default:
      return {"LS", "koord-prod", 9500, j % 7 == 0 ? "Pending" : "Running", false};
  }
}

std::string podJson(int node, int j, Rng& rng, int& milli_cpu, std::int64_t& mem_mi) {
  PodSpecShape shape = shapeFor(j);
  std::string name = fmt::format("app-{:05}-{:03}", node, j);
  milli_cpu = rng.in(1, 8) * 250;
  mem_mi = rng.in(1, 16) * 256;
  json::object requests;
  json::object limits;
  if (shape.batch_resources) {
    requests = {{"kubernetes.io/batch-cpu", std::to_string(milli_cpu)},
                {"kubernetes.io/batch-memory", fmt::format("{}Mi", mem_mi)}};
    limits = requests;
  } else {
    requests = resources(milli_cpu, mem_mi);
    limits = shape.qos_label == "LS" ? resources(milli_cpu * 2, mem_mi * 2) : requests;
  }
  json::object labels{{"app", fmt::format("app-{}", j % 10)}, {"pod-template-hash", "5d4f8c"}};
  if (!shape.qos_label.empty())
    labels["koordinator.sh/qosClass"] = shape.qos_label;
  std::string_view kube_qos = shape.batch_resources     ? "BestEffort"
                              : shape.qos_label == "LS" ? "Burstable"
                                                        : "Guaranteed";
  json::object pod{
      {"kind", "Pod"},
      {"apiVersion", "v1"},
      {"metadata",
       {{"name", name},
        {"namespace", fmt::format("ns-{}", j % 5)},
        {"uid", fmt::format("0a6b2c1d-{:04}-4000-8000-{:012}", j, node)},
        {"resourceVersion", std::to_string(200000 + node * 20 + j)},
        {"creationTimestamp", kTimestamp},
        {"labels", std::move(labels)},
        {"annotations", {{"kubernetes.io/psp", "privileged"}}},
        {"ownerReferences", json::array{{{"apiVersion", "apps/v1"},
                                         {"kind", "ReplicaSet"},
                                         {"name", fmt::format("app-{}-5d4f8c", j % 10)},
                                         {"uid", "r"},
                                         {"controller", true},
                                         {"blockOwnerDeletion", true}}}}}},
      {"spec",
       {{"containers",
         json::array{
             {{"name", "main"},
              {"image", "registry.example.com/app:1.0"},
              {"ports", json::array{{{"containerPort", 8080}, {"protocol", "TCP"}}}},
              {"env", json::array{{{"name", "MODE"}, {"value", "prod"}}}},
              {"resources", {{"requests", std::move(requests)}, {"limits", std::move(limits)}}},
              {"volumeMounts",
               json::array{{{"name", "token"},
                            {"readOnly", true},
                            {"mountPath", "/var/run/secrets/kubernetes.io/serviceaccount"}}}},
              {"terminationMessagePath", "/dev/termination-log"},
              {"imagePullPolicy", "IfNotPresent"}}}},
        {"volumes",
         json::array{{{"name", "token"}, {"secret", {{"secretName", "default-token"}}}}}},
        {"restartPolicy", "Always"},
        {"nodeName", fmt::format("node-{:05}", node)},
        {"schedulerName", "koord-scheduler"},
        {"priorityClassName", shape.priority_class},
        {"priority", shape.priority},
        {"tolerations", json::array{{{"key", "node.kubernetes.io/not-ready"},
                                     {"operator", "Exists"},
                                     {"effect", "NoExecute"},
                                     {"tolerationSeconds", 300}}}}}},
      {"status",
       {{"phase", shape.phase},
        {"hostIP", "192.168.0.1"},
        {"podIP", "10.0.0.1"},
        {"startTime", kTimestamp},
        {"qosClass", kube_qos},
        {"containerStatuses",
         json::array{{{"name", "main"},
                      {"ready", true},
                      {"restartCount", 0},
                      {"image", "registry.example.com/app:1.0"},
                      {"imageID", "sha256:abc"},
                      {"containerID", "containerd://abc"},
                      {"started", true},
                      {"state", {{"running", {{"startedAt", kTimestamp}}}}}}}}}}};
  return json::serialize(pod);
}

// The koordlet's report for a node: usage of the running pods (some at half, some above their
// request), one pod already gone from the list, a prod host application.
std::string nodeMetricJson(int node, int pods_per_node, const std::vector<int>& pod_cpu,
                           const std::vector<std::int64_t>& pod_mem, std::string_view update_time) {
  json::array pods_metric;
  for (int j = 0; j < pods_per_node; ++j) {
    PodSpecShape shape = shapeFor(j);
    if (shape.phase == "Succeeded" || shape.phase == "Pending")
      continue;
    pods_metric.push_back(
        {{"namespace", fmt::format("ns-{}", j % 5)},
         {"name", fmt::format("app-{:05}-{:03}", node, j)},
         {"podUsage", {{"resources", resources(pod_cpu[j] * (j % 3 + 1) / 2, pod_mem[j] * 3 / 4)}}},
         {"priority", shape.priority_class},
         {"qos", shape.qos_label}});
  }
  pods_metric.push_back({{"namespace", "ns-0"},
                         {"name", fmt::format("gone-{:05}", node)},
                         {"podUsage", {{"resources", resources(500, 512)}}},
                         {"priority", "koord-prod"},
                         {"qos", "LS"}});
  json::array aggregated;
  for (const char* d : {"5m0s", "10m0s", "30m0s"}) {
    json::object usage;
    for (const char* kind : {"avg", "p50", "p90", "p95", "p99"})
      usage[kind] = {{"resources", resources(30000, 120000)}};
    aggregated.push_back({{"usage", std::move(usage)}, {"duration", d}});
  }
  json::object metric{
      {"apiVersion", "slo.koordinator.sh/v1alpha1"},
      {"kind", "NodeMetric"},
      {"metadata",
       {{"name", fmt::format("node-{:05}", node)},
        {"resourceVersion", std::to_string(300000 + node)},
        {"creationTimestamp", kTimestamp}}},
      {"spec",
       {{"metricCollectPolicy",
         {{"aggregateDurationSeconds", 300},
          {"reportIntervalSeconds", 60},
          {"nodeAggregatePolicy", {{"durations", json::array{"5m0s", "10m0s", "30m0s"}}}},
          {"nodeMemoryCollectPolicy", "usageWithoutPageCache"}}}}},
      {"status",
       {{"updateTime", update_time},
        {"nodeMetric",
         {{"nodeUsage", {{"resources", resources(31000, 130000)}}},
          {"systemUsage", {{"resources", resources(1500, 6000)}}},
          {"aggregatedNodeUsages", std::move(aggregated)}}},
        {"podsMetric", std::move(pods_metric)},
        {"hostApplicationMetric", json::array{{{"name", "nginx"},
                                               {"usage", {{"resources", resources(300, 1024)}}},
                                               {"priority", "koord-prod"},
                                               {"qos", "LS"}}}},
        {"prodReclaimableMetric", {{"resource", {{"resources", resources(8000, 16000)}}}}}}}};
  return json::serialize(metric);
}

double msSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

template <typename T, typename Fn>
std::vector<T> decodeAll(const std::vector<std::string>& texts, Fn&& decode, double& parse_ms,
                         double& project_ms) {
  std::vector<json::value> parsed;
  parsed.reserve(texts.size());
  auto t0 = Clock::now();
  for (const auto& text : texts)
    parsed.push_back(json::parse(text));
  parse_ms = msSince(t0);
  std::vector<T> out;
  out.reserve(texts.size());
  auto t1 = Clock::now();
  for (const auto& v : parsed) {
    auto r = decode(v);
    if (!r) {
      std::cerr << "decode failed: " << r.error().message << "\n";
      std::exit(1);
    }
    out.push_back(std::move(*r));
  }
  project_ms = msSince(t1);
  return out;
}

struct ReconcileStats {
  double group_ms = 0;
  double reconcile_ms = 0;
  int writes = 0;
  int degraded = 0;
  std::int64_t batch_milli_cpu = 0;
  std::size_t patch_bytes = 0;
};

// One full pass, as the controller would run it for every node key.
ReconcileStats reconcileAll(
    const std::vector<NodeView>& nodes, const std::vector<PodView>& pods,
    const std::vector<koord::apis::NodeMetric>& metrics,
    const koord::apis::ColocationStrategy& strategy,
    std::map<std::string, std::chrono::system_clock::time_point, std::less<>>& last_write,
    std::chrono::system_clock::time_point now, std::vector<BatchValues>& desired) {
  ReconcileStats s;
  auto t0 = Clock::now();
  std::unordered_map<std::string_view, std::vector<const PodView*>> by_node;
  by_node.reserve(nodes.size());
  for (const auto& p : pods)
    by_node[p.node_name].push_back(&p);
  std::unordered_map<std::string_view, const koord::apis::NodeMetric*> metric_by_node;
  metric_by_node.reserve(metrics.size());
  for (const auto& m : metrics)
    metric_by_node.emplace(m.name, &m);
  s.group_ms = msSince(t0);

  static const std::vector<const PodView*> kNoPods;
  desired.resize(nodes.size());
  auto t1 = Clock::now();
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const NodeView& node = nodes[i];
    auto pit = by_node.find(node.name);
    const auto& node_pods = pit == by_node.end() ? kNoPods : pit->second;
    auto mit = metric_by_node.find(node.name);
    const koord::apis::NodeMetric* metric = mit == metric_by_node.end() ? nullptr : mit->second;
    BatchResult r = calculateBatchResource(node, node_pods, metric, strategy, now);
    std::optional<std::chrono::system_clock::time_point> last;
    if (auto it = last_write.find(node.name); it != last_write.end())
      last = it->second;
    SyncDecision d = needSync(node.current_batch, r.desired, strategy, last, now);
    desired[i] = r.desired;
    if (r.state != BatchState::kCalculated)
      ++s.degraded;
    else
      s.batch_milli_cpu += r.desired.cpu->value();  // batch-cpu counts milli-cores
    if (!d.need)
      continue;
    std::string body = json::serialize(buildNodeStatusPatch(r.desired));
    s.patch_bytes += body.size();
    ++s.writes;
    last_write.insert_or_assign(node.name, now);
  }
  s.reconcile_ms = msSince(t1);
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  const Options opt = parseArgs(argc, argv);
  const auto now = *koord::kube::parseTime("2024-05-01T10:00:00Z");

  auto t_gen = Clock::now();
  Rng rng;
  std::vector<std::string> node_texts;
  std::vector<std::string> pod_texts;
  std::vector<std::string> metric_texts;
  node_texts.reserve(opt.nodes);
  pod_texts.reserve(static_cast<std::size_t>(opt.nodes) * opt.pods_per_node);
  metric_texts.reserve(opt.nodes);
  std::size_t json_bytes = 0;
  for (int i = 0; i < opt.nodes; ++i) {
    node_texts.push_back(nodeJson(i));
    std::vector<int> cpu(opt.pods_per_node);
    std::vector<std::int64_t> mem(opt.pods_per_node);
    for (int j = 0; j < opt.pods_per_node; ++j)
      pod_texts.push_back(podJson(i, j, rng, cpu[j], mem[j]));
    // One node in 100 has a stale report (degraded).
    metric_texts.push_back(
        nodeMetricJson(i, opt.pods_per_node, cpu, mem,
                       i % 100 == 99 ? "2024-05-01T09:30:00Z" : "2024-05-01T09:59:30Z"));
  }
  for (const auto* texts : {&node_texts, &pod_texts, &metric_texts})
    for (const auto& t : *texts)
      json_bytes += t.size();
  const double gen_ms = msSince(t_gen);

  double node_parse = 0, node_project = 0, pod_parse = 0, pod_project = 0, nm_parse = 0,
         nm_project = 0;
  auto nodes = decodeAll<NodeView>(
      node_texts, [](const json::value& v) { return decodeNodeView(v); }, node_parse, node_project);
  auto pods = decodeAll<PodView>(
      pod_texts, [](const json::value& v) { return decodePodView(v); }, pod_parse, pod_project);
  auto metrics = decodeAll<koord::apis::NodeMetric>(
      metric_texts, [](const json::value& v) { return koord::apis::decodeNodeMetric(v); }, nm_parse,
      nm_project);

  koord::apis::ColocationStrategy strategy;
  strategy.enable = true;

  // First pass: nothing written yet by this manager, so every node is written (as after a
  // leader change). Later passes: written a moment ago, values unchanged -> no writes.
  std::vector<ReconcileStats> first;
  std::vector<ReconcileStats> steady;
  std::vector<BatchValues> desired;
  for (int r = 0; r < opt.rounds; ++r) {
    std::map<std::string, std::chrono::system_clock::time_point, std::less<>> last_write;
    first.push_back(reconcileAll(nodes, pods, metrics, strategy, last_write, now, desired));
    // What the informer would deliver once the patches landed.
    std::vector<NodeView> written = nodes;
    for (std::size_t i = 0; i < written.size(); ++i)
      written[i].current_batch = desired[i];
    steady.push_back(reconcileAll(written, pods, metrics, strategy, last_write,
                                  now + std::chrono::seconds(30), desired));
  }
  auto best = [](std::vector<ReconcileStats> v, double ReconcileStats::*field) {
    std::sort(v.begin(), v.end(),
              [field](const auto& a, const auto& b) { return a.*field < b.*field; });
    return std::pair{v.front().*field, v[v.size() / 2].*field};
  };

  const double n = opt.nodes;
  const double p = static_cast<double>(pods.size());
  fmt::print(
      "noderesource reconcile: {} nodes x {} pods = {} pods, {} NodeMetrics ({:.1f} MB "
      "of JSON, generated in {:.0f} ms)\n\n",
      opt.nodes, opt.pods_per_node, pods.size(), metrics.size(), json_bytes / 1e6, gen_ms);
  fmt::print("{:<44} {:>12} {:>14}\n", "phase", "total ms", "per object");
  fmt::print("{:-<44} {:->12} {:->14}\n", "", "", "");
  auto row = [](std::string_view name, double ms, double count, std::string_view unit) {
    fmt::print("{:<44} {:>12.1f} {:>11.2f} us/{}\n", name, ms, ms * 1000.0 / count, unit);
  };
  row("decode nodes: JSON parse", node_parse, n, "node");
  row("decode nodes: projection (NodeView)", node_project, n, "node");
  row("decode pods: JSON parse", pod_parse, p, "pod");
  row("decode pods: projection (PodView)", pod_project, p, "pod");
  row("decode NodeMetrics: JSON parse", nm_parse, n, "node");
  row("decode NodeMetrics: projection", nm_project, n, "node");
  row("decode total", node_parse + node_project + pod_parse + pod_project + nm_parse + nm_project,
      n, "node");
  auto [g_best, g_med] = best(first, &ReconcileStats::group_ms);
  auto [f_best, f_med] = best(first, &ReconcileStats::reconcile_ms);
  auto [s_best, s_med] = best(steady, &ReconcileStats::reconcile_ms);
  row("reconcile: group pods + metrics by node (best)", g_best, n, "node");
  row("reconcile: all nodes, every node written (best)", f_best, n, "node");
  row("reconcile: all nodes, every node written (median)", f_med, n, "node");
  row("reconcile: all nodes, nothing to write (best)", s_best, n, "node");
  row("reconcile: all nodes, nothing to write (median)", s_med, n, "node");
  row("reconcile total, group + written (best)", g_best + f_best, n, "node");
  fmt::print(
      "\n{} rounds; first pass wrote {} nodes ({} degraded, {:.0f} bytes/patch), steady "
      "pass wrote {}; sum of batch-cpu {} cores. Target: reconcile of {} nodes < 1 s: {}\n",
      opt.rounds, first.front().writes, first.front().degraded,
      first.front().writes ? static_cast<double>(first.front().patch_bytes) / first.front().writes
                           : 0.0,
      steady.front().writes, first.front().batch_milli_cpu / 1000, opt.nodes,
      (g_med + f_med) < 1000.0 ? "met" : "NOT met");
  return 0;
}
