// The NodeNUMAResource plugin over a fake handle: a node of two sockets with four SMT cores each
// (CPUs 0-7 on NUMA node 0, 8-15 on node 1, core = cpu / 2) reported by a NodeResourceTopology;
// CPU binding, the filter refusals, NUMA alignment with the topology manager, bound pods from
// the informer, a malformed report, the scores, the requeue, the metric and the cheap path.
#include <catch2/catch.hpp>

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "fixture.h"
#include "framework/pod_changes.h"
#include "koord/apis/extension.h"
#include "koord/apis/node_amplification.h"
#include "koord/apis/node_resource_topology.h"
#include "koord/core/metrics.h"
#include "plugins/nodenumaresource/node_numa_resource.h"
#include "plugins/nodenumaresource/pod_allocate.h"
#include "plugins/nodenumaresource/pod_policy.h"
#include "plugins/nodenumaresource/resource_spec.h"
#include "scheduler/builders.h"
#include "scheduler/fake_handle.h"

namespace koord::roles::scheduler {
namespace {

using nodenumaresource::kNodeResourceTopologySource;
using nodenumaresource::NodeNUMAResource;

// The profile's hint providers and the calls a plugin makes on its handle.
class Handle final : public testkit::FakeHandle {
 public:
  std::span<NUMATopologyHintProvider* const> numaHintProviders() const override {
    return providers;
  }
  void requeueUnschedulable() override { ++requeues; }
  metrics::Registry* metricsRegistry() override { return &registry; }

  std::vector<NUMATopologyHintProvider*> providers;
  int requeues = 0;
  metrics::Registry registry;
};

// A second hint provider (DeviceShare's place): fixed hints, and a verdict on the affinity.
class FakeProvider final : public NUMATopologyHintProvider {
 public:
  NUMAProviderHints podTopologyHints(const CycleState&, const PodInfo&,
                                     const NodeInfo&) const override {
    return hints;
  }
  Status allocate(const CycleState&, const NUMATopologyHint& affinity, const PodInfo&,
                  const NodeInfo&) const override {
    seen.push_back(affinity);
    return refusal.empty() ? Status::success() : Status::unschedulable(refusal);
  }
  NUMAProviderHints hints;
  std::string refusal;
  mutable std::vector<NUMATopologyHint> seen;
};

struct NrtSpec {
  std::string policy;  // topologyPolicies[0]; "" for none
  kube::Labels annotations = {};
  bool zones = true;
};

std::shared_ptr<apis::NodeResourceTopology> nrtOf(const std::string& node,
                                                  const NrtSpec& spec = {}) {
  auto nrt = std::make_shared<apis::NodeResourceTopology>();
  nrt->name = node;
  apis::CPUTopology topology;
  for (const auto& c : cpuInfos(2, 1, 4, 2))
    topology.detail.push_back({c.cpu_id, c.core_id, c.socket_id, c.node_id});
  nrt->annotations[std::string(apis::kAnnotationNodeCPUTopology)] =
      apis::formatCPUTopology(topology);
  for (const auto& [k, v] : spec.annotations)
    nrt->annotations[k] = v;
  if (!spec.policy.empty())
    nrt->topology_policies = {spec.policy};
  if (spec.zones) {
    for (int n : {0, 1}) {
      apis::Zone z;
      z.name = apis::nodeZoneName(n);
      z.type = std::string(apis::kZoneTypeNode);
      const auto cpu = testkit::quantity("8");
      const auto memory = testkit::quantity("32Gi");
      z.resources = {{"cpu", cpu, cpu, cpu}, {"memory", memory, memory, memory}};
      nrt->zones.push_back(std::move(z));
    }
  }
  return nrt;
}

std::shared_ptr<const Node> nodeOf(const std::string& name, kube::Labels labels = {}) {
  auto n = std::make_shared<Node>(*testkit::makeNode(name, std::move(labels)));
  n->allocatable = testkit::resources("16", "64Gi");
  n->allocatable.allowed_pod_number = 110;
  return n;
}

// A koord-prod pod of the QoS class (its priority class from the QoS, as Koordinator's
// default), requesting `cpu` and 1Gi, with annotations.
PodInfo podOf(const std::string& name, const std::string& cpu, const std::string& qos = "LSR",
              kube::Labels annotations = {}) {
  PodInfo p = testkit::makePod(name)
                  .label(std::string(apis::kLabelPodQoS), qos)
                  .requests(testkit::resources(cpu, "1Gi"))
                  .obj();
  p.qos = apis::qosClassByName(qos);
  p.annotations = std::move(annotations);
  return p;
}

kube::Labels required(const std::string& policy) {
  return {{std::string(nnr::kAnnotationResourceSpec),
           "{\"requiredCPUBindPolicy\":\"" + policy + "\"}"}};
}

struct Cycle {
  CycleState state;
  Status pre;
  Status filter;
  Status reserve;
  bool reserved = false;
  std::optional<std::string> status_annotation;
  std::optional<std::string> spec_annotation;

