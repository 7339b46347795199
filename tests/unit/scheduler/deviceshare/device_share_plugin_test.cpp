// The DeviceShare plugin through its extension points: pods placed one after another on shared
// GPUs, the device-allocated annotation Reserve writes, Unreserve, bound pods and Device objects
// from the informers, preemption's what-if, NUMA affinity, scores and the allocation metric.
#include "plugins/deviceshare/device_share_plugin.h"

#include <catch2/catch.hpp>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "device_fixtures.h"
#include "framework/pod_changes.h"
#include "koord/apis/device_allocation.h"
#include "koord/core/metrics.h"
#include "scheduler/builders.h"
#include "scheduler/fake_handle.h"

using namespace koord;
using namespace koord::roles::scheduler;
using namespace koord::roles::scheduler::deviceshare;
using namespace koord::roles::scheduler::deviceshare::testing;

namespace {

using Entries = std::vector<std::pair<std::string, std::string>>;

class Handle final : public testkit::FakeHandle {
 public:
  metrics::Registry* metricsRegistry() override { return &registry; }
  void requeueUnschedulable() override { ++requeues; }
  metrics::Registry registry;
  int requeues = 0;
};

std::shared_ptr<apis::Device> deviceOf(const std::string& node,
                                       const std::vector<std::string>& devices) {
  auto d = std::make_shared<apis::Device>(decode(deviceJson(devices)));
  d->name = node;
  return d;
}

std::vector<std::string> plainGpus(int n) {
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i)
    out.push_back(gpuJson({.minor = i, .health = true, .numa = -1, .memory = "16Gi"}));
  return out;
}

PodInfo podAsking(const std::string& name, const Entries& entries) {
  kube::ResourceList list;
  for (const auto& [resource, value] : entries)
    list.emplace(resource, kube::Quantity::parse(value).value());
  return testkit::makePod(name).requests(Resource::fromList(list)).obj();
}

// A pod bound to `node` holding what its annotation says.
PodInfo boundPod(const std::string& name, const std::string& node, const std::string& annotation) {
  PodInfo p = testkit::makePod(name).node(node).obj();
  p.annotations[std::string(apis::kAnnotationDeviceAllocated)] = annotation;
  return p;
}

std::string gpuHeld(int minor, int ratio) {
  return fmt::format(
      R"({{"gpu":[{{"minor":{},"resources":{{"koordinator.sh/gpu-memory-ratio":"{}"}}}}]}})", minor,
      ratio);
}

struct Fixture {
  Handle handle;
  testkit::MapObjectSource<apis::Device>& devices;
  std::unique_ptr<DeviceSharePlugin> plugin;

  explicit Fixture(std::vector<std::string> nodes = {"node-a"})
      : devices(handle.fakeCluster().declare<apis::Device>(kDeviceSource)) {
    std::vector<std::shared_ptr<const Node>> list;
    for (const auto& n : nodes)
      list.push_back(testkit::makeNode(n));
    handle.setSnapshot(testkit::snapshotOf(list));
  }
  DeviceSharePlugin& build(DeviceShareArgs args = {}) {
    plugin = std::make_unique<DeviceSharePlugin>(
        std::make_shared<const DeviceShareArgs>(std::move(args)), handle);
    return *plugin;
  }
  void setDevice(const std::string& node, const std::vector<std::string>& list) {
    devices.set(node, deviceOf(node, list));
  }
};

// One pod's cycle on one node, as far as it gets.
struct Cycle {
  CycleState state;
  Status pre_filter;
  Status filter;
  Status reserve;

  /// The annotation Reserve wrote; nullopt when none.
  std::optional<std::string> annotation() const {
    const PodChanges* changes = findPodChanges(state);
    if (changes == nullptr)
      return std::nullopt;
    const std::string* v = changes->annotation(apis::kAnnotationDeviceAllocated);
    return v ? std::optional<std::string>(*v) : std::nullopt;
  }
  std::vector<int> minors() const {
    std::vector<int> out;
    if (auto a = annotation()) {
      auto parsed = apis::parseDeviceAllocations(*a);
      REQUIRE(parsed.has_value());
      for (const auto& d : (*parsed)["gpu"])
        out.push_back(d.minor);
    }
    return out;
  }
};

std::unique_ptr<Cycle> run(Fixture& f, const PodInfo& pod, const std::string& node = "node-a") {
  auto c = std::make_unique<Cycle>();
  c->pre_filter = f.plugin->preFilter(c->state, pod);
  if (!c->pre_filter.ok())
    return c;
  c->filter = f.plugin->filter(c->state, pod, f.handle.node(node));
  if (!c->filter.ok())
    return c;
  c->reserve = f.plugin->reserve(c->state, pod, node);
  return c;
}

