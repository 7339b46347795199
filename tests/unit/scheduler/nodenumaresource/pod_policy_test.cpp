// The pod's CPU bind state (PreFilter), the node's bind and NUMA policies, Filter's bind checks
// and getCPUBindPolicy (util_test.go's Test_getCPUBindPolicy among them).
#include <string>
#include <vector>

#include "fixture.h"
#include "plugins/nodenumaresource/pod_policy.h"

using koord::apis::PriorityClass;
using koord::apis::QoSClass;
using nnr::CpuBindPolicy;
using nnr::NodeCpuBindPolicy;

TEST_CASE("only LSE and LSR pods of koord-prod are bound", "[nodenumaresource]") {
  CHECK(nnr::allowsCpuBinding(QoSClass::kLSE, PriorityClass::kProd));
  CHECK(nnr::allowsCpuBinding(QoSClass::kLSR, PriorityClass::kProd));
  CHECK_FALSE(nnr::allowsCpuBinding(QoSClass::kLS, PriorityClass::kProd));
  CHECK_FALSE(nnr::allowsCpuBinding(QoSClass::kNone, PriorityClass::kProd));
  CHECK_FALSE(nnr::allowsCpuBinding(QoSClass::kLSR, PriorityClass::kBatch));
}

TEST_CASE("podCpuBind: the pod's effective bind policy", "[nodenumaresource]") {
  struct Case {
    std::string name;
    nnr::ResourceSpec spec;
    bool allowed;
    std::int64_t milli_cpu;
    CpuBindPolicy default_policy;
    bool want_ok;
    nnr::PodCpuBind want;
  };
  using P = CpuBindPolicy;
  using E = nnr::CpuExclusivePolicy;
  const std::vector<Case> cases = {
      {"no spec: the default policy",
       {},
       true,
       4000,
       P::kFullPCPUs,
       true,
       {true, P::kNone, P::kFullPCPUs, E::kNone, 4}},
      {"Default preferred reads as the default",
       {P::kNone, P::kDefault, E::kPCPULevel},
       true,
       2000,
       P::kSpreadByPCPUs,
       true,
       {true, P::kNone, P::kSpreadByPCPUs, E::kPCPULevel, 2}},
      {"required wins over preferred",
       {P::kSpreadByPCPUs, P::kFullPCPUs, E::kNone},
       true,
       4000,
       P::kFullPCPUs,
       true,
       {true, P::kSpreadByPCPUs, P::kSpreadByPCPUs, E::kNone, 4}},
      {"required Default reads as the default",
       {P::kDefault, P::kNone, E::kNone},
       true,
       4000,
       P::kFullPCPUs,
       true,
       {true, P::kFullPCPUs, P::kFullPCPUs, E::kNone, 4}},
      {"no default and no spec: not bound",
       {},
       true,
       4000,
       P::kNone,
       true,
       {false, P::kNone, P::kNone, E::kNone, 4}},
      {"ConstrainedBurst is not bound by the scheduler",
       {P::kNone, P::kConstrainedBurst, E::kNone},
       true,
       4000,
       P::kFullPCPUs,
       true,
       {false, P::kNone, P::kNone, E::kNone, 4}},
      {"LS pods are not bound",
       {},
       false,
       4000,
       P::kFullPCPUs,
       true,
       {false, P::kNone, P::kNone, E::kNone, 4}},
      {"a binding pod asking a fraction of a CPU is refused",
       {},
       true,
       1500,
       P::kFullPCPUs,
       false,
       {}},
      {"a pod asking no cpu is not bound",
       {},
       true,
       0,
       P::kFullPCPUs,
       true,
       {false, P::kNone, P::kNone, E::kNone, 0}},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    auto got = nnr::podCpuBind(c.spec, c.allowed, c.milli_cpu, c.default_policy);
    REQUIRE(got.has_value() == c.want_ok);
    if (c.want_ok)
      CHECK(*got == c.want);
    else
      CHECK(got.error().message == nnr::kErrInvalidRequestedCPUs);
  }
}

