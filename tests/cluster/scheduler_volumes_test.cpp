// koord scheduler's volume plugins and extenders against the real apiserver and the real PV
// controller (kube-controller-manager): a WaitForFirstConsumer local PV, a claim nothing can
// satisfy, a node at its CSI attach limit, and an HTTP extender filtering a node, all with the
// default profile of the configuration version.
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "cluster_api.h"
#include "cluster_env.h"
#include "koord/http/message.h"
#include "koord/http/server.h"
#include "loopback_http.h"
#include "manifests.h"
#include "scheduler_process.h"

using namespace std::chrono_literals;
namespace json = boost::json;
using koord::kube::ResourceRef;
using koord::testing::eventually;
using koord::testing::KubeApi;
using koord::testing::loopbackGet;
using koord::testing::named;
using koord::testing::nodeOf;
using koord::testing::ok;
using koord::testing::str;
using koord::testing::TestNamespace;
using koord::testing::tokenConfig;
using koord::testing::uniqueName;
using namespace koord::testing::resources;

namespace {

const ResourceRef kPersistentVolumes{"", "v1", "persistentvolumes", "", "", ""};
const ResourceRef kStorageClasses{"storage.k8s.io", "v1", "storageclasses", "", "", ""};
const ResourceRef kCSINodes{"storage.k8s.io", "v1", "csinodes", "", "", ""};

ResourceRef claims(const std::string& ns) {
  return ResourceRef{"", "v1", "persistentvolumeclaims", ns, "", ""};
}

constexpr const char* kTestLabel = "koord-e2e-volumes";
constexpr const char* kExtenderLabel = "koord-e2e-extender";

// An API-only node labelled for this test and with its hostname label, as a kubelet sets it.
json::object node(const std::string& name, const std::string& id) {
  json::object alloc{{"cpu", "4"}, {"memory", "32Gi"}, {"pods", "110"}};
  return json::object{
      {"apiVersion", "v1"},
      {"kind", "Node"},
      {"metadata",
       {{"name", name}, {"labels", {{kTestLabel, id}, {"kubernetes.io/hostname", name}}}}},
      {"status", {{"capacity", alloc}, {"allocatable", alloc}}}};
}

// A pod for koord-scheduler on this test's nodes (`on_node`: only that one), with the claims as
// volumes.
json::object pod(const std::string& name, const std::string& ns, const std::string& id,
                 const std::vector<std::string>& claim_names, const std::string& on_node = "",
                 json::object labels = {}) {
  json::object p = koord::testing::schedulerTestPod(
      name, ns, kTestLabel, id, {{"cpu", "100m"}, {"memory", "64Mi"}}, std::move(labels));
  json::object& spec = p["spec"].as_object();
  if (!on_node.empty())
    spec["nodeSelector"].as_object()["kubernetes.io/hostname"] = on_node;
  json::array volumes;
  for (const auto& c : claim_names)
    volumes.push_back({{"name", c}, {"persistentVolumeClaim", {{"claimName", c}}}});
  if (!volumes.empty())
    spec["volumes"] = std::move(volumes);
  return p;
}

json::object claim(const std::string& name, const std::string& storage_class,
                   const std::string& size, const std::string& volume_name = "") {
  json::object spec{{"accessModes", json::array{"ReadWriteOnce"}},
                    {"storageClassName", storage_class},
                    {"resources", {{"requests", {{"storage", size}}}}}};
  if (!volume_name.empty())
    spec["volumeName"] = volume_name;
  return json::object{{"apiVersion", "v1"},
                      {"kind", "PersistentVolumeClaim"},
                      {"metadata", {{"name", name}}},
                      {"spec", std::move(spec)}};
}

json::object volume(const std::string& name, json::object source, const std::string& cls,
                    json::object extra_spec = {}) {
  json::object spec{{"capacity", {{"storage", "1Gi"}}},
                    {"accessModes", json::array{"ReadWriteOnce"}},
                    {"persistentVolumeReclaimPolicy", "Retain"},
                    {"storageClassName", cls}};
  for (auto& kv : source)
    spec[kv.key()] = kv.value();
  for (auto& kv : extra_spec)
    spec[kv.key()] = kv.value();
  return json::object{{"apiVersion", "v1"},
                      {"kind", "PersistentVolume"},
                      {"metadata", {{"name", name}}},
                      {"spec", std::move(spec)}};
}

std::string claimPhase(koord::kube::RestClient& api, const std::string& ns,
                       const std::string& name) {
  ResourceRef ref = claims(ns);
  ref.name = name;
  auto c = api.getSync(ref);
  return c ? str(*c, {"status", "phase"}) + "/" + str(*c, {"spec", "volumeName"}) : "";
}

std::string scheduledCondition(koord::kube::RestClient& api, const std::string& ns,
                               const std::string& name) {
  auto p = api.getSync(named(kPods, name, ns));
  if (!p)
    return "";
  const auto* status = p->as_object().if_contains("status");
  if (!status || !status->as_object().contains("conditions"))
    return "";
  for (const auto& c : status->as_object().at("conditions").as_array()) {
    if (str(c, {"type"}) == "PodScheduled")
      return str(c, {"status"}) + "/" + str(c, {"reason"}) + "/" + str(c, {"message"});
  }
  return "";
}

// kube-scheduler's extender protocol (nodeCacheCapable: node names only), served by the test:
// /filter keeps every node but `blocked` for pods labelled koord-e2e-extender=block, and counts
// its calls.
class FilterExtender {
 public:
  explicit FilterExtender(std::string blocked) : blocked_(std::move(blocked)) {
    koord::http::ServerOptions options;
    options.address = "127.0.0.1:0";
    options.name = "test-extender";
    server_ = std::make_unique<koord::http::Server>(io_, options);
    server_->handle("/filter", [this](const koord::http::Request& request) {
      ++calls_;
      return filter(request.body);
    });
    server_->start();
    thread_ = std::thread([this] { io_.run(); });
  }
  ~FilterExtender() {
    server_->stop();
    guard_.reset();
    io_.stop();
    thread_.join();
  }
  std::uint16_t port() const { return server_->port(); }
  int calls() const { return calls_.load(); }
  int blockedCalls() const { return blocked_calls_.load(); }