DeviceShareArgs binpack() {
  DeviceShareArgs a;
  a.scoring_strategy.type = config::KoordScoringType::kMostAllocated;
  return a;
}

std::optional<double> gauge(metrics::Registry& r, const std::vector<std::string>& labels) {
  std::optional<double> out;
  r.gauge(kAllocatedMetric, "", {"node", "type", "resource"})
      .forEach([&](const metrics::LabelValues& values, const metrics::Gauge& g) {
        if (values == labels)
          out = g.value();
      });
  return out;
}

}  // namespace

TEST_CASE("deviceshare plugin: pods one after another on two GPUs, by scoring strategy",
          "[scheduler][deviceshare][plugin]") {
  struct Step {
    int ratio;
    std::vector<int> minors;  // empty: Filter refuses with "Insufficient gpu devices"
  };
  struct Case {
    std::string name;
    DeviceShareArgs args;
    std::vector<Step> steps;
  };
  const std::vector<Case> cases = {
      {"binpack (MostAllocated): two halves share minor 0, a whole card takes 1, the next is "
       "refused",
       binpack(),
       {{50, {0}}, {50, {0}}, {100, {1}}, {100, {}}}},
      {"spread (LeastAllocated, the default): the halves go to different cards, a whole one fits "
       "nowhere",
       DeviceShareArgs{},
       {{50, {0}}, {50, {1}}, {100, {}}, {50, {0}}}},
  };
  for (const Case& c : cases) {
    SECTION(c.name) {
      Fixture f;
      f.setDevice("node-a", plainGpus(2));
      f.build(c.args);
      int i = 0;
      std::vector<std::unique_ptr<Cycle>> kept;
      for (const Step& step : c.steps) {
        INFO("pod " << i);
        auto cycle =
            run(f, podAsking("p" + std::to_string(i),
                             {{"koordinator.sh/gpu-memory-ratio", std::to_string(step.ratio)}}));
        REQUIRE(cycle->pre_filter.ok());
        if (step.minors.empty()) {
          CHECK(cycle->filter.code() == Code::kUnschedulable);
          CHECK(cycle->filter.message() == "Insufficient gpu devices");
          CHECK_FALSE(cycle->annotation().has_value());
        } else {
          REQUIRE(cycle->filter.ok());
          REQUIRE(cycle->reserve.ok());
          CHECK(cycle->minors() == step.minors);
        }
        kept.push_back(std::move(cycle));
        ++i;
      }
    }
  }
}

TEST_CASE("deviceshare plugin: the device-allocated annotation Reserve writes",
          "[scheduler][deviceshare][plugin]") {
  Fixture f;
  f.setDevice("node-a", plainGpus(2));
  f.build();
  SECTION("a half card: gpu-memory from the card's 16Gi, no gpu-core asked, none written") {
    auto c = run(f, podAsking("half", {{"koordinator.sh/gpu-memory-ratio", "50"}}));
    REQUIRE(c->reserve.ok());
    CHECK(c->annotation() == R"({"gpu":[{"minor":0,"resources":{"koordinator.sh/gpu-memory":"8Gi",)"
                             R"("koordinator.sh/gpu-memory-ratio":"50"}}]})");
  }
  SECTION("two whole cards by nvidia.com/gpu: core and ratio 100 on each") {
    auto c = run(f, podAsking("two", {{"nvidia.com/gpu", "2"}}));
    REQUIRE(c->reserve.ok());
    CHECK(c->annotation() ==
          R"({"gpu":[{"minor":0,"resources":{"koordinator.sh/gpu-core":"100",)"
          R"("koordinator.sh/gpu-memory":"16Gi","koordinator.sh/gpu-memory-ratio":"100"}},)"
          R"({"minor":1,"resources":{"koordinator.sh/gpu-core":"100",)"
          R"("koordinator.sh/gpu-memory":"16Gi","koordinator.sh/gpu-memory-ratio":"100"}}]})");
  }
}