TEST_CASE("node CPU bind policy and the per-node decisions", "[nodenumaresource]") {
  CHECK(nnr::nodeCpuBindPolicy({{std::string(nnr::kLabelNodeCPUBindPolicy), "FullPCPUsOnly"}},
                               false) == NodeCpuBindPolicy::kFullPCPUsOnly);
  CHECK(nnr::nodeCpuBindPolicy({{std::string(nnr::kLabelNodeCPUBindPolicy), "SpreadByPCPUs"}},
                               false) == NodeCpuBindPolicy::kSpreadByPCPUs);
  CHECK(nnr::nodeCpuBindPolicy({}, true) == NodeCpuBindPolicy::kFullPCPUsOnly);
  CHECK(nnr::nodeCpuBindPolicy({{std::string(nnr::kLabelNodeCPUBindPolicy), "Bogus"}}, false) ==
        NodeCpuBindPolicy::kNone);

  const nnr::PodCpuBind plain{false, CpuBindPolicy::kNone, CpuBindPolicy::kNone,
                              nnr::CpuExclusivePolicy::kNone, 4};
  // requestCPUBind: any pod with cpu requests binds on a node that requires a policy.
  CHECK(nnr::requestsCpuBindOnNode(plain, 4000, NodeCpuBindPolicy::kFullPCPUsOnly).value());
  CHECK_FALSE(nnr::requestsCpuBindOnNode(plain, 4000, NodeCpuBindPolicy::kNone).value());
  CHECK_FALSE(nnr::requestsCpuBindOnNode(plain, 0, NodeCpuBindPolicy::kSpreadByPCPUs).value());
  auto fraction = nnr::requestsCpuBindOnNode(plain, 1500, NodeCpuBindPolicy::kSpreadByPCPUs);
  REQUIRE_FALSE(fraction.has_value());
  CHECK(fraction.error().message == nnr::kErrInvalidRequestedCPUs);
}

// Test_getCPUBindPolicy.
TEST_CASE("cpuBindPolicyOnNode: Koordinator's table", "[nodenumaresource]") {
  struct Case {
    std::string name;
    NodeCpuBindPolicy node;
    CpuBindPolicy required, preferred;
    nnr::CpuBindChoice want;
  };
  using P = CpuBindPolicy;
  const std::vector<Case> cases = {
      {"kubelet enables FullPCPUsOnly",
       NodeCpuBindPolicy::kFullPCPUsOnly,
       P::kNone,
       P::kFullPCPUs,
       {P::kFullPCPUs, true}},
      {"node enables FullPCPUsOnly",
       NodeCpuBindPolicy::kFullPCPUsOnly,
       P::kNone,
       P::kFullPCPUs,
       {P::kFullPCPUs, true}},
      {"pod enables required FullPCPUsOnly",
       NodeCpuBindPolicy::kNone,
       P::kFullPCPUs,
       P::kNone,
       {P::kFullPCPUs, true}},
      {"pod enables preferred FullPCPUsOnly",
       NodeCpuBindPolicy::kNone,
       P::kNone,
       P::kFullPCPUs,
       {P::kFullPCPUs, false}},
      {"node SpreadByPCPUs over a preferred FullPCPUs",
       NodeCpuBindPolicy::kSpreadByPCPUs,
       P::kNone,
       P::kFullPCPUs,
       {P::kSpreadByPCPUs, true}},
      {"the pod's required policy over the node's",
       NodeCpuBindPolicy::kSpreadByPCPUs,
       P::kFullPCPUs,
       P::kFullPCPUs,
       {P::kFullPCPUs, true}},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    const nnr::PodCpuBind pod{true, c.required, c.preferred, nnr::CpuExclusivePolicy::kNone, 4};
    CHECK(nnr::cpuBindPolicyOnNode(pod, c.node) == c.want);
  }
}

