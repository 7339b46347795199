// The NodeResourceTopology reporter against a loopback API server that keeps the object as the
// apiserver does (create, get, merge patch with a resourceVersion check, discovery): nothing is
// written before the states are synced, a cluster without the CRD is told once and asked again,
// the object is created with the CRD, left alone while it holds the status, and patched when
// the node's pods change.
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json.hpp>

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "http_peer.h"
#include "koord/apis/node_resource_topology.h"
#include "koord/core/metrics.h"
#include "koord/kube/rest_client.h"
#include "log_lines.h"
#include "statesinformer/node_topology_reporter.h"
#include "temp_tree.h"

using namespace koord::roles::koordlet;
using namespace std::chrono_literals;
namespace apis = koord::apis;
namespace json = boost::json;
using koord::testing::HttpPeer;
using koord::testing::PeerReply;
using koord::testing::PeerRequest;
using koord::testing::TempTree;

namespace {

constexpr std::string_view kGroupVersion = "/apis/topology.node.k8s.io/v1alpha1";
const std::string kCollection = std::string(kGroupVersion) + "/noderesourcetopologies";
const std::string kObject = kCollection + "/node-a";

PeerReply status(int code, std::string_view reason) {
  return {code,
          json::serialize(json::object{{"kind", "Status"}, {"code", code}, {"reason", reason}}),
          {}};
}

// RFC 7386.
void mergePatch(json::value& target, const json::value& patch) {
  if (!patch.is_object()) {
    target = patch;
    return;
  }
  if (!target.is_object())
    target = json::object();
  for (const auto& [k, v] : patch.get_object()) {
    if (v.is_null()) {
      target.get_object().erase(k);
    } else {
      mergePatch(target.get_object()[k], v);
    }
  }
}

// One cluster-scoped NodeResourceTopology, as the apiserver keeps it.
class FakeApiServer {
 public:
  PeerReply serve(const PeerRequest& r) {
    std::lock_guard lock(mu_);
    requests_.push_back(r.method + " " + r.path);
    if (r.method == "GET" && r.path == kGroupVersion) {
      if (!crd_)
        return status(404, "NotFound");
      return {200,
              R"({"kind":"APIResourceList","groupVersion":"topology.node.k8s.io/v1alpha1",
                      "resources":[{"name":"noderesourcetopologies","kind":"NodeResourceTopology",
                                    "namespaced":false}]})",
              {}};
    }
    if (!crd_)
      return status(404, "NotFound");
    if (r.method == "GET" && r.path == kObject) {
      if (object_.is_null())
        return status(404, "NotFound");
      return {200, json::serialize(object_), {}};
    }
    if (r.method == "POST" && r.path == kCollection) {
      if (!object_.is_null())
        return status(409, "AlreadyExists");
      object_ = json::parse(r.body);
      object_.as_object()["metadata"].as_object()["resourceVersion"] = std::to_string(++version_);
      ++writes_;
      return {201, json::serialize(object_), {}};
    }
    if (r.method == "PATCH" && r.path == kObject) {
      if (object_.is_null())
        return status(404, "NotFound");
      const json::value patch = json::parse(r.body);
      const auto* rv = patch.at("metadata").as_object().if_contains("resourceVersion");
      if (rv != nullptr && *rv != object_.at("metadata").at("resourceVersion"))
        return status(409, "Conflict");
      mergePatch(object_, patch);
      object_.as_object()["metadata"].as_object()["resourceVersion"] = std::to_string(++version_);
      ++writes_;
      return {200, json::serialize(object_), {}};
    }
    return status(405, "MethodNotAllowed");
  }

  void installCrd() {
    std::lock_guard lock(mu_);
    crd_ = true;
  }
  int writes() const {
    std::lock_guard lock(mu_);
    return writes_;
  }
  int count(std::string_view request) const {
    std::lock_guard lock(mu_);
    return static_cast<int>(std::count(requests_.begin(), requests_.end(), request));
  }
  std::size_t requests() const {
    std::lock_guard lock(mu_);
    return requests_.size();
  }
  json::value object() const {
    std::lock_guard lock(mu_);
    return object_;
  }

 private:
  mutable std::mutex mu_;
  bool crd_ = false;
  json::value object_;
  int version_ = 0;
  int writes_ = 0;
  std::vector<std::string> requests_;
};

template <typename Pred>
bool eventually(Pred pred, std::chrono::milliseconds limit = 10s) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!pred()) {
    if (std::chrono::steady_clock::now() > deadline)
      return false;
    std::this_thread::sleep_for(10ms);
  }
  return true;
}