  nnr::CpuSet cpus() const {
    REQUIRE(status_annotation.has_value());
    auto s = nnr::parseResourceStatus(*status_annotation);
    REQUIRE(s.has_value());
    return s->cpuset;
  }
  nnr::ResourceStatus status() const {
    REQUIRE(status_annotation.has_value());
    auto s = nnr::parseResourceStatus(*status_annotation);
    REQUIRE(s.has_value());
    return *s;
  }
};

struct Fixture {
  Handle handle;
  std::vector<std::shared_ptr<const Node>> nodes;
  std::unique_ptr<NodeNUMAResource> plugin;

  explicit Fixture(kube::Labels labels = {}) {
    handle.fakeCluster().declare<apis::NodeResourceTopology>(kNodeResourceTopologySource);
    plugin = std::make_unique<NodeNUMAResource>(nullptr, handle);
    setNode(nodeOf("n1", std::move(labels)));
  }
  void setNode(std::shared_ptr<const Node> node) {
    bool replaced = false;
    for (auto& n : nodes) {
      if (n->name == node->name) {
        plugin->onNodeUpdate(*n, *node);
        n = node;
        replaced = true;
      }
    }
    if (!replaced) {
      plugin->onNodeAdd(*node);
      nodes.push_back(node);
    }
    handle.setSnapshot(testkit::snapshotOf(nodes));
  }
  void setNrt(std::shared_ptr<const apis::NodeResourceTopology> nrt) {
    const std::string name = nrt->name;
    handle.fakeCluster().setObject<apis::NodeResourceTopology>(kNodeResourceTopologySource, name,
                                                               std::move(nrt));
  }
  Cycle schedule(const PodInfo& pod, const std::string& node = "n1") {
    Cycle c;
    c.pre = plugin->preFilter(c.state, pod);
    if (!c.pre.ok() && !c.pre.isSkip())
      return c;
    if (c.pre.ok())
      c.filter = plugin->filter(c.state, pod, handle.node(node));
    if (!c.filter.ok())
      return c;
    c.reserve = plugin->reserve(c.state, pod, node);
    c.reserved = c.reserve.ok();
    if (const PodChanges* changes = findPodChanges(c.state)) {
      if (const std::string* v = changes->annotation(nnr::kAnnotationResourceStatus))
        c.status_annotation = *v;
      if (const std::string* v = changes->annotation(nnr::kAnnotationResourceSpec))
        c.spec_annotation = *v;
    }
    return c;
  }
  nnr::CpuSet allocated(const std::string& node = "n1") const {
    return plugin->cache().read(
        node, [](const nnr::NodeTopologyState& s) { return s.allocation.allocatedCpuSet(); });
  }
};

// Whole physical cores: every CPU's sibling (core = cpu / 2) is in the set too.
bool wholeCores(const nnr::CpuSet& cpus) {
  bool whole = true;
  cpus.forEach([&](int c) { whole = whole && cpus.contains(c ^ 1); });
  return whole;
}

TEST_CASE("LSR pods get whole cores of their own, LS pods no CPUs", "[nodenumaresource][plugin]") {
  Fixture f;
  f.setNrt(nrtOf("n1"));

  const Cycle first = f.schedule(podOf("p1", "2"));
  REQUIRE(first.pre.ok());
  REQUIRE(first.filter.ok());
  REQUIRE(first.reserved);
  const nnr::CpuSet a = first.cpus();
  CHECK(a.size() == 2);
  CHECK(wholeCores(a));
  // Koordinator's appendResourceSpecIfMissed: the policy it was bound by, written back.
  REQUIRE(first.spec_annotation.has_value());
  CHECK(*first.spec_annotation == "{\"preferredCPUBindPolicy\":\"FullPCPUs\"}");

  const Cycle second = f.schedule(podOf("p2", "2"));
  REQUIRE(second.reserved);
  const nnr::CpuSet b = second.cpus();
  CHECK(b.size() == 2);
  CHECK(wholeCores(b));
  CHECK_FALSE(a.intersects(b));
  CHECK(f.allocated() == (a | b));

  // An LS pod is not bound: PreFilter leaves Filter out and Reserve writes nothing.
  const Cycle ls = f.schedule(podOf("ls", "2", "LS"));
  CHECK(ls.pre.isSkip());
  CHECK(ls.reserved);
  CHECK_FALSE(ls.status_annotation.has_value());
  CHECK(f.allocated() == (a | b));

  // A pod whose spec says how keeps its spec: nothing is written back.
  const Cycle spread = f.schedule(podOf("p3", "2", "LSE", required("SpreadByPCPUs")));
  REQUIRE(spread.reserved);
  CHECK(spread.cpus().size() == 2);
  CHECK_FALSE(wholeCores(spread.cpus()));
  CHECK_FALSE(spread.spec_annotation.has_value());
}

TEST_CASE("a node that requires binding binds LS pods too", "[nodenumaresource][plugin]") {
  Fixture f({{std::string(nnr::kLabelNodeCPUBindPolicy), "FullPCPUsOnly"}});
  f.setNrt(nrtOf("n1"));
  CHECK(f.plugin->cache().nodesNeedingTopology() == 1);
  const Cycle ls = f.schedule(podOf("ls", "4", "LS"));
  REQUIRE(ls.pre.ok());
  REQUIRE(ls.reserved);
  CHECK(ls.cpus().size() == 4);
  CHECK(wholeCores(ls.cpus()));
  // Bound because the node required it: the required policy is written back.
  REQUIRE(ls.spec_annotation.has_value());
  CHECK(*ls.spec_annotation == "{\"requiredCPUBindPolicy\":\"FullPCPUs\"}");
}

TEST_CASE("Filter refusals: Koordinator's reasons per node", "[nodenumaresource][plugin]") {
  struct Case {
    std::string name;
    PodInfo pod;
    kube::Labels node_labels;
    std::optional<NrtSpec> nrt;  // nullopt: the node reports none
    Code code;
    std::string reason;  // "" for success
  };
  const Code unresolvable = Code::kUnschedulableAndUnresolvable;
  const std::vector<Case> cases = {
      {"fits", podOf("p", "4", "LSR", required("FullPCPUs")), {}, NrtSpec{}, Code::kSuccess, ""},
      {"no NodeResourceTopology",
       podOf("p", "2"),
       {},
       std::nullopt,
       unresolvable,
       std::string(nnr::kErrInvalidCPUTopology)},
      {"odd CPUs under required FullPCPUs",
       podOf("p", "3", "LSR", required("FullPCPUs")),
       {},
       NrtSpec{},
       unresolvable,
       std::string(nnr::kErrSMTAlignmentError)},
      {"pod's required policy against the node's",
       podOf("p", "2", "LSR", required("SpreadByPCPUs")),
       {{std::string(nnr::kLabelNodeCPUBindPolicy), "FullPCPUsOnly"}},
       NrtSpec{},
       unresolvable,
       std::string(nnr::kErrCPUBindPolicyConflict)},
      {"more whole cores than the node has",
       podOf("p", "18", "LSR", required("FullPCPUs")),
       {},
       NrtSpec{},
       Code::kUnschedulable,
       std::string(nnr::kErrNotEnoughCpus)},
      {"pod's NUMA policy against the node's",
       podOf("p", "2", "LS",
             {{std::string(nnr::kAnnotationNUMATopologySpec),
               "{\"numaTopologyPolicy\":\"Restricted\"}"}}),
       {},
       NrtSpec{"SingleNUMANodePodLevel"},
       unresolvable,
       std::string(nnr::kErrNotMatchNUMATopology)},
      {"NUMA policy without zones",
       podOf("p", "2", "LS"),
       {{std::string(nnr::kLabelNUMATopologyPolicy), "SingleNUMANode"}},
       NrtSpec{.policy = "", .zones = false},
       unresolvable,
       std::string(nnr::kErrMissingNumaResources)},
      {"SingleNUMANode: larger than any NUMA node",
       podOf("p", "10"),
       {},
       NrtSpec{"SingleNUMANodePodLevel"},
       Code::kUnschedulable,
       std::string(nnr::kReasonNumaAffinityError)},
      {"SingleNUMANode: an LS pod larger than any NUMA node",
       podOf("p", "10", "LS"),
       {},
       NrtSpec{"SingleNUMANodePodLevel"},
       Code::kUnschedulable,
       std::string(nnr::kReasonNumaAffinityError)},
      {"SingleNUMANode: fits one NUMA node",
       podOf("p", "6"),
       {},
       NrtSpec{"SingleNUMANodePodLevel"},
       Code::kSuccess,
       ""},
      {"fractional CPUs on a node that requires binding",
       podOf("p", "1500m", "LS"),
       {{std::string(nnr::kLabelNodeCPUBindPolicy), "SpreadByPCPUs"}},
       NrtSpec{},
       unresolvable,
       std::string(nnr::kErrInvalidRequestedCPUs)},
  };
  for (const Case& c : cases) {
    DYNAMIC_SECTION(c.name) {
      Fixture f(c.node_labels);
      if (c.nrt)
        f.setNrt(nrtOf("n1", *c.nrt));
      CycleState state;
      const Status pre = f.plugin->preFilter(state, c.pod);
      REQUIRE(pre.ok());
      const Status s = f.plugin->filter(state, c.pod, f.handle.node("n1"));
      CHECK(s.code() == c.code);
      if (!c.reason.empty())
        CHECK(s.message() == c.reason);
    }
  }
}

TEST_CASE("SingleNUMANode: a pod that fits is placed within one NUMA node",
          "[nodenumaresource][plugin]") {
  Fixture f;
  f.setNrt(nrtOf("n1", {"SingleNUMANodePodLevel"}));
  const Cycle c = f.schedule(podOf("p1", "6"));
  REQUIRE(c.reserved);
  const nnr::ResourceStatus status = c.status();
  CHECK(status.cpuset.size() == 6);
  REQUIRE(status.numa_node_resources.size() == 1);
  const int numa = status.numa_node_resources[0].node;
  CHECK(status.cpuset.isSubsetOf(numa == 0 ? cpus("0-7") : cpus("8-15")));
  CHECK(status.numa_node_resources[0].resources.at("cpu").milliValue() == 6000);
  CHECK(status.numa_node_resources[0].resources.at("memory").value() == (std::int64_t{1} << 30));

  // Six of the eight CPUs of that NUMA node are held: the next 6-CPU pod goes to the other.
  const Cycle d = f.schedule(podOf("p2", "6"));
  REQUIRE(d.reserved);
  CHECK_FALSE(d.cpus().intersects(c.cpus()));
  REQUIRE(d.status().numa_node_resources.size() == 1);
  CHECK(d.status().numa_node_resources[0].node != numa);
  // And a third finds no NUMA node with six CPUs left.
  const Cycle e = f.schedule(podOf("p3", "6"));
  CHECK(e.filter.code() == Code::kUnschedulable);
  CHECK(e.filter.message() == nnr::kReasonNumaAffinityError);
}

TEST_CASE("Unreserve gives the CPUs back and drops the annotations", "[nodenumaresource][plugin]") {
  Fixture f;
  f.setNrt(nrtOf("n1"));
  const PodInfo pod = podOf("p1", "8", "LSR", required("FullPCPUs"));
  Cycle c = f.schedule(pod);
  REQUIRE(c.reserved);
  CHECK(f.allocated().size() == 8);
  CHECK(f.handle.registry.render().find("scheduler_numa_allocated_cpus{node=\"n1\"} 8") !=
        std::string::npos);

  f.plugin->unreserve(c.state, pod, "n1");
  CHECK(f.allocated().empty());
  const PodChanges* changes = findPodChanges(c.state);
  REQUIRE(changes != nullptr);
  CHECK(changes->annotation(nnr::kAnnotationResourceStatus) == nullptr);
  CHECK(f.handle.registry.render().find("scheduler_numa_allocated_cpus{node=\"n1\"} 0") !=
        std::string::npos);
  // Idempotent.
  f.plugin->unreserve(c.state, pod, "n1");
  CHECK(f.allocated().empty());
  // The same 16 CPUs are all free again.
  const Cycle all = f.schedule(podOf("big", "16", "LSR", required("FullPCPUs")));
  REQUIRE(all.reserved);
  CHECK(all.cpus() == cpus("0-15"));
}

TEST_CASE("bound pods from the informer hold their CPUs", "[nodenumaresource][plugin]") {
  Fixture f;
  f.setNrt(nrtOf("n1"));
  PodInfo bound = podOf("bound", "8");
  bound.node_name = "n1";
  bound.annotations[std::string(nnr::kAnnotationResourceStatus)] = "{\"cpuset\":\"0-7\"}";
  f.plugin->onAssignedPodAdd(bound);
  CHECK(f.allocated() == cpus("0-7"));

  const PodInfo big = podOf("big", "10", "LSR", required("FullPCPUs"));
  CHECK(f.schedule(big).filter.message() == nnr::kErrNotEnoughCpus);
  Cycle fits = f.schedule(podOf("eight", "8", "LSR", required("FullPCPUs")));
  REQUIRE(fits.reserved);
  CHECK(fits.cpus() == cpus("8-15"));
  f.plugin->unreserve(fits.state, podOf("eight", "8"), "n1");

  // Moved by an update to another CPU set, then gone.
  PodInfo moved = bound;
  moved.annotations[std::string(nnr::kAnnotationResourceStatus)] = "{\"cpuset\":\"8-11\"}";
  f.plugin->onAssignedPodUpdate(bound, moved);
  CHECK(f.allocated() == cpus("8-11"));
  PodInfo finished = moved;
  finished.phase = PodPhase::kSucceeded;
  f.plugin->onAssignedPodUpdate(moved, finished);
  CHECK(f.allocated().empty());
  f.plugin->onAssignedPodAdd(moved);
  f.plugin->onAssignedPodDelete(moved);
  CHECK(f.allocated().empty());

  // An unreadable resource-status counts nothing and breaks nothing.
  PodInfo bad = podOf("bad", "2");
  bad.node_name = "n1";
  bad.annotations[std::string(nnr::kAnnotationResourceStatus)] = "{\"cpuset\":\"0-\"}";
  f.plugin->onAssignedPodAdd(bad);
  CHECK(f.allocated().empty());
  CHECK(f.schedule(big).reserved);
}

TEST_CASE("a pod seen before its node's topology counts once the topology arrives",
          "[nodenumaresource][plugin]") {
  Fixture f;
  PodInfo bound = podOf("bound", "4");
  bound.node_name = "n1";
  bound.annotations[std::string(nnr::kAnnotationResourceStatus)] =
      "{\"cpuset\":\"8-11\",\"numaNodeResources\":[{\"node\":1,\"resources\":{\"cpu\":\"4\"}}]}";
  f.plugin->onAssignedPodAdd(bound);
  f.setNrt(nrtOf("n1", {"SingleNUMANodePodLevel"}));
  CHECK(f.allocated() == cpus("8-11"));
  // NUMA node 1 has 4 of its 8 CPUs left: a 6-CPU pod goes to node 0.
  const Cycle c = f.schedule(podOf("p", "6"));
  REQUIRE(c.reserved);
  CHECK(c.cpus().isSubsetOf(cpus("0-7")));
}

TEST_CASE("CPUs the kubelet and the node keep are never bound", "[nodenumaresource][plugin]") {
  Fixture f;
  f.setNrt(nrtOf(
      "n1",
      {"",
       {{std::string(apis::kAnnotationNodeCPUAllocs),
         "[{\"namespace\":\"kube-system\",\"name\":\"pinned\",\"uid\":\"u1\",\"cpuset\":\"0-3\","
         "\"managedByKubelet\":true}]"},
        {std::string(apis::kAnnotationKubeletCPUManagerPolicy),
         "{\"policy\":\"static\",\"reservedCPUs\":\"4-5\"}"},
        {std::string(apis::kAnnotationNodeSystemQOSResource), "{\"cpuset\":\"14-15\"}"}}}));
  // The Node's own reservation too.
  auto node = std::make_shared<Node>(*nodeOf("n1"));
  node->annotations[std::string(apis::kAnnotationNodeReservation)] = "{\"reservedCPUs\":\"12-13\"}";
  f.setNode(node);
  const nnr::CpuSet kept = cpus("0-5,12-15");
  const Cycle c = f.schedule(podOf("p", "6", "LSR", required("FullPCPUs")));
  REQUIRE(c.reserved);
  CHECK_FALSE(c.cpus().intersects(kept));
  CHECK(c.cpus() == cpus("6-11"));
  CHECK(f.schedule(podOf("q", "2", "LSR", required("FullPCPUs"))).filter.message() ==
        nnr::kErrNotEnoughCpus);
}

TEST_CASE("a malformed NodeResourceTopology refuses the node with its reason",
          "[nodenumaresource][plugin]") {
  struct Case {
    std::string name;
    std::string key;
    std::string value;
    std::string detail;  // in the reason
  };
  const std::vector<Case> cases = {
      {"cpu-topology not JSON", std::string(apis::kAnnotationNodeCPUTopology), "{\"detail\":[",
       std::string(apis::kAnnotationNodeCPUTopology)},
      {"cpu-topology inconsistent", std::string(apis::kAnnotationNodeCPUTopology),
       "{\"detail\":[{\"id\":0,\"core\":0,\"socket\":0,\"node\":0},"
       "{\"id\":0,\"core\":1,\"socket\":0,\"node\":0}]}",
       std::string(apis::kAnnotationNodeCPUTopology)},
      {"kubelet reservedCPUs", std::string(apis::kAnnotationKubeletCPUManagerPolicy),
       "{\"policy\":\"static\",\"reservedCPUs\":\"0-x\"}",
       std::string(apis::kAnnotationKubeletCPUManagerPolicy)},
      {"pod-cpu-allocs", std::string(apis::kAnnotationNodeCPUAllocs), "{}",
       std::string(apis::kAnnotationNodeCPUAllocs)},
      {"system-qos-resource", std::string(apis::kAnnotationNodeSystemQOSResource), "{\"cpuset\":7}",
       std::string(apis::kAnnotationNodeSystemQOSResource)},
  };
  for (const Case& c : cases) {
    DYNAMIC_SECTION(c.name) {
      Fixture f;
      f.setNrt(nrtOf("n1", {"", {{c.key, c.value}}}));
      const Cycle bind = f.schedule(podOf("p", "2"));
      CHECK(bind.filter.code() == Code::kUnschedulableAndUnresolvable);
      CHECK(bind.filter.message().starts_with(nnr::kErrInvalidNodeTopology));
      CHECK(bind.filter.message().find(c.detail) != std::string::npos);
      // A pod that needs neither CPUs nor NUMA nodes is not held back by it.
      const Cycle ls = f.schedule(podOf("ls", "2", "LS"));
      CHECK(ls.reserved);
    }
  }
}

TEST_CASE("the topology manager merges every provider's hints", "[nodenumaresource][plugin]") {
  Fixture f;
  f.setNrt(nrtOf("n1", {"SingleNUMANodePodLevel"}));
  FakeProvider gpu;
  gpu.hints = {{"koordinator.sh/gpu", std::vector<NUMATopologyHint>{{nnr::numaBit(1), true, 0}}}};
  f.handle.providers = {f.plugin.get(), &gpu};

  SECTION("the CPUs follow the device's NUMA node") {
    const Cycle c = f.schedule(podOf("p", "2"));
    REQUIRE(c.reserved);
    CHECK(c.cpus().isSubsetOf(cpus("8-15")));
    REQUIRE(gpu.seen.size() == 1);
    CHECK(gpu.seen[0].affinity == nnr::numaBit(1));
    const NUMAAffinityStore* store = numaAffinityStore(c.state);
    REQUIRE(store != nullptr);
    CHECK(store->get("n1").affinity == nnr::numaBit(1));
  }
  SECTION("a provider's refusal refuses the node") {
    gpu.refusal = "Insufficient gpu";
    const Cycle c = f.schedule(podOf("p", "2"));
    CHECK(c.filter.code() == Code::kUnschedulable);
    CHECK(c.filter.message() == "Insufficient gpu");
  }
  SECTION("hints that cannot meet on one NUMA node refuse the node") {
    // NUMA node 1 holds six CPUs already: the pod's CPUs fit node 0 only.
    PodInfo bound = podOf("bound", "6");
    bound.node_name = "n1";
    bound.annotations[std::string(nnr::kAnnotationResourceStatus)] =
        "{\"cpuset\":\"8-13\",\"numaNodeResources\":[{\"node\":1,\"resources\":{\"cpu\":\"6\"}}]}";
    f.plugin->onAssignedPodAdd(bound);
    const Cycle c = f.schedule(podOf("p", "4"));
    CHECK(c.filter.message() == nnr::kReasonNumaAffinityError);
    CHECK(gpu.seen.empty());
  }
}

TEST_CASE("PreFilter skips Filter while no node asks for binding or NUMA",
          "[nodenumaresource][plugin]") {
  Fixture f;
  f.setNrt(nrtOf("n1"));
  CHECK(f.plugin->cache().nodesNeedingTopology() == 0);
  const PodInfo ls = podOf("ls", "2", "LS");
  CHECK(f.schedule(ls).pre.isSkip());
  // A pod that requests nothing skips too, and scores 0.
  PodInfo empty = testkit::makePod("empty").obj();
  CycleState es;
  CHECK(f.plugin->preFilter(es, empty).isSkip());
  std::int64_t score = -1;
  REQUIRE(f.plugin->score(es, empty, f.handle.node("n1"), score).ok());
  CHECK(score == 0);

  // The skipped pod still gets Koordinator's LeastAllocated node score: cpu 87, memory 98.
  CycleState state;
  REQUIRE(f.plugin->preFilter(state, ls).isSkip());
  REQUIRE(f.plugin->score(state, ls, f.handle.node("n1"), score).ok());
  CHECK(score == 92);

  // A NUMA policy on any node, by its topology or its labels, brings the check back.
  f.setNrt(nrtOf("n1", {"BestEffort"}));
  CHECK(f.plugin->cache().nodesNeedingTopology() == 1);
  CHECK(f.schedule(ls).pre.ok());
  f.setNrt(nrtOf("n1"));
  CHECK(f.plugin->cache().nodesNeedingTopology() == 0);
  f.setNode(nodeOf("n1", {{std::string(nnr::kLabelNUMATopologyPolicy), "Restricted"}}));
  CHECK(f.plugin->cache().nodesNeedingTopology() == 1);
  CHECK(f.schedule(ls).pre.ok());
  f.plugin->onNodeDelete(*f.nodes[0]);
  CHECK(f.plugin->cache().nodesNeedingTopology() == 0);

  // A pod's own NUMA policy or bind request never skips.
  CHECK(f.schedule(podOf("lsr", "2")).pre.ok());
  CHECK(f.schedule(podOf("numa", "2", "LS",
                         {{std::string(nnr::kAnnotationNUMATopologySpec),
                           "{\"numaTopologyPolicy\":\"SingleNUMANode\"}"}}))
            .pre.ok());
}

TEST_CASE("PreFilter refuses what cannot be read or bound", "[nodenumaresource][plugin]") {
  Fixture f;
  CycleState a;
  const Status bad_spec = f.plugin->preFilter(
      a, podOf("p", "2", "LSR", {{std::string(nnr::kAnnotationResourceSpec), "{"}}));
  CHECK(bad_spec.code() == Code::kError);
  CHECK(bad_spec.message().find(nnr::kAnnotationResourceSpec) != std::string::npos);
  CycleState b;
  const Status fraction = f.plugin->preFilter(b, podOf("p", "1500m"));
  CHECK(fraction.code() == Code::kUnschedulableAndUnresolvable);
  CHECK(fraction.message() == nnr::kErrInvalidRequestedCPUs);
}

TEST_CASE("a NodeResourceTopology that changes what the plugin reads requeues pods",
          "[nodenumaresource][plugin]") {
  Fixture f;
  f.setNrt(nrtOf("n1"));
  CHECK(f.handle.requeues == 1);
  // The koordlet's periodic rewrite with nothing new: no requeue.
  auto same = nrtOf("n1");
  same->annotations[std::string(apis::kAnnotationNodeCPUSharedPools)] = "[]";
  f.setNrt(same);
  CHECK(f.handle.requeues == 1);
  f.setNrt(nrtOf("n1", {"Restricted"}));
  CHECK(f.handle.requeues == 2);
  f.handle.fakeCluster().removeObject<apis::NodeResourceTopology>(kNodeResourceTopologySource,
                                                                  "n1");
  CHECK(f.handle.requeues == 3);
  // Gone: a binding pod is refused for want of a CPU topology.
  CHECK(f.schedule(podOf("p", "2")).filter.message() == nnr::kErrInvalidCPUTopology);
}

TEST_CASE("Score: the node, or the NUMA node the pod is placed on", "[nodenumaresource][plugin]") {
  Fixture f;
  f.setNrt(nrtOf("n1"));
  const PodInfo pod = podOf("p", "2");
  auto scoreOf = [&] {
    CycleState state;
    REQUIRE(f.plugin->preFilter(state, pod).ok());
    REQUIRE(f.plugin->filter(state, pod, f.handle.node("n1")).ok());
    std::int64_t score = -1;
    REQUIRE(f.plugin->score(state, pod, f.handle.node("n1"), score).ok());
    return score;
  };
  // No NUMA policy: LeastAllocated over the node's 16 CPUs and 64Gi (cpu 87, memory 98).
  CHECK(scoreOf() == 92);
  // SingleNUMANode: over the chosen NUMA node's 8 CPUs and 32Gi (cpu 75, memory 96).
  f.setNrt(nrtOf("n1", {"SingleNUMANodePodLevel"}));
  CHECK(f.plugin->cache().nodesWithTopologyPolicy() == 1);
  CHECK(scoreOf() == 85);
  // A pod bound to four CPUs of NUMA node 0: as in Koordinator, every CPU bound on the node
  // counts against the chosen NUMA node's allocatable: cpu (8 - 4 - 2) / 8 = 25, memory 96.
  PodInfo bound = podOf("bound", "4");
  bound.node_name = "n1";
  bound.annotations[std::string(nnr::kAnnotationResourceStatus)] =
      "{\"cpuset\":\"0-3\",\"numaNodeResources\":[{\"node\":0,\"resources\":{\"cpu\":\"4\"}}]}";
  f.plugin->onAssignedPodAdd(bound);
  CHECK(scoreOf() == 60);
}

}  // namespace
}  // namespace koord::roles::scheduler