TEST_CASE("deviceshare plugin: PreFilter skips, refuses and passes",
          "[scheduler][deviceshare][plugin]") {
  struct Case {
    std::string name;
    Entries requests;
    Code code;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"no device requested: Skip", {{"cpu", "1"}}, Code::kSkip, ""},
      {"a share over 100 that is no whole number of cards",
       {{"koordinator.sh/gpu-core", "150"}, {"koordinator.sh/gpu-memory-ratio", "150"}},
       Code::kUnschedulableAndUnresolvable,
       "invalid resource unit koordinator.sh/gpu-core: 150"},
      {"gpu-core alone",
       {{"koordinator.sh/gpu-core", "50"}},
       Code::kUnschedulableAndUnresolvable,
       "invalid resource device requests: [koordinator.sh/gpu-core]"},
      {"a valid share", {{"koordinator.sh/gpu-memory-ratio", "50"}}, Code::kSuccess, ""},
  };
  Fixture f;
  f.setDevice("node-a", plainGpus(1));
  f.build();
  for (const Case& c : cases) {
    SECTION(c.name) {
      CycleState state;
      const Status s = f.plugin->preFilter(state, podAsking("p", c.requests));
      CHECK(s.code() == c.code);
      CHECK(s.message() == c.message);
      // The NUMA store is made only for pods with device requests.
      CHECK((numaAffinityStore(state) != nullptr) == (c.code == Code::kSuccess));
    }
  }
}

TEST_CASE("deviceshare plugin: a node without a Device lets the pod through and writes nothing",
          "[scheduler][deviceshare][plugin]") {
  Fixture f({"node-a", "node-b"});
  f.setDevice("node-a", plainGpus(1));
  f.build();
  auto c = run(f, podAsking("p", {{"koordinator.sh/gpu-memory-ratio", "100"}}), "node-b");
  CHECK(c->filter.ok());
  CHECK(c->reserve.ok());
  CHECK_FALSE(c->annotation().has_value());
  CHECK(f.plugin->cache().find("node-b") == nullptr);
}

TEST_CASE("deviceshare plugin: Unreserve gives the devices and the annotation back",
          "[scheduler][deviceshare][plugin]") {
  Fixture f;
  f.setDevice("node-a", plainGpus(1));
  f.build();
  auto first = run(f, podAsking("first", {{"koordinator.sh/gpu-memory-ratio", "100"}}));
  REQUIRE(first->reserve.ok());
  auto second = run(f, podAsking("second", {{"koordinator.sh/gpu-memory-ratio", "100"}}));
  CHECK(second->filter.code() == Code::kUnschedulable);

  f.plugin->unreserve(first->state, podAsking("first", {}), "node-a");
  CHECK_FALSE(first->annotation().has_value());
  // Twice is harmless.
  f.plugin->unreserve(first->state, podAsking("first", {}), "node-a");
  auto third = run(f, podAsking("third", {{"koordinator.sh/gpu-memory-ratio", "100"}}));
  CHECK(third->filter.ok());
  CHECK(third->minors() == std::vector<int>{0});
}

TEST_CASE("deviceshare plugin: bound pods from the informer are counted",
          "[scheduler][deviceshare][plugin]") {
  Fixture f;
  f.build();
  // The pod comes before its node's Device: counted once the devices arrive.
  const PodInfo bound = boundPod("bound", "node-a", gpuHeld(0, 100));
  f.plugin->onAssignedPodAdd(bound);
  f.setDevice("node-a", plainGpus(2));
  auto next = run(f, podAsking("next", {{"koordinator.sh/gpu-memory-ratio", "100"}}));
  REQUIRE(next->reserve.ok());
  CHECK(next->minors() == std::vector<int>{1});
  // Seen again once bound, the reserved pod is not counted twice.
  PodInfo next_bound = podAsking("next", {});
  next_bound.node_name = "node-a";
  next_bound.annotations[std::string(apis::kAnnotationDeviceAllocated)] = *next->annotation();
  f.plugin->onAssignedPodAdd(next_bound);
  {
    auto entry = f.plugin->cache().find("node-a");
    REQUIRE(entry != nullptr);
    CHECK(entry->state.device(DeviceType::kGPU, 1)->used.get(DeviceResource::kGPUMemoryRatio) ==
          100);
  }
  auto full = run(f, podAsking("full", {{"koordinator.sh/gpu-memory-ratio", "50"}}));
  CHECK(full->filter.code() == Code::kUnschedulable);

  SECTION("an update moving the pod's devices is followed") {
    const PodInfo moved = boundPod("bound", "node-a", gpuHeld(0, 50));
    f.plugin->onAssignedPodUpdate(bound, moved);
    auto half = run(f, podAsking("half", {{"koordinator.sh/gpu-memory-ratio", "50"}}));
    CHECK(half->filter.ok());
    CHECK(half->minors() == std::vector<int>{0});
  }
  SECTION("a deleted pod frees its devices") {
    f.plugin->onAssignedPodDelete(bound);
    auto again = run(f, podAsking("again", {{"koordinator.sh/gpu-memory-ratio", "100"}}));
    CHECK(again->minors() == std::vector<int>{0});
  }
  SECTION("a finished pod frees its devices") {
    PodInfo done = bound;
    done.phase = PodPhase::kSucceeded;
    f.plugin->onAssignedPodUpdate(bound, done);
    auto again = run(f, podAsking("again", {{"koordinator.sh/gpu-memory-ratio", "100"}}));
    CHECK(again->minors() == std::vector<int>{0});
  }
}