 private:
  koord::http::Response filter(const std::string& body) {
    boost::system::error_code ec;
    json::value args = json::parse(body, ec);
    if (ec || !args.is_object())
      return koord::http::json(200, json::serialize(json::object{{"Error", "bad ExtenderArgs"}}));
    // The extender v1 structs carry no json tags: Go writes their field names as they are.
    const bool block = str(args, {"Pod", "metadata", "labels", kExtenderLabel}) == "block";
    json::array kept;
    json::object failed;
    const json::value* names = args.as_object().if_contains("NodeNames");
    if (names != nullptr && names->is_array()) {
      for (const auto& n : names->as_array()) {
        if (block && n.is_string() && n.as_string() == blocked_) {
          failed[blocked_] = "blocked by the test extender";
          continue;
        }
        kept.push_back(n);
      }
    }
    if (block)
      ++blocked_calls_;
    return koord::http::json(200, json::serialize(json::object{{"NodeNames", std::move(kept)},
                                                               {"FailedNodes", std::move(failed)},
                                                               {"Error", ""}}));
  }

  std::string blocked_;
  boost::asio::io_context io_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> guard_{
      io_.get_executor()};
  std::unique_ptr<koord::http::Server> server_;
  std::thread thread_;
  std::atomic<int> calls_{0};
  std::atomic<int> blocked_calls_{0};
};

}  // namespace

