// ImageLocality in the scheduling loop over the default v1beta1 profile: nodes decoded with their
// images, the cache's counts in the cycle's snapshot, the pod bound where its image is.
#include <boost/json.hpp>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "catch_expected.h"
#include "config/scheduler_config.h"
#include "framework/plugin_registry.h"
#include "koord/core/metrics.h"
#include "scheduler.h"

namespace koord::roles::scheduler {
namespace {

class BindingApi final : public SchedulerApi {
 public:
  void bindPod(std::shared_ptr<const PodInfo> pod, const std::string& node,
               ApiCallback done) const override {
    bindings.emplace_back(pod->key(), node);
    done({});
  }
  std::shared_ptr<const PodInfo> currentPod(const std::string& key) const override {
    auto it = pods.find(key);
    return it == pods.end() ? nullptr : it->second;
  }
  void reportScheduled(const PodInfo&, const std::string&, const std::string&) override {}
  void reportFailure(const PodInfo& pod, const std::string&, std::string_view reason,
                     const std::string& message, const std::string&) override {
    failures.push_back(pod.key() + ": " + std::string(reason) + ": " + message);
  }

  std::map<std::string, std::shared_ptr<const PodInfo>> pods;
  mutable std::vector<std::pair<std::string, std::string>> bindings;
  std::vector<std::string> failures;
};

std::shared_ptr<const Node> decodedNode(const std::string& name, const std::string& cpu,
                                        const std::string& images) {
  auto node = decodeNode(boost::json::parse(R"({"metadata": {"name": ")" + name +
                                            R"("}, "status": {
      "allocatable": {"cpu": ")" + cpu + R"(", "memory": "8Gi", "pods": "110"},
      "capacity": {"cpu": ")" + cpu + R"(", "memory": "8Gi", "pods": "110"},
      "images": )" + images + "}}"));
  REQUIRE(node);
  return std::make_shared<const Node>(std::move(*node));
}

std::shared_ptr<const PodInfo> decodedPod(const std::string& name, const std::string& image) {
  auto pod = decodePodInfo(boost::json::parse(
      R"({"metadata": {"name": ")" + name + R"(", "namespace": "default", "uid": ")" + name +
      R"("}, "spec": {"schedulerName": "koord-scheduler",
      "containers": [{"name": "c", "image": ")" +
      image + R"(", "resources": {"requests": {"cpu": "1"}}}]}})"));
  REQUIRE(pod);
  return std::make_shared<const PodInfo>(std::move(*pod));
}

TEST_CASE("ImageLocality: the default profile binds a pod where its image already is",
          "[scheduler][imagelocality]") {
  auto cfg = config::parseSchedulerConfigText(
      "apiVersion: kubescheduler.config.k8s.io/v1beta1\n"
      "kind: KubeSchedulerConfiguration\n"
      "profiles:\n- schedulerName: koord-scheduler\n",
      inTreeRegistry());
  REQUIRE(cfg);
  BindingApi api;
  metrics::Registry registry;
  Scheduler scheduler(*cfg, inTreeRegistry(), api, registry);

  const std::string warm_images =
      R"([{"names": ["registry.example/app:1.0", "registry.example/app@sha256:aa"],
           "sizeBytes": 943718400}])";
  // "warm" has less room, so the resource scores prefer the others by about a dozen points;
  // 900 MiB on one node of three is 300 MiB, 100 * (300 - 23) / (1000 - 23) = 28 for "warm".
  scheduler.onNodeAdd(decodedNode("cold-a", "4", "[]"));
  scheduler.onNodeAdd(decodedNode("warm", "3", warm_images));
  scheduler.onNodeAdd(decodedNode("cold-b", "4", R"([{"names": ["other:1"], "sizeBytes": 5}])"));

  auto pod = decodedPod("web", "registry.example/app:1.0");
  api.pods[pod->key()] = pod;
  scheduler.onPendingPodAdd(pod);
  REQUIRE(scheduler.scheduleOne());
  CHECK(api.failures.empty());
  REQUIRE(api.bindings.size() == 1);
  CHECK(api.bindings[0] == std::make_pair(std::string("default/web"), std::string("warm")));
}

}  // namespace
}  // namespace koord::roles::scheduler