TEST_CASE("deviceshare plugin: a malformed device-allocated annotation counts nothing",
          "[scheduler][deviceshare][plugin]") {
  Fixture f;
  f.setDevice("node-a", plainGpus(1));
  f.build();
  for (const char* bad : {"not json", R"({"gpu":[{"minor":"zero"}]})", R"({"gpu":[null]})"}) {
    INFO(bad);
    f.plugin->onAssignedPodAdd(boundPod(std::string("bad-") + bad, "node-a", bad));
  }
  auto c = run(f, podAsking("p", {{"koordinator.sh/gpu-memory-ratio", "100"}}));
  CHECK(c->filter.ok());
}

TEST_CASE("deviceshare plugin: Device updates and deletes", "[scheduler][deviceshare][plugin]") {
  Fixture f;
  f.setDevice("node-a", plainGpus(1));
  f.build();
  const PodInfo two = podAsking("two", {{"nvidia.com/gpu", "2"}});
  CHECK(run(f, two)->filter.code() == Code::kUnschedulable);

  const int before = f.handle.requeues;
  f.setDevice("node-a", plainGpus(2));
  CHECK(f.handle.requeues == before + 1);
  CHECK(run(f, two)->filter.ok());

  SECTION("an update that changes no device neither recounts nor requeues") {
    auto same = deviceOf("node-a", plainGpus(2));
    same->resource_version = "8";
    f.devices.set("node-a", same);
    CHECK(f.handle.requeues == before + 1);
  }
  SECTION("a deleted Device leaves its devices unhealthy: nothing more is placed") {
    f.devices.remove("node-a");
    CHECK(f.handle.requeues == before + 2);
    auto c = run(f, podAsking("p", {{"koordinator.sh/gpu-memory-ratio", "10"}}));
    CHECK(c->filter.code() == Code::kUnschedulableAndUnresolvable);
    CHECK(c->filter.message() == "no healthy GPU Devices");
  }
  SECTION("a deleted Node drops the entry; its return brings the Device back") {
    f.plugin->onNodeDelete(*testkit::makeNode("node-a"));
    CHECK(f.plugin->cache().find("node-a") == nullptr);
    f.plugin->onNodeAdd(*testkit::makeNode("node-a"));
    CHECK(f.plugin->cache().find("node-a") != nullptr);
    CHECK(run(f, two)->filter.ok());
  }
}

TEST_CASE("deviceshare plugin: preemption's what-if frees and retakes a victim's devices",
          "[scheduler][deviceshare][plugin]") {
  Fixture f;
  f.setDevice("node-a", plainGpus(1));
  f.build();
  const PodInfo victim = boundPod("victim", "node-a", gpuHeld(0, 100));
  f.plugin->onAssignedPodAdd(victim);
  const PodInfo pod = podAsking("p", {{"koordinator.sh/gpu-memory-ratio", "100"}});
  CycleState state;
  REQUIRE(f.plugin->preFilter(state, pod).ok());
  const NodeInfo& node = f.handle.node("node-a");
  CHECK(f.plugin->filter(state, pod, node).code() == Code::kUnschedulable);

  REQUIRE(f.plugin->preFilterExtensions()->removePod(state, pod, victim, node).ok());
  CHECK(f.plugin->filter(state, pod, node).ok());
  // The copy preemption takes for another node keeps what was released here.
  CycleState copy = state.clone();
  CHECK(f.plugin->filter(copy, pod, node).ok());

  REQUIRE(f.plugin->preFilterExtensions()->addPod(state, pod, victim, node).ok());
  CHECK(f.plugin->filter(state, pod, node).code() == Code::kUnschedulable);
  // A pod holding nothing here changes nothing.
  REQUIRE(f.plugin->preFilterExtensions()
              ->removePod(state, pod, testkit::makePod("other").node("node-a").obj(), node)
              .ok());
  CHECK(f.plugin->filter(state, pod, node).code() == Code::kUnschedulable);
}

