// Hollow nodes (cluster.sh hollow-nodes, kubemark's hollow kubelets) as the descheduler's tests
// use them: Ready Nodes with the capacity asked for, whose pods start and stop for real through
// the kubelet's API calls, beside the kubelet node when that runs.
#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <chrono>
#include <cstddef>
#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "cluster_api.h"
#include "cluster_env.h"
#include "hollow_nodes.h"
#include "resources.h"
#include "subprocess.h"

using namespace std::chrono_literals;
namespace json = boost::json;
using namespace koord::testing;

namespace {

std::string quantity(const json::value& node, const char* field, const char* resource) {
  return str(node, {"status", field, resource});
}

bool hasNotReadyTaint(const json::value& node) {
  const auto* spec = node.as_object().if_contains("spec");
  const auto* taints = spec != nullptr ? spec->as_object().if_contains("taints") : nullptr;
  if (taints == nullptr || !taints->is_array())
    return false;
  for (const auto& t : taints->as_array()) {
    if (str(t, {"key"}) == "node.kubernetes.io/not-ready")
      return true;
  }
  return false;
}

// A pod bound to `node` by spec.nodeName: no scheduler is involved, the hollow kubelet runs it.
// With `local_image`, written as for the kubelet node: that image, never pulled, host network.
json::object boundPod(const std::string& name, const std::string& ns, const std::string& node,
                      const std::string& local_image = "") {
  json::object pod{
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata", {{"name", name}, {"namespace", ns}}},
      {"spec",
       {{"nodeName", node},
        {"terminationGracePeriodSeconds", 5},
        {"containers",
         json::array{json::object{{"name", "c"},
                                  {"image", "registry.k8s.io/pause:3.2"},
                                  {"resources",
                                   {{"requests", {{"cpu", "500m"}, {"memory", "256Mi"}}},
                                    {"limits", {{"cpu", "500m"}, {"memory", "256Mi"}}}}}}}}}}};
  if (!local_image.empty()) {
    auto& spec = pod["spec"].as_object();
    spec["hostNetwork"] = true;
    auto& c = spec["containers"].as_array()[0].as_object();
    c["image"] = local_image;
    c["imagePullPolicy"] = "Never";
  }
  return pod;
}

std::map<std::string, std::string> readKeyValues(const std::string& path) {
  std::map<std::string, std::string> kv;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    auto eq = line.find('=');
    if (eq != std::string::npos)
      kv[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return kv;
}

// The pid cluster.sh recorded for a daemon of the run dir ("" when none).
std::string daemonPid(const std::string& dir, const std::string& name) {
  std::ifstream in(dir + "/" + name + ".pid");
  std::string pid;
  in >> pid;
  return pid;
}

}  // namespace

TEST_CASE("hollow nodes: Ready with their capacity, pods run and are deleted by the kubelet",
          "[hollow]") {
  const auto env = readClusterEnv();
  // The kubelet node, when it runs: it must stay Ready, and keep its pods, while hollow nodes
  // come and go beside it.
  const auto real_node = env.count("KOORD_NODE_NAME") ? env.at("KOORD_NODE_NAME") : "";

  HollowNodeOptions options;
  options.count = 3;
  options.cpu = 4;
  options.memory = "16Gi";
  options.pods = 110;
  options.labels = {{"koord.test/hollow-case", "basic"}};
  const auto t0 = std::chrono::steady_clock::now();
  HollowNodes hollow(options);
  const auto ready_after =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0);
  WARN("3 hollow nodes Ready through the API after " << ready_after.count() << " ms");

  KubeApi api(tokenConfig());
  REQUIRE(hollow.names() ==
          std::vector<std::string>{"hollow-node-1", "hollow-node-2", "hollow-node-3"});

  // Each Node: Ready, the capacity asked for, labelled, schedulable.
  {
    for (const auto& name : hollow.names()) {
      INFO(name);
      auto node = ok(api->getSync(named(kNodes, name)), "get node");
      CHECK(nodeIsReady(node));
      CHECK(quantity(node, "capacity", "cpu") == "4");
      CHECK(quantity(node, "capacity", "memory") == "16Gi");
      CHECK(quantity(node, "capacity", "pods") == "110");
      CHECK(quantity(node, "allocatable", "cpu") == "4");
      CHECK(quantity(node, "allocatable", "memory") == "16Gi");  // kubemark reserves nothing
      CHECK(str(node, {"metadata", "labels", "koord.test/hollow-node"}) == "true");
      CHECK(str(node, {"metadata", "labels", "koord.test/hollow-case"}) == "basic");
      CHECK(str(node, {"metadata", "labels", "kubernetes.io/hostname"}) == name);
      CHECK_FALSE(hasNotReadyTaint(node));
    }
    // Each its own loopback port, none of the cluster's own (the kubelet node's among them).
    const auto ports = readKeyValues(hollow.clusterDir() + "/ports");
    std::set<std::string> taken;
    for (const auto& [k, v] : ports)
      taken.insert(v);
    for (const auto& name : hollow.names()) {
      INFO(name);
      auto conf = readKeyValues(hollow.clusterDir() + "/hollow/" + name + ".conf");
      REQUIRE_FALSE(conf["port"].empty());
      CHECK(taken.insert(conf["port"]).second);
      auto node = ok(api->getSync(named(kNodes, name)), "get node");
      CHECK(std::to_string(node.at("status")
                               .at("daemonEndpoints")
                               .at("kubeletEndpoint")
                               .at("Port")
                               .as_int64()) == conf["port"]);
    }
    // The env file names them for tests that did not start them.
    CHECK(readClusterEnv()["KOORD_HOLLOW_NODES"] == "hollow-node-1,hollow-node-2,hollow-node-3");
  }