// What the states informer would hand out, changed by the test.
class States {
 public:
  States() {
    NodeInfo node;
    node.name = "node-a";
    node.uid = "node-uid";
    node_ = std::make_shared<const NodeInfo>(std::move(node));
    pods_ = std::make_shared<const std::vector<PodMeta>>();
  }
  StatesSnapshot snapshot() const {
    std::lock_guard lock(mu_);
    return {.node = node_,
            .node_slo = nullptr,
            .node_metric = nullptr,
            .pods = pods_,
            .synced = synced_,
            .kubelet_config = kubelet_config_,
            .kubelet_config_queried = configz_queried_};
  }
  void queryConfigz() {
    std::lock_guard lock(mu_);
    configz_queried_ = true;
  }
  void setKubeletConfig(KubeletConfig config) {
    std::lock_guard lock(mu_);
    kubelet_config_ = std::make_shared<const KubeletConfig>(std::move(config));
  }
  void sync() {
    std::lock_guard lock(mu_);
    synced_ = true;
  }
  void setPods(std::vector<PodMeta> pods) {
    std::lock_guard lock(mu_);
    pods_ = std::make_shared<const std::vector<PodMeta>>(std::move(pods));
  }

 private:
  mutable std::mutex mu_;
  std::shared_ptr<const NodeInfo> node_;
  std::shared_ptr<const std::vector<PodMeta>> pods_;
  bool synced_ = false;
  std::shared_ptr<const KubeletConfig> kubelet_config_;
  bool configz_queried_ = false;
};

PodMeta lsePod() {
  PodMeta p;
  p.namespace_ = "default";
  p.name = "lse";
  p.uid = "uid-lse";
  p.labels.emplace(std::string(apis::kLabelPodQoS), "LSE");
  p.annotations.emplace(std::string(apis::kAnnotationResourceStatus), R"({"cpuset":"2-3"})");
  return p;
}

std::string annotationOf(const json::value& object, std::string_view key) {
  return std::string(object.at("metadata").at("annotations").at(key).as_string());
}

}  // namespace

TEST_CASE("node topology reporter: waits for the CRD, creates the object, patches on change",
          "[koordlet][nrt]") {
  // One socket, one NUMA node, four CPUs.
  TempTree sys("koord-nrt-reporter");
  sys.write("devices/system/cpu/online", "0-3\n");
  for (int id = 0; id < 4; ++id) {
    const std::string dir = "devices/system/cpu/cpu" + std::to_string(id) + "/topology/";
    sys.write(dir + "core_id", std::to_string(id) + "\n");
    sys.write(dir + "physical_package_id", "0\n");
  }
  sys.write("devices/system/node/node0/cpulist", "0-3\n");
  sys.write("devices/system/node/node0/meminfo", "Node 0 MemTotal: 4194304 kB\n");
  auto topology = koord::cgroup::readCpuTopology(sys.root());
  REQUIRE(topology.has_value());

  koord::testing::LogLines logs;
  FakeApiServer server;
  HttpPeer peer([&](const PeerRequest& r) { return server.serve(r); });
  States states;
  boost::asio::io_context io;
  auto guard = boost::asio::make_work_guard(io);
  std::thread runner([&] { io.run(); });
  std::function<void()> late;
  {
    koord::kube::RestConfig config;
    config.host = peer.url();
    config.qps = 0;
    koord::kube::RestClient client(io, config);
    koord::metrics::Registry registry;
    NodeTopologyReporterOptions options;
    options.node_name = "node-a";
    options.sys_root = sys.root();
    options.proc_root = sys.path("proc");
    options.sys_fs_root = sys.path("sysfs");
    options.sync_interval = 20ms;
    options.crd_retry = 100ms;
    NodeTopologyReporter reporter(
        client, io, [&] { return states.snapshot(); }, *topology, options, registry);
    reporter.start();

    // Nothing before the node and its pods are known.
    std::this_thread::sleep_for(150ms);
    CHECK(server.requests() == 0);
    CHECK(reporter.reported() == nullptr);

    // No CRD: discovery says so, nothing is created, the warning comes once.
    states.sync();
    REQUIRE(eventually([&] { return server.count("GET " + std::string(kGroupVersion)) >= 3; }));
    CHECK(server.count("POST " + kCollection) == 0);
    CHECK(logs.count("is the CRD installed?") == 1);

    // The CRD appears: the object is created whole, owned by the Node.
    server.installCrd();
    REQUIRE(eventually([&] { return server.writes() == 1; }));
    REQUIRE(eventually([&] { return reporter.reported() != nullptr; }));
    json::value created = server.object();
    INFO(json::serialize(created));
    CHECK(created.at("metadata").at("ownerReferences").at(0).at("uid") == "node-uid");
    CHECK(created.at("metadata").at("labels").at("app.kubernetes.io/managed-by") == "Koordinator");
    CHECK(created.at("zones").at(0).at("name") == "node-0");
    CHECK(created.at("zones").at(0).at("resources").at(0).at("allocatable") == "4");
    CHECK(annotationOf(created, apis::kAnnotationNodeCPUSharedPools) ==
          R"([{"socket":0,"node":0,"cpuset":"0-3"}])");
    CHECK(logs.count("served now") == 1);

    // Unchanged: no more writes, round after round.
    std::this_thread::sleep_for(200ms);
    CHECK(server.writes() == 1);

    // An LSE pod arrives: the pools lose its CPUs in one patch.
    states.setPods({lsePod()});
    reporter.podsChangedHandler()();
    REQUIRE(eventually([&] { return server.writes() == 2; }));
    json::value patched = server.object();
    CHECK(annotationOf(patched, apis::kAnnotationNodeCPUSharedPools) ==
          R"([{"socket":0,"node":0,"cpuset":"0-1"}])");
    CHECK(annotationOf(patched, apis::kAnnotationNodeBECPUSharedPools) ==
          R"([{"socket":0,"node":0,"cpuset":"0-1"}])");
    // The owner and label stay, the patch touched only what the koordlet owns.
    CHECK(patched.at("metadata").at("ownerReferences").at(0).at("name") == "node-a");
    REQUIRE(eventually([&] {
      auto r = reporter.reported();
      return r != nullptr && r->annotations.at(std::string(apis::kAnnotationNodeCPUSharedPools)) ==
                                 R"([{"socket":0,"node":0,"cpuset":"0-1"}])";
    }));
    std::this_thread::sleep_for(200ms);
    CHECK(server.writes() == 2);
    CHECK(server.count("PATCH " + kObject) == 1);

    late = reporter.podsChangedHandler();
    reporter.stop();
  }
  // A handler that outlives the reporter does nothing.
  late();
  std::this_thread::sleep_for(50ms);
  guard.reset();
  io.stop();
  runner.join();
}

