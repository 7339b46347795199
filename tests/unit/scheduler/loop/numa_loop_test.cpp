// The scheduling loop with Koordinator's NodeNUMAResource plugin as the chart enables it: an LSR
// pod's CPUs reach its Binding as scheduling.koordinator.sh/resource-status, the bound pod's
// CPUs stay held, a refused binding gives them back, and a SingleNUMANode node refuses a pod no
// NUMA node can hold.
#include <boost/json.hpp>

#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <vector>

#include "config/scheduler_config.h"
#include "framework/plugin_registry.h"
#include "koord/apis/extension.h"
#include "koord/apis/node_resource_topology.h"
#include "koord/core/metrics.h"
#include "loop_api.h"
#include "loop_objects.h"
#include "plugins/nodenumaresource/node_numa_resource.h"
#include "plugins/nodenumaresource/resource_spec.h"
#include "scheduler.h"
#include "scheduler/map_object_source.h"

namespace koord::roles::scheduler {
namespace {

namespace json = boost::json;
namespace nnr = nodenumaresource;

class NumaApi final : public SchedulerApi {
 public:
  const AnyObjectSource* objectSource(std::string_view key) const override {
    return key == nnr::kNodeResourceTopologySource ? &topologies : nullptr;
  }
  void bindPod(std::shared_ptr<const PodInfo> pod, const std::string& node,
               ApiCallback done) const override {
    calls.push_back("bind " + pod->key() + " " + node);
    bound.push_back(pod);
    if (refuse_binding)
      done(kube::makeKubeError("Operation cannot be fulfilled on pods/binding: conflict"));
    else
      done({});
  }
  void patchPod(std::shared_ptr<const PodInfo> pod, json::value patch,
                ApiCallback done) const override {
    calls.push_back("patch " + pod->key() + " " + json::serialize(patch));
    done({});
  }
  std::shared_ptr<const PodInfo> currentPod(const std::string& key) const override {
    auto it = pods.find(key);
    return it == pods.end() ? nullptr : it->second;
  }
  void reportScheduled(const PodInfo&, const std::string&, const std::string&) override {}
  void reportFailure(const PodInfo& pod, const std::string&, std::string_view,
                     const std::string& message, const std::string&) override {
    calls.push_back("failed " + pod.key() + ": " + message);
  }

  testkit::MapObjectSource<apis::NodeResourceTopology> topologies;
  std::map<std::string, std::shared_ptr<const PodInfo>> pods;
  bool refuse_binding = false;
  mutable std::vector<std::string> calls;
  mutable std::vector<std::shared_ptr<const PodInfo>> bound;
};

config::SchedulerConfig numaConfig() {
  const char* text =
      "apiVersion: kubescheduler.config.k8s.io/v1beta2\n"
      "kind: KubeSchedulerConfiguration\n"
      "profiles:\n- schedulerName: koord-scheduler\n"
      "  plugins:\n"
      "    preFilter: {enabled: [{name: NodeNUMAResource}]}\n"
      "    filter: {enabled: [{name: NodeNUMAResource}]}\n"
      "    score: {enabled: [{name: NodeNUMAResource, weight: 1}]}\n"
      "    reserve: {enabled: [{name: NodeNUMAResource}]}\n";
  auto cfg = config::parseSchedulerConfigText(text, inTreeRegistry());
  REQUIRE(cfg.has_value());
  return std::move(*cfg);
}

struct Fixture {
  NumaApi api;
  metrics::Registry registry;
  Scheduler scheduler{numaConfig(), inTreeRegistry(), api, registry};