TEST_CASE("deviceshare plugin: the NUMA affinity the topology manager chose is honoured",
          "[scheduler][deviceshare][plugin]") {
  Fixture f;
  f.setDevice("node-a", {gpuJson({.minor = 0, .health = true, .numa = 0, .memory = "16Gi"}),
                         gpuJson({.minor = 1, .health = true, .numa = 1, .memory = "16Gi"})});
  const PodInfo pod = podAsking("p", {{"koordinator.sh/gpu-memory-ratio", "100"}});

  SECTION("Reserve takes the device on the store's NUMA node") {
    f.build(binpack());
    CycleState state;
    REQUIRE(f.plugin->preFilter(state, pod).ok());
    REQUIRE(numaAffinityStore(state) != nullptr);
    numaAffinityStore(state)->set("node-a", {.affinity = 0b10, .preferred = true, .score = 0});
    REQUIRE(f.plugin->reserve(state, pod, "node-a").ok());
    CHECK(*findPodChanges(state)->annotation(apis::kAnnotationDeviceAllocated) ==
          R"({"gpu":[{"minor":1,"resources":{"koordinator.sh/gpu-memory":"16Gi",)"
          R"("koordinator.sh/gpu-memory-ratio":"100"}}]})");
  }
  SECTION("with disableDeviceNUMATopologyAlignment the store is not read and no hints are given") {
    DeviceShareArgs args = binpack();
    args.disable_device_numa_topology_alignment = true;
    f.build(args);
    CycleState state;
    REQUIRE(f.plugin->preFilter(state, pod).ok());
    numaAffinityStore(state)->set("node-a", {.affinity = 0b10, .preferred = true, .score = 0});
    REQUIRE(f.plugin->reserve(state, pod, "node-a").ok());
    CHECK(
        findPodChanges(state)->annotation(apis::kAnnotationDeviceAllocated)->find(R"("minor":0)") !=
        std::string::npos);
    CHECK(f.plugin->podTopologyHints(state, pod, f.handle.node("node-a")).empty());
  }
  SECTION("hints per requested resource, and allocate() within an affinity") {
    f.build();
    f.plugin->onAssignedPodAdd(boundPod("holder", "node-a", gpuHeld(0, 100)));
    CycleState state;
    REQUIRE(f.plugin->preFilter(state, pod).ok());
    const NodeInfo& node = f.handle.node("node-a");
    const NUMAProviderHints hints = f.plugin->podTopologyHints(state, pod, node);
    REQUIRE(hints.size() == 2);
    CHECK(hints[0].resource == "koordinator.sh/gpu-memory");
    CHECK(hints[1].resource == "koordinator.sh/gpu-memory-ratio");
    // NUMA node 0's card is taken: node 1 alone (preferred) or both.
    const std::vector<NUMATopologyHint> want = {{.affinity = 0b10, .preferred = true, .score = 0},
                                                {.affinity = 0b11, .preferred = false, .score = 0}};
    CHECK(hints[0].hints == want);
    CHECK(hints[1].hints == want);
    CHECK(f.plugin->allocate(state, {.affinity = 0b01, .preferred = true, .score = 0}, pod, node)
              .code() == Code::kUnschedulable);
    CHECK(f.plugin->allocate(state, {.affinity = 0b10, .preferred = true, .score = 0}, pod, node)
              .ok());
    // Filter looks at the whole node, as Koordinator's does.
    numaAffinityStore(state)->set("node-a", {.affinity = 0b01, .preferred = true, .score = 0});
    CHECK(f.plugin->filter(state, pod, node).ok());
  }
}

TEST_CASE("deviceshare plugin: Score by strategy, normalised over the nodes",
          "[scheduler][deviceshare][plugin]") {
  struct Case {
    std::string name;
    DeviceShareArgs args;
    std::int64_t raw_a, raw_b, a, b;
  };
  // node-a has half a card of its two taken; the pod asks half a card. Over the ratio summed on
  // the node (200): LeastAllocated (200-100)*100/200 and (200-50)*100/200; MostAllocated the
  // complements.
  const std::vector<Case> cases = {
      {"LeastAllocated prefers the emptier node", DeviceShareArgs{}, 50, 75, 66, 100},
      {"MostAllocated prefers the fuller node", binpack(), 50, 25, 100, 50},
  };
  for (const Case& c : cases) {
    SECTION(c.name) {
      Fixture f({"node-a", "node-b"});
      f.setDevice("node-a", plainGpus(2));
      f.setDevice("node-b", plainGpus(2));
      f.build(c.args);
      f.plugin->onAssignedPodAdd(boundPod("held", "node-a", gpuHeld(0, 50)));
      const PodInfo pod = podAsking("p", {{"koordinator.sh/gpu-memory-ratio", "50"}});
      CycleState state;
      REQUIRE(f.plugin->preFilter(state, pod).ok());
      std::int64_t a = -1;
      std::int64_t b = -1;
      REQUIRE(f.plugin->score(state, pod, f.handle.node("node-a"), a).ok());
      REQUIRE(f.plugin->score(state, pod, f.handle.node("node-b"), b).ok());
      CHECK(a == c.raw_a);
      CHECK(b == c.raw_b);
      std::vector<NodeScore> scores = {{"node-a", a}, {"node-b", b}};
      REQUIRE(f.plugin->hasNormalizeScore());
      REQUIRE(f.plugin->normalizeScore(state, pod, scores).ok());
      CHECK(scores[0].score == c.a);
      CHECK(scores[1].score == c.b);
    }
  }
}