TEST_CASE("node topology reporter: waits for the kubelet's /configz and reports its policies",
          "[koordlet][nrt][configz]") {
  // One socket of two SMT-2 cores: CPUs 0,2 on core 0 and 1,3 on core 1.
  TempTree sys("koord-nrt-configz");
  sys.write("devices/system/cpu/online", "0-3\n");
  for (int id = 0; id < 4; ++id) {
    const std::string dir = "devices/system/cpu/cpu" + std::to_string(id) + "/topology/";
    sys.write(dir + "core_id", std::to_string(id % 2) + "\n");
    sys.write(dir + "physical_package_id", "0\n");
  }
  sys.write("devices/system/node/node0/cpulist", "0-3\n");
  sys.write("devices/system/node/node0/meminfo", "Node 0 MemTotal: 4194304 kB\n");
  sys.write("kubelet/cpu_manager_state",
            R"({"policyName":"static","defaultCpuSet":"0-3","checksum":1})");
  auto topology = koord::cgroup::readCpuTopology(sys.root());
  REQUIRE(topology.has_value());

  FakeApiServer server;
  server.installCrd();
  HttpPeer peer([&](const PeerRequest& r) { return server.serve(r); });
  States states;
  states.queryConfigz();
  states.sync();
  boost::asio::io_context io;
  auto guard = boost::asio::make_work_guard(io);
  std::thread runner([&] { io.run(); });
  {
    koord::kube::RestConfig config;
    config.host = peer.url();
    config.qps = 0;
    koord::kube::RestClient client(io, config);
    koord::metrics::Registry registry;
    NodeTopologyReporterOptions options;
    options.node_name = "node-a";
    options.sys_root = sys.root();
    options.proc_root = sys.path("proc");
    options.sys_fs_root = sys.path("sysfs");
    options.var_lib_kubelet_dir = sys.path("kubelet");
    options.sync_interval = 20ms;
    NodeTopologyReporter reporter(
        client, io, [&] { return states.snapshot(); }, *topology, options, registry);
    reporter.start();

    // Queried but not read yet: nothing is reported (pinned CPUs would read as free).
    std::this_thread::sleep_for(200ms);
    CHECK(server.writes() == 0);

    KubeletConfig kubelet;
    kubelet.cpu_manager_policy = "static";
    kubelet.cpu_manager_policy_options = {{"full-pcpus-only", "true"}};
    kubelet.system_reserved_milli_cpu = 1500;
    kubelet.topology_manager_policy = "single-numa-node";
    kubelet.topology_manager_scope = "pod";
    states.setKubeletConfig(kubelet);
    // Under load a later sync may patch before this looks: the object is what counts.
    REQUIRE(eventually([&] { return server.writes() >= 1; }));
    const json::value created = server.object();
    INFO(json::serialize(created));
    auto policy = apis::parseKubeletCPUManagerPolicy(
        {{std::string(apis::kAnnotationKubeletCPUManagerPolicy),
          annotationOf(created, apis::kAnnotationKubeletCPUManagerPolicy)}});
    REQUIRE(policy.has_value());
    CHECK(policy->policy == "static");
    CHECK(policy->options.at("full-pcpus-only") == "true");
    // ceil(1.5) = 2 CPUs: core 0's threads.
    CHECK(policy->reserved_cpus == "0,2");
    CHECK(created.at("topologyPolicies").at(0) == "SingleNUMANodePodLevel");
    reporter.stop();
  }
  std::this_thread::sleep_for(50ms);
  guard.reset();
  io.stop();
  runner.join();
}
