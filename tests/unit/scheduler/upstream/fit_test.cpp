#include <catch2/catch.hpp>

#include "fixtures.h"
#include "koord/apis/extension.h"
#include "plugins/upstream/noderesources/fit.h"

namespace koord::roles::scheduler::upstream {
namespace {

using namespace testing;

const std::string kExtA = "example.com/aaa";
const std::string kExtB = "example.com/bbb";
const std::string kKubeIOA = "kubernetes.io/something";
const std::string kKubeIOB = "subdomain.kubernetes.io/something";
const std::string kHugePageA = "hugepages-2Mi";

// upstream's makeAllocatableResources(milliCPU, memory, pods, extendedA, storage, hugePageA)
Resource allocatable(std::int64_t cpu, std::int64_t memory, std::int64_t pods, std::int64_t ext_a,
                     std::int64_t storage, std::int64_t huge_a) {
  Resource r = res(cpu, memory, {{kExtA, ext_a}, {kHugePageA, huge_a}});
  r.allowed_pod_number = pods;
  r.ephemeral_storage = storage;
  return r;
}

Resource scalar(const std::string& name, std::int64_t v) {
  return res(0, 0, {{name, v}});
}

struct FitCase {
  std::string name;
  Resource pod_request;
  std::vector<Resource> existing;  // one pod on the node per entry
  std::vector<std::string> reasons;
  std::vector<std::string> ignored_resources = {};
  std::vector<std::string> ignored_groups = {};
};

void runFitTable(const Resource& node_allocatable, const std::vector<FitCase>& cases) {
  for (const auto& c : cases) {
    INFO(c.name);
    auto args = std::make_shared<NodeResourcesFitArgs>();
    args->ignored_resources = c.ignored_resources;
    args->ignored_resource_groups = c.ignored_groups;
    NodeResourcesFit plugin(args);
    std::vector<PodInfo> existing;
    for (const auto& r : c.existing)
      existing.push_back(podRequesting(r));
    const NodeInfo node = makeNodeInfo(makeNode("machine", node_allocatable), existing);
    const PodInfo pod = podRequesting(c.pod_request);
    CycleState state;
    REQUIRE(plugin.preFilter(state, pod).ok());
    const Status st = plugin.filter(state, pod, node);
    if (c.reasons.empty()) {
      INFO(st.message());
      CHECK(st.ok());
    } else {
      CHECK(st.code() == Code::kUnschedulable);
      CHECK(st.reasons() == c.reasons);
    }
  }
}

TEST_CASE("NodeResourcesFit enough requests table (kube-scheduler 1.20)", "[scheduler][upstream]") {
  const std::string kCPU = "Insufficient cpu";
  const std::string kMem = "Insufficient memory";
  const std::vector<FitCase> cases = {
      {"no resources requested always fits", {}, {res(10, 20)}, {}},
      {"too many resources fails", res(1, 1), {res(10, 20)}, {kCPU, kMem}},
      {"too many resources fails due to init container cpu",
       effectiveRequest({res(1, 1)}, {res(3, 1)}),
       {res(8, 19)},
       {kCPU}},
      {"too many resources fails due to highest init container cpu",
       effectiveRequest({res(1, 1)}, {res(3, 1), res(2, 1)}),
       {res(8, 19)},
       {kCPU}},
      {"too many resources fails due to init container memory",
       effectiveRequest({res(1, 1)}, {res(1, 3)}),
       {res(9, 19)},
       {kMem}},
      {"too many resources fails due to highest init container memory",
       effectiveRequest({res(1, 1)}, {res(1, 3), res(1, 2)}),
       {res(9, 19)},
       {kMem}},
      {"init container fits because it's the max, not sum, of containers and init containers",
       effectiveRequest({res(1, 1)}, {res(1, 1)}),
       {res(9, 19)},
       {}},
      {"multiple init containers fit because it's the max, not sum",
       effectiveRequest({res(1, 1)}, {res(1, 1), res(1, 1)}),
       {res(9, 19)},
       {}},
      {"both resources fit", res(1, 1), {res(5, 5)}, {}},
      {"one resource memory fits", res(2, 1), {res(9, 5)}, {kCPU}},
      {"one resource cpu fits", res(1, 2), {res(5, 19)}, {kMem}},
      {"equal edge case", res(5, 1), {res(5, 19)}, {}},
      {"equal edge case for init container",
       effectiveRequest({res(4, 1)}, {res(5, 1)}),
       {res(5, 19)},
       {}},
      {"extended resource fits", scalar(kExtA, 1), {}, {}},
      {"extended resource fits for init container",
       effectiveRequest({res(0, 0)}, {scalar(kExtA, 1)}),
       {},
       {}},
      {"extended resource capacity enforced",
       scalar(kExtA, 10),
       {},
       {"Insufficient example.com/aaa"}},
      {"extended resource capacity enforced for init container",
       effectiveRequest({res(0, 0)}, {scalar(kExtA, 10)}),
       {},
       {"Insufficient example.com/aaa"}},
      {"extended resource allocatable enforced",
       scalar(kExtA, 1),
       {scalar(kExtA, 5)},
       {"Insufficient example.com/aaa"}},
      {"extended resource allocatable enforced for init container",
       effectiveRequest({res(0, 0)}, {scalar(kExtA, 1)}),
       {scalar(kExtA, 5)},
       {"Insufficient example.com/aaa"}},
      {"extended resource allocatable enforced for multiple containers",
       effectiveRequest({scalar(kExtA, 3), scalar(kExtA, 3)}),
       {scalar(kExtA, 2)},
       {"Insufficient example.com/aaa"}},
      {"extended resource allocatable admits multiple init containers",
       effectiveRequest({res(0, 0)}, {scalar(kExtA, 3), scalar(kExtA, 3)}),
       {scalar(kExtA, 2)},
       {}},
      {"extended resource allocatable enforced for multiple init containers",
       effectiveRequest({res(0, 0)}, {scalar(kExtA, 6), scalar(kExtA, 3)}),
       {scalar(kExtA, 2)},
       {"Insufficient example.com/aaa"}},
      {"extended resource allocatable enforced for unknown resource",
       scalar(kExtB, 1),
       {},
       {"Insufficient example.com/bbb"}},
      {"extended resource allocatable enforced for unknown resource for init container",
       effectiveRequest({res(0, 0)}, {scalar(kExtB, 1)}),
       {},
       {"Insufficient example.com/bbb"}},
      {"kubernetes.io resource capacity enforced",
       scalar(kKubeIOA, 10),
       {},
       {"Insufficient kubernetes.io/something"}},
      {"kubernetes.io resource capacity enforced for init container",
       effectiveRequest({res(0, 0)}, {scalar(kKubeIOB, 10)}),
       {},
       {"Insufficient subdomain.kubernetes.io/something"}},
      {"hugepages resource capacity enforced",
       scalar(kHugePageA, 10),
       {},
       {"Insufficient hugepages-2Mi"}},
      {"hugepages resource capacity enforced for init container",
       effectiveRequest({res(0, 0)}, {scalar(kHugePageA, 10)}),
       {},
       {"Insufficient hugepages-2Mi"}},
      {"hugepages resource allocatable enforced for multiple containers",
       effectiveRequest({scalar(kHugePageA, 3), scalar(kHugePageA, 3)}),
       {scalar(kHugePageA, 2)},
       {"Insufficient hugepages-2Mi"}},
      {"skip checking ignored extended resource", scalar(kExtB, 2), {}, {}, {kExtB}},
      {"resources + pod overhead fits",
       effectiveRequest({res(1, 1)}, {}, res(3, 13)),
       {res(5, 5)},
       {}},
      {"requests + overhead does not fit for memory",
       effectiveRequest({res(1, 1)}, {}, res(1, 15)),
       {res(5, 5)},
       {kMem}},
      {"skip checking ignored extended resource via resource groups",
       scalar(kExtB, 1),
       {},
       {},
       {},
       {"example.com"}},
      {"a resource group only matches the domain, not a prefix of it",
       scalar(kExtB, 1),
       {},
       {"Insufficient example.com/bbb"},
       {},
       {"example"}},
      {"every insufficient resource is reported, in a stable order",
       effectiveRequest({res(11, 21, {{kExtB, 1}, {kExtA, 6}})}),
       {},
       {kCPU, kMem, "Insufficient example.com/aaa", "Insufficient example.com/bbb"}},
  };
  runFitTable(allocatable(10, 20, 32, 5, 20, 5), cases);
}

TEST_CASE("NodeResourcesFit not enough pods table (kube-scheduler 1.20)", "[scheduler][upstream]") {
  const std::vector<FitCase> cases = {
      {"even without specified resources predicate fails when there's no space for additional "
       "pod",
       {},
       {res(10, 20)},
       {"Too many pods"}},
      {"even if both resources fit predicate fails when there's no space for additional pod",
       res(1, 1),
       {res(5, 5)},
       {"Too many pods"}},
      {"even for equal edge case predicate fails when there's no space for additional pod",
       res(5, 1),
       {res(5, 19)},
       {"Too many pods"}},
      {"even for equal edge case predicate fails when there's no space for additional pod due "
       "to init container",
       effectiveRequest({res(5, 1)}, {res(5, 1)}),
       {res(5, 19)},
       {"Too many pods"}},
      {"too many pods and too little cpu are both reported",
       res(6, 1),
       {res(5, 19)},
       {"Too many pods", "Insufficient cpu"}},
  };
  runFitTable(allocatable(10, 20, 1, 0, 0, 0), cases);
}

TEST_CASE("NodeResourcesFit pods count: len(pods)+1 against allocatable pods",
          "[scheduler][upstream]") {
  const std::vector<FitCase> cases = {
      {"room for exactly one more pod", {}, {res(0, 0)}, {}},
      {"no room for a third pod", {}, {res(0, 0), res(0, 0)}, {"Too many pods"}},
  };
  runFitTable(allocatable(10, 20, 2, 0, 0, 0), cases);
  runFitTable(
      allocatable(10, 20, 0, 0, 0, 0),
      {{"a node that allows no pods refuses even an empty one", {}, {}, {"Too many pods"}}});
}

TEST_CASE("NodeResourcesFit ephemeral storage table (kube-scheduler 1.20)",
          "[scheduler][upstream]") {
  Resource storage25;
  storage25.ephemeral_storage = 25;
  Resource storage10;
  storage10.ephemeral_storage = 10;
  const std::vector<FitCase> cases = {
      {"due to container scratch disk", res(1, 1), {res(10, 10)}, {"Insufficient cpu"}},
      {"pod fit", res(1, 1), {res(2, 10)}, {}},
      {"storage ephemeral local storage request exceeds allocatable",
       storage25,
       {res(2, 2)},
       {"Insufficient ephemeral-storage"}},
      {"pod fits", storage10, {res(2, 2)}, {}},
  };
  runFitTable(allocatable(10, 20, 32, 5, 20, 5), cases);
}

TEST_CASE("NodeResourcesFit checks Koordinator's batch resources", "[scheduler][upstream]") {
  const std::string batch_cpu(apis::kBatchCPU);
  const std::string batch_mem(apis::kBatchMemory);
  const std::int64_t gi = 1024LL * 1024 * 1024;
  Resource node = res(8000, 16 * gi, {{batch_cpu, 4000}, {batch_mem, 8 * gi}});
  node.allowed_pod_number = 110;
  const Resource be_pod = res(0, 0, {{batch_cpu, 2000}, {batch_mem, 4 * gi}});
  const std::vector<FitCase> cases = {
      {"batch-cpu and batch-memory fit", be_pod, {res(1000, gi, {{batch_cpu, 2000}})}, {}},
      {"batch-cpu fits exactly at the edge",
       be_pod,
       {res(0, 0, {{batch_cpu, 2000}, {batch_mem, 4 * gi}})},
       {}},
      {"batch-cpu used up by the BE pods already there",
       be_pod,
       {res(0, 0, {{batch_cpu, 2500}})},
       {"Insufficient kubernetes.io/batch-cpu"}},
      {"batch-memory used up",
       be_pod,
       {res(0, 0, {{batch_mem, 5 * gi}})},
       {"Insufficient kubernetes.io/batch-memory"}},
      {"batch resources cannot be ignored: they are not extended resources",
       be_pod,
       {res(0, 0, {{batch_cpu, 2500}})},
       {"Insufficient kubernetes.io/batch-cpu"},
       {batch_cpu},
       {"kubernetes.io"}},
      {"init containers and overhead count in batch resources too",
       effectiveRequest({res(0, 0, {{batch_cpu, 1000}})}, {res(0, 0, {{batch_cpu, 1500}})},
                        res(0, 0, {{batch_cpu, 600}})),
       {res(0, 0, {{batch_cpu, 2000}})},
       {"Insufficient kubernetes.io/batch-cpu"}},
  };
  runFitTable(node, cases);

  Resource plain = res(8000, 16 * gi);
  plain.allowed_pod_number = 110;
  runFitTable(
      plain,
      {{"a node without batch resources at all fits no BE pod",
        be_pod,
        {},
        {"Insufficient kubernetes.io/batch-cpu", "Insufficient kubernetes.io/batch-memory"}}});
}

TEST_CASE("fitsRequest reports what was requested, used and allocatable", "[scheduler][upstream]") {
  const NodeInfo node = makeNodeInfo(makeNode("n", allocatable(10, 20, 1, 5, 20, 5)),
                                     {podRequesting(res(8, 2, {{kExtA, 4}}))});
  const auto got = fitsRequest(res(3, 1, {{kExtA, 2}}), node, NodeResourcesFitArgs{});
  const std::vector<InsufficientResource> want = {
      {"pods", "Too many pods", 1, 1, 1},
      {"cpu", "Insufficient cpu", 3, 8, 10},
      {"example.com/aaa", "Insufficient example.com/aaa", 2, 4, 5},
  };
  CHECK(got == want);
}

TEST_CASE("NodeResourcesFit Filter without PreFilter is an error", "[scheduler][upstream]") {
  NodeResourcesFit plugin(nullptr);
  const Status st = plugin.filter(CycleState{}, podRequesting(res(1, 1)),
                                  makeNodeInfo(makeNode("n", allocatable(10, 20, 32, 0, 0, 0))));
  CHECK(st.code() == Code::kError);
  CHECK(st.message() == "error reading \"PreFilterNodeResourcesFit\" from cycleState: not found");
}

TEST_CASE("NodeResourcesFit filters on the request PreFilter saw", "[scheduler][upstream]") {
  NodeResourcesFit plugin(nullptr);
  CycleState state;
  REQUIRE(plugin.preFilter(state, podRequesting(res(50, 1))).ok());
  // Filter reads the cycle's state, not the pod passed again (preemption re-runs Filter with
  // the same state).
  const Status st = plugin.filter(state, podRequesting(res(1, 1)),
                                  makeNodeInfo(makeNode("n", allocatable(10, 20, 32, 0, 0, 0))));
  CHECK(st.reasons() == std::vector<std::string>{"Insufficient cpu"});
}

}  // namespace
}  // namespace koord::roles::scheduler::upstream
