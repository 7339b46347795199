// The descheduler API benchmark's driver: fills a real API server with N API-only nodes (Ready,
// 32 cores), M pods bound to them, and a NodeMetric per node (a share of the nodes hot), for
// run.sh to time one `koord descheduler` pass against. Objects go in a request window at a time.
//   koord_bench_descheduler_api --kubeconfig PATH [--nodes 500] [--pods 5000] [--hot-percent 10]
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json.hpp>

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "../scheduler/api_common.h"
#include "koord/kube/kubeconfig.h"
#include "koord/kube/rest_client.h"

using namespace koord::kube;
using namespace koord::bench::scheduler_api;
namespace json = boost::json;

namespace {

const ResourceRef kNodes{"", "v1", "nodes", "", "", ""};
const ResourceRef kNodeMetrics{"slo.koordinator.sh", "v1alpha1", "nodemetrics", "", "", ""};
constexpr const char* kNamespace = "koord-bench-desched";

class Api {
 public:
  explicit Api(RestConfig config) : guard_(boost::asio::make_work_guard(io)) {
    client_ = std::make_unique<RestClient>(io, std::move(config));
    for (int i = 0; i < 2; ++i)
      threads_.emplace_back([this] { io.run(); });
  }
  ~Api() {
    client_.reset();
    guard_.reset();
    io.stop();
    for (auto& t : threads_)
      t.join();
  }
  RestClient& client() { return *client_; }
  boost::asio::io_context io;