namespace koord::roles::scheduler {
namespace {

// n1 with its cpu amplified by `ratio` (the manager doubles its allocatable to 32 CPUs).
std::shared_ptr<const Node> amplifiedNode(const std::string& ratio) {
  auto n = std::make_shared<Node>(*nodeOf("n1"));
  n->allocatable.milli_cpu = 32000;
  n->annotations[std::string(apis::kAnnotationNodeResourceAmplificationRatio)] = ratio;
  return n;
}

}  // namespace

TEST_CASE("an amplified node counts bound CPUs amplified", "[nodenumaresource][plugin]") {
  Fixture f;
  f.setNrt(nrtOf("n1"));
  f.setNode(amplifiedNode(R"({"cpu":2})"));
  CHECK(f.plugin->cache().nodesAmplified() == 1);
  // The NUMA zones hold the amplified cpu.
  f.plugin->cache().read("n1", [](const nnr::NodeTopologyState& s) {
    REQUIRE(s.zones().size() == 2);
    CHECK(s.zones()[0].resources.get(nnr::NumaResource::kCpu) == 16000);
  });

  // An LSR pod bound to 8 CPUs takes 16 of the amplified 32.
  const PodInfo lsr = podOf("lsr", "8");
  const Cycle bound = f.schedule(lsr);
  REQUIRE(bound.reserved);
  CHECK(bound.cpus().size() == 8);
  PodInfo placed = lsr;
  placed.node_name = "n1";
  f.handle.setSnapshot(testkit::snapshotOf(f.nodes, {placed}));
  REQUIRE(f.handle.node("n1").requested.milli_cpu == 8000);

  // An LS pod is checked against that: 16 of 32 are left, not 24.
  const Cycle fits = f.schedule(podOf("ls-16", "16", "LS"));
  CHECK(fits.pre.ok());
  CHECK(fits.filter.ok());
  const Cycle too_big = f.schedule(podOf("ls-20", "20", "LS"));
  CHECK(too_big.filter.isUnschedulable());
  CHECK(too_big.filter.message() == nnr::kErrInsufficientAmplifiedCPU);
  // A bound pod's own request counts amplified too: 8 CPUs weigh 16.
  CHECK(f.schedule(podOf("lsr-9", "9")).filter.message() == nnr::kErrInsufficientAmplifiedCPU);
  CHECK(f.schedule(podOf("lsr-8", "8")).filter.ok());
}

TEST_CASE("an unreadable amplification ratio refuses pods asking cpu there",
          "[nodenumaresource][plugin]") {
  Fixture f;
  f.setNrt(nrtOf("n1"));
  f.setNode(amplifiedNode("{cpu: 2"));
  const Cycle ls = f.schedule(podOf("ls", "2", "LS"));
  CHECK(ls.filter.code() == Code::kUnschedulableAndUnresolvable);
  CHECK(ls.filter.message() == nnr::kErrInvalidCPUAmplificationRatio);
  // A pod asking no cpu is not concerned.
  PodInfo memory_only = testkit::makePod("mem").requests(testkit::resources("0", "1Gi")).obj();
  CHECK(f.schedule(memory_only).filter.ok());
  // Fixed, the node is plain again.
  f.setNode(nodeOf("n1"));
  CHECK(f.plugin->cache().nodesAmplified() == 0);
  CHECK(f.schedule(podOf("ls-2", "2", "LS")).pre.isSkip());
}

}  // namespace koord::roles::scheduler