  // A pod bound to each runs, and is gone once deleted.
  {
    PodNamespace ns(*api, "koord-hollow");
    std::vector<std::string> pods;
    // The last as the node tests write theirs: the fake runtime holds $KOORD_TEST_IMAGE.
    const std::string local_image = needEnv(readClusterEnv(), "KOORD_TEST_IMAGE");
    for (const auto& node : hollow.names()) {
      pods.push_back("pod-on-" + node);
      ok(api->createSync(named(kPods, "", ns.name()),
                         boundPod(pods.back(), ns.name(), node,
                                  node == hollow.names().back() ? local_image : "")),
         "create pod");
    }
    for (std::size_t i = 0; i < pods.size(); ++i) {
      INFO(pods[i]);
      json::value pod;
      REQUIRE(eventually(60s, [&] {
        auto p = api->getSync(named(kPods, pods[i], ns.name()));
        if (!p)
          return false;
        pod = *p;
        return str(pod, {"status", "phase"}) == "Running";
      }));
      CHECK(str(pod, {"spec", "nodeName"}) == hollow.names()[i]);
      CHECK_FALSE(str(pod, {"status", "podIP"}).empty());
      CHECK_FALSE(str(pod, {"status", "startTime"}).empty());
      const auto& statuses = pod.at("status").at("containerStatuses").as_array();
      REQUIRE(statuses.size() == 1);
      CHECK(statuses[0].at("ready").as_bool());
      CHECK(statuses[0].at("state").as_object().contains("running"));
    }
    // A graceful delete: the pod stays (with a deletionTimestamp) until its kubelet has stopped
    // it and confirmed with a delete of grace 0. Nothing else in this cluster would remove it:
    // the node lifecycle controller is off and the pod GC keeps pods of existing nodes.
    for (const auto& name : pods)
      ok(api->removeSync(named(kPods, name, ns.name())), "delete pod");
    for (const auto& name : pods) {
      INFO(name);
      CHECK(eventually(60s, [&] {
        auto p = api->getSync(named(kPods, name, ns.name()));
        return !p && p.error().code == 404;
      }));
    }
  }

  // Idempotent; fewer nodes stop the rest and forget their Nodes.
  {
    std::vector<std::string> pids;
    for (const auto& name : hollow.names())
      pids.push_back(daemonPid(hollow.clusterDir(), name));
    const char* sh = std::getenv("KOORD_CLUSTER_SH");
    REQUIRE(sh != nullptr);
    const std::map<std::string, std::optional<std::string>> same{
        {"KOORD_CLUSTER_DIR", hollow.clusterDir()},
        {"KOORD_HOLLOW_LABELS", "koord.test/hollow-case=basic"}};
    auto again = run({sh, "hollow-nodes", "3"}, same, 120s);
    INFO(again.err);
    REQUIRE(again.exit_code == 0);
    CHECK(again.err.find("already up") != std::string::npos);
    for (std::size_t i = 0; i < pids.size(); ++i)
      CHECK(daemonPid(hollow.clusterDir(), hollow.names()[i]) == pids[i]);

    auto fewer = run({sh, "hollow-nodes", "2"}, same, 120s);
    INFO(fewer.err);
    REQUIRE(fewer.exit_code == 0);
    CHECK(daemonPid(hollow.clusterDir(), "hollow-node-3").empty());
    auto gone = api->getSync(named(kNodes, "hollow-node-3"));
    CHECK((!gone && gone.error().code == 404));
    CHECK(daemonPid(hollow.clusterDir(), "hollow-node-1") == pids[0]);
    CHECK(readClusterEnv()["KOORD_HOLLOW_NODES"] == "hollow-node-1,hollow-node-2");
  }

  if (!real_node.empty()) {
    INFO("the kubelet node " << real_node);
    auto node = ok(api->getSync(named(kNodes, real_node)), "get the kubelet node");
    CHECK(nodeIsReady(node));
    CHECK(str(node, {"metadata", "labels", "koord.test/hollow-node"}).empty());
  }
}
