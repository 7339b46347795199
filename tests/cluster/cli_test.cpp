// koord's operator commands against the real apiserver: `koord snapshot` records an API-only
// node's co-location objects (Node, Pods, NodeMetric, NodeSLO, an eviction Event, a Reservation),
// and `koord top` (also as kubectl-koord) reads them from the cluster and from that file alike.
// With KOORD_CLI_SNAPSHOT_OUT set, the snapshot is also copied there: that is how the recording
// tests/unit/cli/data uses was made.
#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "cluster_api.h"
#include "cluster_env.h"
#include "koord/kube/time.h"
#include "manifests.h"
#include "subprocess.h"
#include "temp_tree.h"

using namespace std::chrono_literals;
namespace json = boost::json;
using koord::kube::ResourceRef;
using koord::testing::KubeApi;
using koord::testing::named;
using koord::testing::ok;
using koord::testing::ProcessResult;
using koord::testing::str;
using namespace koord::testing::resources;

namespace {

json::object container(const std::string& name, json::object requests) {
  return json::object{{"name", name},
                      {"image", "registry.k8s.io/pause:3.2"},
                      {"resources", {{"requests", requests}, {"limits", requests}}}};
}

json::object boundPod(const std::string& ns, const std::string& name, const std::string& node,
                      json::object labels, json::object requests) {
  return json::object{
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata", {{"name", name}, {"namespace", ns}, {"labels", std::move(labels)}}},
      {"spec",
       {{"nodeName", node},
        {"tolerations", json::array{json::object{{"operator", "Exists"}}}},
        {"containers", json::array{container("c", std::move(requests))}}}}};
}

ProcessResult runKoord(std::vector<std::string> args) {
  args.insert(args.begin(), koord::testing::koordBinary());
  return koord::testing::run(std::move(args), {}, 60s);
}

// The table line that starts with `name` and a space ("" when there is none).
std::string rowOf(const std::string& table, const std::string& name) {
  std::size_t at = 0;
  while (at < table.size()) {
    const std::size_t end = std::min(table.find('\n', at), table.size());
    const std::string line = table.substr(at, end - at);
    if (line.rfind(name + " ", 0) == 0)
      return line;
    at = end + 1;
  }
  return "";
}

const json::object& nodeRow(const json::value& top, const std::string& node) {
  for (const auto& n : top.at("nodes").as_array()) {
    if (n.at("name").as_string() == node)
      return n.as_object();
  }
  FAIL("koord top nodes has no row for " << node);
  throw std::logic_error("unreachable");
}

}  // namespace