TEST_CASE("deviceshare plugin: scheduler_device_allocated follows what pods hold",
          "[scheduler][deviceshare][plugin]") {
  Fixture f;
  f.setDevice("node-a", plainGpus(2));
  f.build();
  metrics::Registry& r = f.handle.registry;
  // Devices registered before the plugin was built are published once it lists them.
  CHECK(gauge(r, {"node-a", "gpu", "koordinator.sh/gpu-memory-ratio"}) == 0.0);
  auto c = run(f, podAsking("p", {{"koordinator.sh/gpu-memory-ratio", "50"}}));
  REQUIRE(c->reserve.ok());
  CHECK(gauge(r, {"node-a", "gpu", "koordinator.sh/gpu-memory-ratio"}) == 50.0);
  CHECK(gauge(r, {"node-a", "gpu", "koordinator.sh/gpu-memory"}) == double(8LL << 30));
  CHECK(gauge(r, {"node-a", "gpu", "koordinator.sh/gpu-core"}) == 0.0);
  CHECK_FALSE(gauge(r, {"node-a", "rdma", "koordinator.sh/rdma"}).has_value());
  f.plugin->unreserve(c->state, podAsking("p", {}), "node-a");
  CHECK(gauge(r, {"node-a", "gpu", "koordinator.sh/gpu-memory-ratio"}) == 0.0);
  f.plugin->onNodeDelete(*testkit::makeNode("node-a"));
  CHECK_FALSE(gauge(r, {"node-a", "gpu", "koordinator.sh/gpu-memory-ratio"}).has_value());
}

TEST_CASE("deviceshare plugin: a bound pod as the pod informer decodes it is counted",
          "[scheduler][deviceshare][plugin]") {
  Fixture f;
  f.setDevice("node-a", plainGpus(1));
  f.build();
  // The scheduler's pod decoder keeps only the annotations plugins read; device-allocated is one.
  auto pod = decodePodInfo(boost::json::parse(R"({
    "metadata": {"namespace": "default", "name": "bound", "uid": "u-bound",
                 "annotations": {
                   "scheduling.koordinator.sh/device-allocated":
                     "{\"gpu\":[{\"minor\":0,\"resources\":{\"koordinator.sh/gpu-memory-ratio\":\"100\"}}]}",
                   "unrelated.example.com/note": "dropped"}},
    "spec": {"nodeName": "node-a", "containers": [{"name": "c"}]},
    "status": {"phase": "Running"}})"));
  REQUIRE(pod.has_value());
  CHECK(pod->annotations.count("unrelated.example.com/note") == 0);
  f.plugin->onAssignedPodAdd(*pod);
  auto c = run(f, podAsking("p", {{"koordinator.sh/gpu-memory-ratio", "10"}}));
  CHECK(c->filter.code() == Code::kUnschedulable);
}

TEST_CASE("deviceshare plugin: the pod's device hints reach Filter and Reserve",
          "[scheduler][deviceshare][plugin]") {
  Fixture f;
  f.setDevice("node-a", {rdmaJson(1, 0, 2), rdmaJson(2, 1)});
  f.build();
  PodInfo pod = podAsking("p", {{"koordinator.sh/rdma", "1"}});
  SECTION("a malformed hint is refused at PreFilter, naming the member") {
    pod.annotations["scheduling.koordinator.sh/device-allocate-hint"] =
        R"({"rdma":{"allocateStrategy":"Everything"}})";
    auto c = run(f, pod);
    CHECK(c->pre_filter.code() == Code::kUnschedulableAndUnresolvable);
    CHECK(c->pre_filter.message() ==
          "invalid DeviceAllocateHint annotation, err: rdma.allocateStrategy: \"Everything\" is "
          "not one of \"ApplyForAll\", \"RequestsAsCount\"");
    pod.annotations.clear();
    pod.annotations["scheduling.koordinator.sh/device-joint-allocate"] = "[";
    CHECK_THAT(run(f, pod)->pre_filter.message(),
               Catch::StartsWith("invalid DeviceJointAllocate annotation, err: "));
  }
  SECTION("a vfSelector gives the NIC that has VFs, with one") {
    pod.annotations["scheduling.koordinator.sh/device-allocate-hint"] =
        R"({"rdma":{"vfSelector":{"matchLabels":{"type":"general"}}}})";
    auto c = run(f, pod);
    REQUIRE(c->reserve.ok());
    REQUIRE(c->annotation().has_value());
    CHECK(*c->annotation() == R"({"rdma":[{"minor":1,"resources":{"koordinator.sh/rdma":"1"},)"
                              R"("extension":{"vfs":[{"busID":"0000:1f:00.0"}]}}]})");
  }
}