TEST_CASE("Filter's bind checks: conflicts and SMT alignment", "[nodenumaresource]") {
  struct Case {
    std::string name;
    CpuBindPolicy required;
    NodeCpuBindPolicy node;
    int num_cpus, cpus_per_core;
    std::string_view want_error;  // "" for none
  };
  using P = CpuBindPolicy;
  const std::vector<Case> cases = {
      {"nothing required", P::kNone, NodeCpuBindPolicy::kNone, 3, 2, ""},
      {"required FullPCPUs of whole cores", P::kFullPCPUs, NodeCpuBindPolicy::kNone, 4, 2, ""},
      {"required FullPCPUs of half a core", P::kFullPCPUs, NodeCpuBindPolicy::kNone, 3, 2,
       nnr::kErrSMTAlignmentError},
      {"node FullPCPUsOnly with half a core", P::kNone, NodeCpuBindPolicy::kFullPCPUsOnly, 3, 2,
       nnr::kErrSMTAlignmentError},
      {"no SMT: any count is whole cores", P::kFullPCPUs, NodeCpuBindPolicy::kFullPCPUsOnly, 3, 1,
       ""},
      {"pod requires SpreadByPCPUs, node FullPCPUsOnly", P::kSpreadByPCPUs,
       NodeCpuBindPolicy::kFullPCPUsOnly, 4, 2, nnr::kErrCPUBindPolicyConflict},
      {"pod requires FullPCPUs, node SpreadByPCPUs", P::kFullPCPUs,
       NodeCpuBindPolicy::kSpreadByPCPUs, 4, 2, nnr::kErrCPUBindPolicyConflict},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    const nnr::PodCpuBind pod{true, c.required, c.required, nnr::CpuExclusivePolicy::kNone,
                              c.num_cpus};
    auto got = nnr::checkCpuBindOnNode(pod, c.node, c.cpus_per_core);
    if (c.want_error.empty()) {
      CHECK(got.has_value());
    } else {
      REQUIRE_FALSE(got.has_value());
      CHECK(got.error().message == c.want_error);
    }
  }
}

TEST_CASE("node NUMA policies and the pod's NUMA exclusivity", "[nodenumaresource]") {
  using T = nnr::NumaTopologyPolicy;
  const std::string key(nnr::kLabelNUMATopologyPolicy);
  CHECK(nnr::nodeNumaTopologyPolicy({{key, "SingleNUMANode"}}, T::kBestEffort).value() ==
        T::kSingleNUMANode);
  CHECK(nnr::nodeNumaTopologyPolicy({}, T::kRestricted).value() == T::kRestricted);
  CHECK(nnr::nodeNumaTopologyPolicy({{key, ""}}, T::kRestricted).value() == T::kRestricted);
  CHECK_FALSE(nnr::nodeNumaTopologyPolicy({{key, "single"}}, T::kNone).has_value());

  CHECK(nnr::podNumaExclusive({T::kSingleNUMANode, nnr::NumaExclusive::kNone}) ==
        nnr::NumaExclusive::kRequired);
  CHECK(nnr::podNumaExclusive({T::kSingleNUMANode, nnr::NumaExclusive::kPreferred}) ==
        nnr::NumaExclusive::kPreferred);
  CHECK(nnr::podNumaExclusive({T::kNone, nnr::NumaExclusive::kNone}) == nnr::NumaExclusive::kNone);

  using S = nnr::NumaAllocateStrategy;
  const std::string strategy(nnr::kLabelNodeNUMAAllocateStrategy);
  CHECK(nnr::defaultNumaAllocateStrategy(true) == S::kMostAllocated);
  CHECK(nnr::defaultNumaAllocateStrategy(false) == S::kLeastAllocated);
  CHECK(nnr::nodeNumaAllocateStrategy({{strategy, "MostAllocated"}}, S::kLeastAllocated) ==
        S::kMostAllocated);
  CHECK(nnr::nodeNumaAllocateStrategy({}, S::kMostAllocated) == S::kMostAllocated);
  CHECK(nnr::nodeNumaAllocateStrategy({{strategy, "Whatever"}}, S::kMostAllocated) ==
        S::kLeastAllocated);
}
