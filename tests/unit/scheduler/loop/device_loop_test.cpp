// The scheduling loop with Koordinator's DeviceShare plugin as the chart enables it: pods sharing
// GPUs are bound with the device-allocated annotation on the Binding, the pod that no card can
// take waits, and a bound pod seen again from the informer is counted once.
#include <catch2/catch.hpp>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "../deviceshare/device_fixtures.h"
#include "config/scheduler_config.h"
#include "framework/plugin_registry.h"
#include "koord/apis/device.h"
#include "koord/apis/device_allocation.h"
#include "koord/core/metrics.h"
#include "loop_objects.h"
#include "plugins/deviceshare/device.h"
#include "plugins/deviceshare/device_share_plugin.h"
#include "scheduler.h"
#include "scheduler/map_object_source.h"

namespace koord::roles::scheduler {
namespace {

using testkit::MapObjectSource;

class DeviceApi final : public SchedulerApi {
 public:
  const AnyObjectSource* objectSource(std::string_view key) const override {
    return key == deviceshare::kDeviceSource ? &devices : nullptr;
  }
  void bindPod(std::shared_ptr<const PodInfo> pod, const std::string& node,
               ApiCallback done) const override {
    bindings[pod->key()] = node;
    bound_pods[pod->key()] = pod;
    done({});
  }
  std::shared_ptr<const PodInfo> currentPod(const std::string& key) const override {
    auto it = pods.find(key);
    return it == pods.end() ? nullptr : it->second;
  }
  void reportScheduled(const PodInfo&, const std::string&, const std::string&) override {}
  void reportFailure(const PodInfo& pod, const std::string&, std::string_view,
                     const std::string& message, const std::string&) override {
    failures[pod.key()] = message;
  }

  MapObjectSource<apis::Device> devices;
  std::map<std::string, std::shared_ptr<const PodInfo>> pods;
  mutable std::map<std::string, std::string> bindings;
  mutable std::map<std::string, std::shared_ptr<const PodInfo>> bound_pods;
  std::map<std::string, std::string> failures;
};

// DeviceShare at the points Koordinator's koord-scheduler profile enables it, binpacking.
config::SchedulerConfig deviceConfig() {
  const std::string text =
      "apiVersion: kubescheduler.config.k8s.io/v1beta2\n"
      "kind: KubeSchedulerConfiguration\n"
      "profiles:\n- schedulerName: koord-scheduler\n"
      "  plugins:\n"
      "    preFilter: {enabled: [{name: DeviceShare}]}\n"
      "    filter: {enabled: [{name: DeviceShare}]}\n"
      "    score: {enabled: [{name: DeviceShare, weight: 1}]}\n"
      "    reserve: {enabled: [{name: DeviceShare}]}\n"
      "  pluginConfig:\n"
      "  - name: DeviceShare\n"
      "    args:\n"
      "      scoringStrategy:\n"
      "        type: MostAllocated\n"
      "        resources: [{name: koordinator.sh/gpu-memory-ratio, weight: 1}]\n";
  auto cfg = config::parseSchedulerConfigText(text, inTreeRegistry());
  REQUIRE(cfg.has_value());
  return std::move(*cfg);
}

// A node with two 16Gi GPUs. Its allocatable is set beyond them (the manager writes the
// devices' sums), so that every refusal here is DeviceShare's, not NodeResourcesFit's.
std::shared_ptr<const Node> gpuNode() {
  auto n = std::make_shared<Node>(*testing::loopNode("node-a", 8000));
  n->allocatable.setScalar("koordinator.sh/gpu-core", 1000);
  n->allocatable.setScalar("koordinator.sh/gpu-memory-ratio", 1000);
  n->allocatable.setScalar("koordinator.sh/gpu-memory", 160LL << 30);
  return n;
}

struct Fixture {
  DeviceApi api;
  metrics::Registry registry;
  Scheduler scheduler;