TEST_CASE("scheduler: volume binding, CSI limits and an extender with the default profile",
          "[cluster][scheduler-volumes]") {
  KubeApi api(tokenConfig());
  koord::testing::applyCrds(*api);  // the scheduler waits for NodeMetrics to list
  const std::string id = uniqueName("kv");
  TestNamespace sys(*api, "koord-vol-sys");
  TestNamespace work(*api, "koord-vol");
  koord::testing::waitForServiceAccount(*api, work.name());
  const std::string node_a = id + "-a";
  const std::string node_b = id + "-b";
  const std::string local_class = id + "-local";
  const std::string driver = id + ".csi.koord.test";
  struct Cleanup {
    KubeApi& api;
    std::vector<ResourceRef> refs;
    ~Cleanup() {
      for (const auto& r : refs)
        (void)api->removeSync(r);
    }
  } cleanup{api, {}};
  for (const auto& n : {node_a, node_b})
    cleanup.refs.push_back(named(kNodes, n));
  ok(api->createSync(kNodes, node(node_a, id)), "create node a");
  ok(api->createSync(kNodes, node(node_b, id)), "create node b");

  FilterExtender extender(node_a);
  const auto config_path = std::filesystem::temp_directory_path() / (id + "-scheduler.yaml");
  {
    // The 1.20 cluster's own configuration version, its default plugins untouched.
    std::ofstream f(config_path);
    f << koord::testing::schedulerConfigHeader(sys.name(), "v1beta1")
      << "profiles:\n"
         "- schedulerName: koord-scheduler\n"
         "extenders:\n"
         "- urlPrefix: http://127.0.0.1:"
      << extender.port()
      << "\n"
         "  filterVerb: filter\n"
         "  nodeCacheCapable: true\n"
         "  httpTimeout: 5s\n";
  }
  koord::testing::SchedulerProcess scheduler(config_path.string());
  REQUIRE(eventually(60s, [&] {
    return api->getSync(named(kLeases, "koord-scheduler", sys.name())).has_value();
  }));
  REQUIRE(eventually(30s, [&] { return loopbackGet(scheduler.port, "/healthz") == "ok"; }));

  // 1. A WaitForFirstConsumer local PV on node b: the pod lands there and the PV controller
  //    completes the binding the scheduler started.
  cleanup.refs.push_back(named(kStorageClasses, local_class));
  ok(api->createSync(kStorageClasses, json::object{{"apiVersion", "storage.k8s.io/v1"},
                                                   {"kind", "StorageClass"},
                                                   {"metadata", {{"name", local_class}}},
                                                   {"provisioner", "kubernetes.io/no-provisioner"},
                                                   {"volumeBindingMode", "WaitForFirstConsumer"}}),
     "create StorageClass");
  const std::string local_pv = id + "-local";
  cleanup.refs.push_back(named(kPersistentVolumes, local_pv));
  json::object affinity{
      {"required",
       {{"nodeSelectorTerms",
         json::array{json::object{
             {"matchExpressions",
              json::array{json::object{{"key", "kubernetes.io/hostname"},
                                       {"operator", "In"},
                                       {"values", json::array{json::string(node_b)}}}}}}}}}}};
  ok(api->createSync(kPersistentVolumes,
                     volume(local_pv, {{"local", {{"path", "/mnt/disks/koord-e2e"}}}}, local_class,
                            {{"nodeAffinity", affinity}})),
     "create local PV");
  ok(api->createSync(claims(work.name()), claim("data", local_class, "512Mi")), "create claim");
  CHECK(claimPhase(*api, work.name(), "data") == "Pending/");
  ok(api->createSync(named(kPods, "", work.name()), pod("with-claim", work.name(), id, {"data"})),
     "create pod with claim");
  REQUIRE(eventually(60s, [&] { return !nodeOf(*api, work.name(), "with-claim").empty(); }));
  CHECK(nodeOf(*api, work.name(), "with-claim") == node_b);
  CHECK(eventually(60s,
                   [&] { return claimPhase(*api, work.name(), "data") == "Bound/" + local_pv; }));

  // 2. A claim no PV can satisfy: the pod stays Pending with kube-scheduler's reason.
  ok(api->createSync(claims(work.name()), claim("too-big", local_class, "100Gi")),
     "create unsatisfiable claim");
  ok(api->createSync(named(kPods, "", work.name()), pod("no-fit", work.name(), id, {"too-big"})),
     "create pod that cannot fit");
  REQUIRE(eventually(60s, [&] {
    return scheduledCondition(*api, work.name(), "no-fit")
               .find("didn't find available persistent volumes to bind") != std::string::npos;
  }));
  CHECK(nodeOf(*api, work.name(), "no-fit").empty());
  CHECK(claimPhase(*api, work.name(), "too-big") == "Pending/");

  // 3. Node a may attach one volume of the CSI driver (its CSINode says so): a second pod with
  //    another volume of that driver does not fit there.
  cleanup.refs.push_back(named(kCSINodes, node_a));
  ok(api->createSync(
         kCSINodes,
         json::object{{"apiVersion", "storage.k8s.io/v1"},
                      {"kind", "CSINode"},
                      {"metadata", {{"name", node_a}}},
                      {"spec",
                       {{"drivers", json::array{json::object{{"name", driver},
                                                             {"nodeID", node_a},
                                                             {"topologyKeys", json::array{}},
                                                             {"allocatable", {{"count", 1}}}}}}}}}),
     "create CSINode");
  for (const char* n : {"1", "2"}) {
    const std::string pv = id + "-csi-" + n;
    const std::string pvc = std::string("csi-") + n;
    cleanup.refs.push_back(named(kPersistentVolumes, pv));
    ok(api->createSync(kPersistentVolumes,
                       volume(pv, {{"csi", {{"driver", driver}, {"volumeHandle", pv}}}}, "",
                              {{"claimRef", {{"namespace", work.name()}, {"name", pvc}}}})),
       "create CSI PV");
    ok(api->createSync(claims(work.name()), claim(pvc, "", "1Gi", pv)), "create CSI claim");
  }
  REQUIRE(eventually(60s, [&] {
    return claimPhase(*api, work.name(), "csi-1") == "Bound/" + id + "-csi-1" &&
           claimPhase(*api, work.name(), "csi-2") == "Bound/" + id + "-csi-2";
  }));
  ok(api->createSync(named(kPods, "", work.name()),
                     pod("csi-first", work.name(), id, {"csi-1"}, node_a)),
     "create first CSI pod");
  REQUIRE(eventually(60s, [&] { return nodeOf(*api, work.name(), "csi-first") == node_a; }));
  ok(api->createSync(named(kPods, "", work.name()),
                     pod("csi-second", work.name(), id, {"csi-2"}, node_a)),
     "create second CSI pod");
  REQUIRE(eventually(60s, [&] {
    return scheduledCondition(*api, work.name(), "csi-second")
               .find("node(s) exceed max volume count") != std::string::npos;
  }));
  CHECK(nodeOf(*api, work.name(), "csi-second").empty());

  // 4. The extender filters node a out for the pods it blocks: they all land on node b.
  const int calls_before = extender.calls();
  CHECK(calls_before > 0);  // every pod above went through it
  for (int i = 0; i < 3; ++i) {
    ok(api->createSync(named(kPods, "", work.name()), pod("ext-" + std::to_string(i), work.name(),
                                                          id, {}, "", {{kExtenderLabel, "block"}})),
       "create extender pod");
  }
  for (int i = 0; i < 3; ++i) {
    const std::string name = "ext-" + std::to_string(i);
    REQUIRE(eventually(60s, [&] { return !nodeOf(*api, work.name(), name).empty(); }));
    CHECK(nodeOf(*api, work.name(), name) == node_b);
  }
  CHECK(extender.blockedCalls() >= 3);

  koord::testing::removeAllPodsNow(*api, work.name());
  std::filesystem::remove(config_path);
}