 private:
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> guard_;
  std::unique_ptr<RestClient> client_;
  std::vector<std::thread> threads_;
};

std::string nowStamp() {
  const std::time_t t = std::time(nullptr);
  char out[32];
  std::strftime(out, sizeof out, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::string kubeconfig;
  int nodes = 500, pods = 5000, hot_percent = 10;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--kubeconfig")
      kubeconfig = argv[i + 1];
    else if (a == "--nodes")
      nodes = std::atoi(argv[i + 1]);
    else if (a == "--pods")
      pods = std::atoi(argv[i + 1]);
    else if (a == "--hot-percent")
      hot_percent = std::atoi(argv[i + 1]);
    else
      die("unknown flag " + a);
  }
  auto config = loadKubeconfig(kubeconfig);
  if (!config)
    die("--kubeconfig: " + config.error().message);
  config->qps = 2000;
  config->burst = 2000;
  config->user_agent = "koord-bench-descheduler-api";
  Api api(std::move(*config));
  RestClient& c = api.client();
  auto ns = c.createSync(
      ResourceRef{"", "v1", "namespaces", "", "", ""},
      json::object{
          {"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", kNamespace}}}});
  if (!ns && !isAlreadyExists(ns.error()))
    die("create namespace: " + ns.error().message);
  if (!pollUntil(60, [&] {
        return c.getSync(ResourceRef{"", "v1", "serviceaccounts", kNamespace, "default", ""})
            .has_value();
      }))
    die("no default service account");

  const int per_node = pods / nodes;
  const int hot = nodes * hot_percent / 100;
  auto nodeName = [](int i) { return fmt::format("desched-n{:05d}", i); };
  std::string err;
  auto t0 = std::chrono::steady_clock::now();
  // A node is created with its status (a kubelet registers the same way): Ready, 32 cores.
  int failed = runWindowed(
      nodes, 64,
      [&](int i, std::function<void(std::string)> done) {
        json::object alloc{{"cpu", "32"}, {"memory", "128Gi"}, {"pods", "110"}};
        json::object node{
            {"apiVersion", "v1"},
            {"kind", "Node"},
            {"metadata", {{"name", nodeName(i)}, {"labels", {{"koord-bench-desched", "true"}}}}},
            {"status",
             {{"capacity", alloc},
              {"allocatable", alloc},
              {"conditions", json::array{json::object{{"type", "Ready"}, {"status", "True"}}}}}}};
        c.create(kNodes, std::move(node), [done = std::move(done)](ApiResult<json::value> r) {
          done(r || isAlreadyExists(r.error()) ? std::string() : r.error().message);
        });
      },
      &err);
  if (failed > 0)
    die(fmt::format("{} node creates failed: {}", failed, err));
  // The API server taints a node registered without a kubelet's heartbeat not-ready; the test
  // cluster runs no node lifecycle controller to lift it, so the driver does, as a kubelet's
  // first Ready status would.
  failed = runWindowed(
      nodes, 64,
      [&](int i, std::function<void(std::string)> done) {
        ResourceRef ref = kNodes;
        ref.name = nodeName(i);
        c.patch(ref, PatchType::kMergePatch, json::object{{"spec", {{"taints", json::array{}}}}},
                [done = std::move(done)](ApiResult<json::value> r) {
                  done(r ? std::string() : r.error().message);
                });
      },
      &err);
  if (failed > 0)
    die(fmt::format("{} node taint removals failed: {}", failed, err));
  failed = runWindowed(
      nodes * per_node, 64,
      [&](int k, std::function<void(std::string)> done) {
        const int i = k / per_node;
        json::object pod{
            {"apiVersion", "v1"},
            {"kind", "Pod"},
            {"metadata",
             {{"name", fmt::format("p{:05d}-{:02d}", i, k % per_node)},
              // An owner of a kind the API server does not serve: the garbage collector cannot
              // look it up, so it leaves the pods alone, and the descheduler sees owned pods.
              {"ownerReferences", json::array{json::object{{"apiVersion", "bench.koord.local/v1"},
                                                           {"kind", "BenchWorkload"},
                                                           {"name", "bench"},
                                                           {"uid", "bench-workload"},
                                                           {"controller", true}}}}}},
            {"spec",
             {{"nodeName", nodeName(i)},
              {"automountServiceAccountToken", false},
              {"containers",
               json::array{json::object{
                   {"name", "c"},
                   {"image", "registry.k8s.io/pause:3.2"},
                   {"resources", {{"requests", {{"cpu", "2"}, {"memory", "4Gi"}}}}}}}}}}};
        c.create(ResourceRef{"", "v1", "pods", kNamespace, "", ""}, std::move(pod),
                 [done = std::move(done)](ApiResult<json::value> r) {
                   done(r || isAlreadyExists(r.error()) ? std::string() : r.error().message);
                 });
      },
      &err);
  if (failed > 0)
    die(fmt::format("{} pod creates failed: {}", failed, err));
  const std::string stamp = nowStamp();
  failed = runWindowed(
      nodes, 64,
      [&](int i, std::function<void(std::string)> done) {
        json::array pods_metric;
        const std::string pod_cpu = i < hot ? "2800m" : "300m";
        for (int k = 0; k < per_node; ++k)
          pods_metric.push_back(
              json::object{{"namespace", kNamespace},
                           {"name", fmt::format("p{:05d}-{:02d}", i, k)},
                           {"podUsage", {{"resources", {{"cpu", pod_cpu}, {"memory", "2Gi"}}}}}});
        json::object metric{
            {"apiVersion", "slo.koordinator.sh/v1alpha1"},
            {"kind", "NodeMetric"},
            {"metadata", {{"name", nodeName(i)}}},
            {"status",
             {{"updateTime", stamp},
              {"nodeMetric",
               {{"nodeUsage", {{"resources", {{"cpu", "4"}, {"memory", "8Gi"}}}}},
                {"systemUsage", {{"resources", {{"cpu", "1"}, {"memory", "4Gi"}}}}}}},
              {"podsMetric", std::move(pods_metric)}}}};
        // The status subresource drops status on create: create, then write it.
        c.create(kNodeMetrics, metric,
                 [&c, metric, done = std::move(done)](ApiResult<json::value> r) mutable {
                   if (!r && !isAlreadyExists(r.error()))
                     return done(r.error().message);
                   ResourceRef ref = kNodeMetrics;
                   ref.name = std::string(metric.at("metadata").at("name").as_string());
                   ref.subresource = "status";
                   c.patch(ref, PatchType::kMergePatch,
                           json::object{{"status", metric.at("status")}},
                           [done = std::move(done)](ApiResult<json::value> p) {
                             done(p ? std::string() : p.error().message);
                           });
                 });
      },
      &err);
  if (failed > 0)
    die(fmt::format("{} NodeMetric writes failed: {}", failed, err));
  say(fmt::format("{} nodes, {} pods, {} NodeMetrics ({} hot) written in {:.1f} s", nodes,
                  nodes * per_node, nodes, hot,
                  std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()));
  return 0;
}