TEST_CASE("deviceshare plugin: gpuShareUnsupportedModels refuses pods sharing such cards",
          "[scheduler][deviceshare][plugin]") {
  Fixture f({"ascend", "nvidia"});
  auto labelled = [&](const std::string& name, const std::string& vendor,
                      const std::string& model) {
    auto n = std::make_shared<Node>(*f.handle.node(name).node);
    n->labels["node.koordinator.sh/gpu-vendor"] = vendor;
    n->labels["node.koordinator.sh/gpu-model"] = model;
    return std::shared_ptr<const Node>(n);
  };
  f.handle.setSnapshot(testkit::snapshotOf({labelled("ascend", "huawei", "Ascend-310P3-300I-DUO"),
                                            labelled("nvidia", "nvidia", "A100")}));
  f.setDevice("ascend", plainGpus(2));
  f.setDevice("nvidia", plainGpus(2));
  DeviceShareArgs args;
  args.gpu_share_unsupported_models = {{"huawei", "Ascend-310P3-300I-DUO"}};
  f.build(args);
  auto half = run(f, podAsking("half", {{"koordinator.sh/gpu-memory-ratio", "50"}}), "ascend");
  CHECK(half->filter.code() == Code::kUnschedulableAndUnresolvable);
  CHECK(half->filter.message() ==
        "model \"Ascend-310P3-300I-DUO\" of vendor \"huawei\" does not support GPU Share");
  CHECK(run(f, podAsking("half-2", {{"koordinator.sh/gpu-memory-ratio", "50"}}), "nvidia")
            ->reserve.ok());
  // A whole card is no share: the model serves it.
  CHECK(run(f, podAsking("whole", {{"nvidia.com/gpu", "1"}}), "ascend")->reserve.ok());
}

namespace {

// A Huawei NPU as Koordinator's koordlet reports one: AI cores, AI CPUs, DVPP and memory, no
// gpu-core.
std::string npuJson(int minor) {
  return fmt::format(R"({{"type":"gpu","id":"NPU-{}","minor":{},"health":true,"resources":{{)"
                     R"("huawei.com/npu-core":"8","huawei.com/npu-cpu":"7",)"
                     R"("huawei.com/npu-dvpp":"100","koordinator.sh/gpu-memory":"24Gi",)"
                     R"("koordinator.sh/gpu-memory-ratio":"100"}}}})",
                     minor, minor);
}

TemplatesConfigMap templatesConfigMap(std::string data) {
  return {"koordinator-system", "gpu-shared-resource-templates", std::move(data)};
}

constexpr std::string_view kAscendTemplates = R"(huawei-Ascend-310P3:
  vir01:
    huawei.com/npu-core: "1"
    huawei.com/npu-cpu: "1"
    huawei.com/npu-dvpp: "12"
    koordinator.sh/gpu-memory: 3Gi
  vir04:
    huawei.com/npu-core: "4"
    huawei.com/npu-cpu: "4"
    huawei.com/npu-dvpp: "50"
    koordinator.sh/gpu-memory: 12Gi
)";

Entries vnpu(const std::string& core, const std::string& cpu, const std::string& dvpp,
             const std::string& memory) {
  return {{"koordinator.sh/gpu.shared", "1"},
          {"huawei.com/npu-core", core},
          {"huawei.com/npu-cpu", cpu},
          {"huawei.com/npu-dvpp", dvpp},
          {"koordinator.sh/gpu-memory", memory}};
}

}  // namespace