  Fixture() : scheduler(deviceConfig(), inTreeRegistry(), api, registry) {
    scheduler.onNodeAdd(gpuNode());
    auto device = std::make_shared<apis::Device>(deviceshare::testing::decode(
        deviceshare::testing::deviceJson({deviceshare::testing::gpuJson({.minor = 0}),
                                          deviceshare::testing::gpuJson({.minor = 1})})));
    api.devices.set("node-a", device);
  }
  void add(const std::string& name, int ratio) {
    auto p = testing::loopPod(name, 100);
    p->requests.setScalar("koordinator.sh/gpu-memory-ratio", ratio);
    p->non_zero_requests = p->requests;
    api.pods[p->key()] = p;
    scheduler.onPodAdd(*p);
    scheduler.onPendingPodAdd(p);
  }
  void drainActive() {
    while (scheduler.queue().sizes().active > 0)
      scheduler.scheduleOne();
  }
  // The informer's view of the binding: the pod bound, with the Binding's annotations.
  void informerSeesBound(const std::string& key) {
    auto bound = std::make_shared<PodInfo>(*api.bound_pods.at(key));
    const std::shared_ptr<const PodInfo> pending = api.pods.at(key);
    api.pods[key] = bound;
    scheduler.onPodUpdate(*pending, *bound);
    scheduler.onPendingPodDelete(*pending);
    scheduler.onAssignedPodAdd(bound);
  }
  std::string annotationOf(const std::string& key) const {
    auto it = api.bound_pods.find(key);
    REQUIRE(it != api.bound_pods.end());
    auto a = it->second->annotations.find(apis::kAnnotationDeviceAllocated);
    REQUIRE(a != it->second->annotations.end());
    return a->second;
  }
};

int minorOf(const std::string& annotation) {
  auto parsed = apis::parseDeviceAllocations(annotation);
  REQUIRE(parsed.has_value());
  REQUIRE((*parsed)["gpu"].size() == 1);
  return (*parsed)["gpu"][0].minor;
}

TEST_CASE("device loop: shared GPUs are bound with the device-allocated annotation",
          "[scheduler][loop][deviceshare]") {
  Fixture f;
  f.add("half-1", 50);
  f.add("half-2", 50);
  f.add("whole", 100);
  f.add("too-many", 100);
  f.drainActive();

  REQUIRE(f.api.bindings.size() == 3);
  CHECK(f.api.bindings.at("default/half-1") == "node-a");
  CHECK(f.annotationOf("default/half-1") ==
        R"({"gpu":[{"minor":0,"resources":{"koordinator.sh/gpu-memory":"8Gi",)"
        R"("koordinator.sh/gpu-memory-ratio":"50"}}]})");
  CHECK(minorOf(f.annotationOf("default/half-2")) == 0);
  CHECK(minorOf(f.annotationOf("default/whole")) == 1);
  CHECK(f.api.bindings.count("default/too-many") == 0);
  REQUIRE(f.api.failures.count("default/too-many") == 1);
  CHECK(f.api.failures.at("default/too-many").find("Insufficient gpu devices") !=
        std::string::npos);

  // The bindings come back through the informer: counted once, so the node stays full.
  for (const char* key : {"default/half-1", "default/half-2", "default/whole"})
    f.informerSeesBound(key);
  auto* plugin =
      dynamic_cast<deviceshare::DeviceSharePlugin*>(f.scheduler.findPlugin("DeviceShare"));
  REQUIRE(plugin != nullptr);
  {
    auto entry = plugin->cache().find("node-a");
    REQUIRE(entry != nullptr);
    for (int minor : {0, 1}) {
      CHECK(entry->state.device(deviceshare::DeviceType::kGPU, minor)
                ->used.get(deviceshare::DeviceResource::kGPUMemoryRatio) == 100);
    }
  }
  f.add("late", 50);
  f.drainActive();
  CHECK(f.api.bindings.count("default/late") == 0);
  CHECK(f.api.failures.count("default/late") == 1);

  // The waiting pods are withdrawn, and the whole card's pod goes: its card is free for the
  // next one.
  for (const char* key : {"default/too-many", "default/late"})
    f.scheduler.onPendingPodDelete(*f.api.pods.at(key));
  const PodInfo whole = *f.api.pods.at("default/whole");
  f.scheduler.onPodDelete(whole);
  f.scheduler.onAssignedPodDelete(whole);
  f.add("next", 100);
  f.drainActive();
  REQUIRE(f.api.bindings.count("default/next") == 1);
  CHECK(minorOf(f.annotationOf("default/next")) == 1);
}

}  // namespace
}  // namespace koord::roles::scheduler