  explicit Fixture(const std::string& policy = "") {
    api.topologies.set("n1", testing::loopTopology("n1", policy));
    scheduler.onNodeAdd(testing::loopNode("n1", 16000));
  }
  std::shared_ptr<PodInfo> lsrPod(const std::string& name, std::int64_t milli_cpu) {
    auto p = testing::loopPod(name, milli_cpu);
    p->labels[std::string(apis::kLabelPodQoS)] = "LSR";
    p->qos = apis::QoSClass::kLSR;
    p->priority_class = apis::PriorityClass::kProd;
    return p;
  }
  void add(std::shared_ptr<const PodInfo> p) {
    api.pods[p->key()] = p;
    scheduler.onPodAdd(*p);
    if (p->assigned())
      scheduler.onAssignedPodAdd(p);
    else
      scheduler.onPendingPodAdd(p);
  }
  void drainActive() {
    while (scheduler.queue().sizes().active > 0)
      scheduler.scheduleOne();
  }
  nnr::CpuSet boundCpus(std::size_t i) const {
    REQUIRE(api.bound.size() > i);
    const auto& annotations = api.bound[i]->annotations;
    auto it = annotations.find(apis::kAnnotationResourceStatus);
    REQUIRE(it != annotations.end());
    auto status = nnr::parseResourceStatus(it->second);
    REQUIRE(status.has_value());
    return status->cpuset;
  }
  // What the informer reports once the pod is bound: the pod with its binding's annotations.
  void confirmBound(std::size_t i) {
    auto p = std::make_shared<PodInfo>(*api.bound[i]);
    p->node_name = "n1";
    auto old = api.pods[p->key()];
    api.pods[p->key()] = p;
    scheduler.onPodUpdate(*old, *p);
    scheduler.onPendingPodDelete(*old);
    scheduler.onAssignedPodAdd(p);
  }
  std::string metric() const { return registry.render(); }
};

bool wholeCores(const nnr::CpuSet& cpus) {
  bool whole = true;
  cpus.forEach([&](int c) { whole = whole && cpus.contains(c ^ 1); });
  return whole;
}

TEST_CASE("numa loop: an LSR pod's CPUs ride on its Binding and stay held",
          "[scheduler][loop][nodenumaresource]") {
  Fixture f;
  f.add(f.lsrPod("p1", 2000));
  f.drainActive();
  REQUIRE(f.api.bound.size() == 1);
  const nnr::CpuSet first = f.boundCpus(0);
  CHECK(first.size() == 2);
  CHECK(wholeCores(first));
  // The resource-spec write-back is no scheduler-owned annotation: DefaultPreBind's patch (the
  // framework's, as the profile lists no DefaultPreBind) carries it before the binding.
  REQUIRE(f.api.calls.size() >= 2);
  CHECK(f.api.calls[0].rfind("patch default/p1 ", 0) == 0);
  CHECK(f.api.calls[0].find("preferredCPUBindPolicy") != std::string::npos);
  CHECK(f.api.calls[1] == "bind default/p1 n1");
  CHECK(f.metric().find("scheduler_numa_allocated_cpus{node=\"n1\"} 2") != std::string::npos);

  // The informer confirms the binding; the next pod gets other CPUs.
  f.confirmBound(0);
  f.add(f.lsrPod("p2", 4000));
  f.drainActive();
  REQUIRE(f.api.bound.size() == 2);
  const nnr::CpuSet second = f.boundCpus(1);
  CHECK(second.size() == 4);
  CHECK(wholeCores(second));
  CHECK_FALSE(second.intersects(first));
  CHECK(f.metric().find("scheduler_numa_allocated_cpus{node=\"n1\"} 6") != std::string::npos);
}

TEST_CASE("numa loop: a refused binding gives the CPUs back",
          "[scheduler][loop][nodenumaresource]") {
  Fixture f;
  f.api.refuse_binding = true;
  f.add(f.lsrPod("p1", 16000));
  f.drainActive();
  REQUIRE(f.api.bound.size() == 1);
  CHECK(f.boundCpus(0).size() == 16);
  CHECK(f.metric().find("scheduler_numa_allocated_cpus{node=\"n1\"} 0") != std::string::npos);
  auto* plugin = dynamic_cast<nnr::NodeNUMAResource*>(f.scheduler.findPlugin("NodeNUMAResource"));
  REQUIRE(plugin != nullptr);
  CHECK(plugin->cache().read("n1", [](const nnr::NodeTopologyState& s) {
    return s.allocation.allocatedCpuSet().empty();
  }));
}

TEST_CASE("numa loop: SingleNUMANode refuses a pod no NUMA node holds",
          "[scheduler][loop][nodenumaresource]") {
  Fixture f("SingleNUMANodePodLevel");
  f.add(f.lsrPod("big", 10000));
  f.add(f.lsrPod("fits", 6000));
  f.drainActive();
  REQUIRE(f.api.bound.size() == 1);
  CHECK(f.api.bound[0]->name == "fits");
  const nnr::CpuSet cpus = f.boundCpus(0);
  CHECK(cpus.size() == 6);
  CHECK((cpus.isSubsetOf(nnr::CpuSet{0, 1, 2, 3, 4, 5, 6, 7}) ||
         cpus.isSubsetOf(nnr::CpuSet{8, 9, 10, 11, 12, 13, 14, 15})));
  bool refused = false;
  for (const auto& c : f.api.calls)
    refused = refused || (c.rfind("failed default/big: ", 0) == 0 &&
                          c.find("NUMA Topology affinity error") != std::string::npos);
  CHECK(refused);
}

}  // namespace
}  // namespace koord::roles::scheduler