TEST_CASE("koord snapshot and koord top read a node's co-location state", "[cli]") {
  KubeApi api(koord::testing::tokenConfig());
  koord::testing::applyCrds(*api);
  auto env = koord::testing::readClusterEnv();
  const std::string kubeconfig = "--kubeconfig=" + koord::testing::needEnv(env, "KOORD_KUBECONFIG");
  const std::string node = koord::testing::uniqueName("koord-e2e-cli-node");
  const std::string ns = koord::testing::uniqueName("koord-e2e-cli-ns");
  const std::string reservation = node + "-r";

  const std::string hot = node + "-hot";
  struct Cleanup {
    koord::kube::RestClient& api;
    std::string node, hot, ns, reservation;
    ~Cleanup() {
      (void)api.removeSync(named(kConfigMaps, "koord-scheduler-config", "koordinator-system"));
      for (const auto& n : {node, hot}) {
        (void)api.removeSync(named(kNodes, n));
        (void)api.removeSync(named(kNodeMetrics, n));
      }
      (void)api.removeSync(named(kNodeSLOs, node));
      (void)api.removeSync(named(kReservations, reservation));
      // No namespace controller runs here: the pods would outlive their namespace.
      koord::testing::removeAllPodsNow(api, ns);
      (void)api.removeSync(named(kNamespaces, ns));
    }
  } cleanup{*api, node, hot, ns, reservation};

  ok(api->createSync(
         kNamespaces,
         json::object{{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", ns}}}}),
     "namespace");
  koord::testing::waitForServiceAccount(*api, ns);
  ok(api->createSync(
         kNodes,
         json::object{{"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", {{"name", node}}}}),
     "node");
  json::object resources{{"cpu", "8"},
                         {"memory", "16Gi"},
                         {"pods", "110"},
                         {"kubernetes.io/batch-cpu", "3000"},
                         {"kubernetes.io/batch-memory", "4Gi"}};
  ok(api->patchSync(
         koord::testing::subresource(kNodes, "status", node), koord::kube::PatchType::kMergePatch,
         json::object{{"status", {{"capacity", resources}, {"allocatable", resources}}}}),
     "node status");

  // A second node whose NodeMetric says it is nearly busy: LoadAwareScheduling refuses it.
  ok(api->createSync(
         kNodes,
         json::object{{"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", {{"name", hot}}}}),
     "hot node");
  ok(api->patchSync(
         koord::testing::subresource(kNodes, "status", hot), koord::kube::PatchType::kMergePatch,
         json::object{{"status", {{"capacity", resources}, {"allocatable", resources}}}}),
     "hot node status");
  ok(api->createSync(named(kPods, "", ns),
                     boundPod(ns, "ls-web", node, {{"koordinator.sh/qosClass", "LS"}},
                              {{"cpu", "1"}, {"memory", "1Gi"}})),
     "LS pod");
  ok(api->createSync(
         named(kPods, "", ns),
         boundPod(
             ns, "be-batch", node,
             {{"koordinator.sh/qosClass", "BE"}, {"koordinator.sh/priority-class", "koord-batch"}},
             {{"kubernetes.io/batch-cpu", "500"}, {"kubernetes.io/batch-memory", "512Mi"}})),
     "BE pod");

  json::object pending = boundPod(ns, "ls-pending", "", {{"koordinator.sh/qosClass", "LS"}},
                                  {{"cpu", "1"}, {"memory", "1Gi"}});
  pending["spec"].as_object().erase("nodeName");
  pending["spec"].as_object()["schedulerName"] = "koord-scheduler";
  ok(api->createSync(named(kPods, "", ns), pending), "pending pod");
  const std::string updated = koord::kube::formatTime(std::chrono::system_clock::now() - 30s);
  ok(api->createSync(kNodeMetrics, json::object{{"apiVersion", "slo.koordinator.sh/v1alpha1"},
                                                {"kind", "NodeMetric"},
                                                {"metadata", {{"name", node}}}}),
     "NodeMetric");
  json::object status{
      {"updateTime", updated},
      {"nodeMetric", {{"nodeUsage", {{"resources", {{"cpu", "2"}, {"memory", "4Gi"}}}}}}},
      {"podsMetric",
       json::array{
           json::object{{"namespace", ns},
                        {"name", "ls-web"},
                        {"priority", "koord-prod"},
                        {"qos", "LS"},
                        {"podUsage", {{"resources", {{"cpu", "1200m"}, {"memory", "1Gi"}}}}}},
           json::object{{"namespace", ns},
                        {"name", "be-batch"},
                        {"priority", "koord-batch"},
                        {"qos", "BE"},
                        {"podUsage", {{"resources", {{"cpu", "300m"}, {"memory", "256Mi"}}}}}}}}};
  ok(api->patchSync(koord::testing::subresource(kNodeMetrics, "status", node),
                    koord::kube::PatchType::kMergePatch, json::object{{"status", status}}),
     "NodeMetric status");
  ok(api->createSync(kNodeMetrics, json::object{{"apiVersion", "slo.koordinator.sh/v1alpha1"},
                                                {"kind", "NodeMetric"},
                                                {"metadata", {{"name", hot}}}}),
     "hot NodeMetric");
  ok(api->patchSync(
         koord::testing::subresource(kNodeMetrics, "status", hot),
         koord::kube::PatchType::kMergePatch,
         json::object{{"status",
                       {{"updateTime", updated},
                        {"nodeMetric",
                         {{"nodeUsage", {{"resources", {{"cpu", "7"}, {"memory", "4Gi"}}}}}}}}}}),
     "hot NodeMetric status");
  // koord-scheduler's configuration as the cluster holds it: LoadAwareScheduling with
  // Koordinator's default thresholds (cpu 65 %) beside the default plugins.
  (void)api->createSync(kNamespaces, json::object{{"apiVersion", "v1"},
                                                  {"kind", "Namespace"},
                                                  {"metadata", {{"name", "koordinator-system"}}}});
  ok(api->createSync(named(kConfigMaps, "", "koordinator-system"),
                     json::object{{"apiVersion", "v1"},
                                  {"kind", "ConfigMap"},
                                  {"metadata", {{"name", "koord-scheduler-config"}}},
                                  {"data",
                                   {{"koord-scheduler-config",
                                     "apiVersion: kubescheduler.config.k8s.io/v1beta2\n"
                                     "kind: KubeSchedulerConfiguration\n"
                                     "profiles:\n"
                                     "- schedulerName: koord-scheduler\n"
                                     "  plugins:\n"
                                     "    filter:\n"
                                     "      enabled:\n"
                                     "      - name: LoadAwareScheduling\n"
                                     "    score:\n"
                                     "      enabled:\n"
                                     "      - name: LoadAwareScheduling\n"
                                     "        weight: 1\n"}}}}),
     "koord-scheduler-config");
  ok(api->createSync(kNodeSLOs, json::object{{"apiVersion", "slo.koordinator.sh/v1alpha1"},
                                             {"kind", "NodeSLO"},
                                             {"metadata", {{"name", node}}},
                                             {"spec",
                                              {{"resourceUsedThresholdWithBE",
                                                {{"enable", true},
                                                 {"cpuSuppressThresholdPercent", 65},
                                                 {"cpuSuppressPolicy", "cfsQuota"}}}}}}),
     "NodeSLO");
  // What the koordlet's PodEvictor records after an eviction.
  ok(api->createSync(
         named(kEvents, "", ns),
         json::object{{"apiVersion", "v1"},
                      {"kind", "Event"},
                      {"metadata", {{"name", "be-evicted.1"}, {"namespace", ns}}},
                      {"involvedObject", {{"kind", "Pod"}, {"namespace", ns}, {"name", "be-gone"}}},
                      {"reason", "evictPodSuccess"},
                      {"message", "evict Pod:" + ns + "/be-gone, reason: evictByCPU"},
                      {"type", "Warning"},
                      {"source", {{"component", "koordlet"}, {"host", node}}}}),
     "Event");
  ok(api->createSync(
         kReservations,
         json::object{{"apiVersion", "scheduling.koordinator.sh/v1alpha1"},
                      {"kind", "Reservation"},
                      {"metadata", {{"name", reservation}}},
                      {"spec",
                       {{"template",
                         {{"spec",
                           {{"schedulerName", "koord-cli-test-nobody"},
                            {"containers", json::array{container("c", {{"cpu", "1"}})}}}}}},
                        {"owners", json::array{json::object{
                                       {"labelSelector", {{"matchLabels", {{"app", "x"}}}}}}}}}}}),
     "Reservation");
  ok(api->patchSync(koord::testing::subresource(kReservations, "status", reservation),
                    koord::kube::PatchType::kMergePatch,
                    json::object{{"status", {{"phase", "Available"}, {"nodeName", node}}}}),
     "Reservation status");

  koord::testing::TempTree tree("koord-cli-e2e");
  const std::string file = tree.path("snapshot.json").string();
  auto snap = runKoord({"snapshot", kubeconfig, "-f", file});
  INFO(snap.err);
  REQUIRE(snap.exit_code == 0);
  CHECK(snap.err.find("written to " + file) != std::string::npos);
  if (const char* out = std::getenv("KOORD_CLI_SNAPSHOT_OUT"); out && *out)
    std::filesystem::copy_file(file, out, std::filesystem::copy_options::overwrite_existing);

  auto check = [&](const json::object& row) {
    CHECK(row.at("cpu").at("allocatableMilli").to_number<std::int64_t>() == 8000);
    CHECK(row.at("cpu").at("lsUsedMilli").to_number<std::int64_t>() == 1200);
    CHECK(row.at("cpu").at("beUsedMilli").to_number<std::int64_t>() == 300);
    CHECK(row.at("cpu").at("batchAllocatableMilli").to_number<std::int64_t>() == 3000);
    // The koordlet's formula: 8000 x 65% - LS 1200 - system (2000 - 1500 pods) = 3500.
    CHECK(row.at("cpu").at("beLimitMilli").to_number<std::int64_t>() == 3500);
    CHECK(row.at("cpuSuppressPolicy").as_string() == "cfsQuota");
    CHECK(row.at("memory").at("batchAllocatable").to_number<std::int64_t>() == 4LL << 30);
    CHECK(row.at("pods").at("ls").to_number<int>() == 1);
    CHECK(row.at("pods").at("be").to_number<int>() == 1);
    CHECK(row.at("evictions").to_number<int>() == 1);
    CHECK(row.at("reservations").to_number<int>() == 1);
    CHECK(row.at("metricAgeSeconds").to_number<std::int64_t>() >= 29);
  };
  SECTION("from the cluster, as kubectl koord") {
    // kubectl runs a plugin by its file name: the kubectl-koord link beside koord.
    const auto plugin =
        (std::filesystem::path(koord::testing::koordBinary()).parent_path() / "kubectl-koord")
            .string();
    auto top = koord::testing::run({plugin, "top", "nodes", kubeconfig, "-o", "json"}, {}, 60s);
    INFO(top.err);
    REQUIRE(top.exit_code == 0);
    check(nodeRow(json::parse(top.out), node));
  }
  SECTION("from the snapshot file") {
    auto top = runKoord({"top", "nodes", "--snapshot", file, "-o", "json"});
    INFO(top.err);
    REQUIRE(top.exit_code == 0);
    check(nodeRow(json::parse(top.out), node));
    auto table = runKoord({"top", "pods", "--snapshot", file, "-n", ns});
    REQUIRE(table.exit_code == 0);
    CHECK(table.out.find("be-batch") != std::string::npos);
    CHECK(table.out.find("koord-batch") != std::string::npos);
    CHECK(table.out.find("500m") != std::string::npos);
  }
  SECTION("koord explain names the plugin that refuses a node") {
    const std::string pod = ns + "/ls-pending";
    auto live = runKoord({"explain", "pod", pod, kubeconfig});
    INFO(live.out << live.err);
    REQUIRE(live.exit_code == 0);
    CHECK(live.out.find("ConfigMap koordinator-system/koord-scheduler-config") !=
          std::string::npos);
    // Other tests' nodes may be in the cluster too: each of ours is checked on its own row.
    // The hot node: 7 cores used plus the pod's estimate, over the 65 % threshold.
    const std::string hot_row = rowOf(live.out, hot);
    CHECK(hot_row.find("LoadAwareScheduling") != std::string::npos);
    CHECK(hot_row.find("node(s) cpu usage exceed threshold") != std::string::npos);
    const std::string fit_row = rowOf(live.out, node);
    CHECK(fit_row.find(" fits ") != std::string::npos);
    CHECK(fit_row.find("LoadAwareScheduling 1x") != std::string::npos);
    CHECK(live.out.find(" at LoadAwareScheduling (node(s) cpu usage exceed threshold)") !=
          std::string::npos);
    // The same from the file, as JSON.
    auto recorded =
        runKoord({"explain", "pod", "ls-pending", "-n", ns, "--snapshot", file, "-o", "json"});
    INFO(recorded.err);
    REQUIRE(recorded.exit_code == 0);
    const json::value j = json::parse(recorded.out);
    CHECK(j.at("profile").as_string() == "koord-scheduler");
    std::map<std::string, const json::object*> by_name;
    for (const auto& n : j.at("nodes").as_array())
      by_name[std::string(n.at("name").as_string())] = &n.as_object();
    REQUIRE(by_name.count(node) == 1);
    REQUIRE(by_name.count(hot) == 1);
    CHECK(by_name[node]->at("fits").as_bool());
    CHECK(by_name[hot]->at("plugin").as_string() == "LoadAwareScheduling");
  }
  SECTION("a bad file or word is refused by name") {
    auto missing = runKoord({"top", "nodes", "--snapshot", tree.path("nope.json").string()});
    CHECK(missing.exit_code == 1);
    CHECK(missing.err.find("nope.json") != std::string::npos);
    auto word = runKoord({"top", "gpus", kubeconfig});
    CHECK(word.exit_code == 2);
    CHECK(word.err.find("gpus") != std::string::npos);
  }
}