TEST_CASE("deviceshare plugin: vNPU slices must match a shared-resource template",
          "[scheduler][deviceshare][plugin]") {
  Fixture f({"ascend", "other"});
  auto labelled = [&](const std::string& name, const std::string& model) {
    auto n = std::make_shared<Node>(*f.handle.node(name).node);
    n->labels["node.koordinator.sh/gpu-vendor"] = "huawei";
    n->labels["node.koordinator.sh/gpu-model"] = model;
    return std::shared_ptr<const Node>(n);
  };
  f.handle.setSnapshot(
      testkit::snapshotOf({labelled("ascend", "Ascend-310P3"), labelled("other", "Ascend-910")}));
  f.setDevice("ascend", {npuJson(0), npuJson(1)});
  f.setDevice("other", {npuJson(0)});
  auto& plugin = f.build(binpack());

  // No ConfigMap yet: every slice is refused at PreFilter, in Koordinator's words.
  auto early = run(f, podAsking("early", vnpu("1", "1", "12", "3Gi")), "ascend");
  CHECK(early->pre_filter.code() == Code::kUnschedulableAndUnresolvable);
  CHECK(early->pre_filter.message() == "no matched GPU shared resource template");

  plugin.onTemplatesConfigMap(templatesConfigMap(std::string(kAscendTemplates)));
  CHECK(f.handle.requeues > 0);
  auto a = run(f, podAsking("a", vnpu("1", "1", "12", "3Gi")), "ascend");
  REQUIRE(a->reserve.ok());
  auto parsed = apis::parseDeviceAllocations(a->annotation().value());
  REQUIRE(parsed.has_value());
  const auto& gpu = parsed->at("gpu");
  REQUIRE(gpu.size() == 1);
  CHECK(gpu[0].gpu_shared_resource_template == "vir01");
  CHECK(gpu[0].resources.at("huawei.com/npu-core").value() == 1);
  CHECK(gpu[0].resources.at("huawei.com/npu-dvpp").value() == 12);
  CHECK(gpu[0].resources.at("koordinator.sh/gpu-memory-ratio").value() == 12);
  CHECK_THAT(*a->annotation(),
             Catch::Contains(R"("extension":{"gpuSharedResourceTemplate":"vir01"})"));

  // Amounts no template lists, and a model without the template.
  auto odd = run(f, podAsking("odd", vnpu("3", "1", "12", "3Gi")), "ascend");
  CHECK(odd->pre_filter.message() == "no matched GPU shared resource template");
  auto elsewhere = run(f, podAsking("b", vnpu("1", "1", "12", "3Gi")), "other");
  CHECK(elsewhere->filter.code() == Code::kUnschedulableAndUnresolvable);
  CHECK(elsewhere->filter.message() == "no matched GPU shared resource template");

  // Slices take the NPU's cores: binpack fills card 0 (8 cores, 100 DVPP: one vir04 still fits
  // beside vir01, the next goes to card 1).
  CHECK(run(f, podAsking("c", vnpu("4", "4", "50", "12Gi")), "ascend")->minors() ==
        std::vector<int>{0});
  CHECK(run(f, podAsking("d", vnpu("4", "4", "50", "12Gi")), "ascend")->minors() ==
        std::vector<int>{1});

  // A malformed update changes nothing; a deletion leaves no templates.
  plugin.onTemplatesConfigMap(templatesConfigMap("huawei-Ascend-310P3: [oops]"));
  CHECK(run(f, podAsking("e", vnpu("1", "1", "12", "3Gi")), "ascend")->pre_filter.ok());
  plugin.onTemplatesConfigMapDelete(templatesConfigMap(""));
  CHECK(run(f, podAsking("f", vnpu("1", "1", "12", "3Gi")), "ascend")->pre_filter.message() ==
        "no matched GPU shared resource template");
  // Another ConfigMap is not the args' one.
  TemplatesConfigMap other = templatesConfigMap(std::string(kAscendTemplates));
  other.name = "something-else";
  plugin.onTemplatesConfigMap(other);
  CHECK_FALSE(run(f, podAsking("g", vnpu("1", "1", "12", "3Gi")), "ascend")->pre_filter.ok());
}

TEST_CASE("deviceshare plugin: whole NPUs and GPU shares need no template",
          "[scheduler][deviceshare][plugin]") {
  Fixture f;
  f.setDevice("node-a", {npuJson(0), npuJson(1)});
  f.build();
  // Not shared: huawei.com/npu-core with whole cards.
  auto whole = run(f, podAsking("whole", {{"huawei.com/npu-core", "16"},
                                          {"koordinator.sh/gpu-memory-ratio", "200"}}));
  REQUIRE(whole->reserve.ok());
  CHECK(whole->minors() == std::vector<int>{0, 1});
  // Shared, but naming no matched resource (the default matches huawei.com/npu-core only).
  Fixture g;
  g.setDevice("node-a", plainGpus(1));
  g.build();
  CHECK(run(g, podAsking("half", {{"koordinator.sh/gpu-memory-ratio", "50"}}))->reserve.ok());
}
