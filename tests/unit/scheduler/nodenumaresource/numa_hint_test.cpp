// NUMA hints: generation over the zones, and the merge of every policy with the topology
// manager's published cases (frameworkext/topologymanager policy_*_test.go).
#include <optional>
#include <string>
#include <vector>

#include "fixture.h"
#include "plugins/nodenumaresource/numa_hint.h"
#include "plugins/nodenumaresource/scoring.h"

using nnr::NumaExclusive;
using nnr::NumaHint;
using nnr::NumaNodeStatus;
using nnr::NumaResource;
using nnr::NumaTopologyPolicy;
using nnr::ProviderHints;
using nnr::ResourceHints;

namespace {

NumaHint H(std::initializer_list<int> nodes, bool preferred, std::int64_t score = 0) {
  nnr::NumaMask m = 0;
  for (int n : nodes)
    m |= nnr::numaBit(n);
  return NumaHint{m, preferred, score};
}
const NumaHint kAnyPreferred{0, true, 0};
const NumaHint kAnyNotPreferred{0, false, 0};

ResourceHints R(std::string name, std::vector<NumaHint> hints) {
  return ResourceHints{std::move(name), std::move(hints)};
}
ResourceHints RNil(std::string name) {
  return ResourceHints{std::move(name), std::nullopt};
}

struct MergeCase {
  std::string name;
  std::vector<ProviderHints> providers;
  NumaHint want;
};

nnr::NumaMask maskOf(const std::vector<int>& nodes) {
  nnr::NumaMask m = 0;
  for (int n : nodes)
    m |= nnr::numaBit(n);
  return m;
}

// commonPolicyMergeTestCases.
std::vector<MergeCase> commonCases() {
  return {
      {"Two providers, 1 hint each, same mask, both preferred 1/2",
       {{R("resource1", {H({0}, true)})}, {R("resource2", {H({0}, true)})}},
       H({0}, true)},
      {"Two providers, 1 hint each, same mask, both preferred 2/2",
       {{R("resource1", {H({1}, true)})}, {R("resource2", {H({1}, true)})}},
       H({1}, true)},
      {"Two providers, 1 no hints, 1 single hint preferred 1/2",
       {{}, {R("resource", {H({0}, true)})}},
       H({0}, true)},
      {"Two providers, 1 no hints, 1 single hint preferred 2/2",
       {{}, {R("resource", {H({1}, true)})}},
       H({1}, true)},
      {"Two providers, 1 with 2 hints, 1 with single hint matching 1/2",
       {{R("resource1", {H({0}, true), H({1}, true)})}, {R("resource2", {H({0}, true)})}},
       H({0}, true)},
      {"Two providers, 1 with 2 hints, 1 with single hint matching 2/2",
       {{R("resource1", {H({0}, true), H({1}, true)})}, {R("resource2", {H({1}, true)})}},
       H({1}, true)},
      {"Two providers, both with 2 hints, matching narrower preferred hint from both",
       {{R("resource1", {H({0}, true), H({1}, true)})},
        {R("resource2", {H({0}, true), H({0, 1}, false)})}},
       H({0}, true)},
      {"Ensure less narrow preferred hints are chosen over narrower non-preferred hints",
       {{R("resource1", {H({1}, true), H({0, 1}, false)})},
        {R("resource2", {H({0}, true), H({1}, true), H({0, 1}, false)})}},
       H({1}, true)},
      {"Multiple resources, same provider",
       {{R("resource1", {H({1}, true), H({0, 1}, false)}),
         R("resource2", {H({0}, true), H({1}, true), H({0, 1}, false)})}},
       H({1}, true)},
  };
}

// bestEffortPolicy.mergeTestCases (BestEffort and Restricted).
std::vector<MergeCase> bestEffortCases(const std::vector<int>& numa_nodes) {
  const NumaHint all{maskOf(numa_nodes), true, 0};
  const NumaHint all_not{maskOf(numa_nodes), false, 0};
  return {
      {"Two providers, 2 hints each, same mask (some with different bits), same preferred",
       {{R("resource1", {H({0, 1}, true), H({0, 2}, true)})},
        {R("resource2", {H({0, 1}, true), H({0, 2}, true)})}},
       H({0, 1}, true)},
      {"NUMATopologyHint not set", {}, all},
      {"NUMATopologyHintProvider returns empty non-nil map", {{}}, all},
      {"NUMATopologyHintProvider returns nil hints from provider", {{RNil("resource")}}, all},
      {"NUMATopologyHintProvider returns empty non-nil hints from provider",
       {{R("resource", {})}},
       all_not},
      {"Single NUMATopologyHint with Preferred as true and NUMANodeAffinity as nil",
       {{R("resource", {kAnyPreferred})}},
       all},
      {"Single NUMATopologyHint with Preferred as false and NUMANodeAffinity as nil",
       {{R("resource", {kAnyNotPreferred})}},
       all_not},
      {"Two providers, 1 hint each, no common mask",
       {{R("resource1", {H({0}, true)})}, {R("resource2", {H({1}, true)})}},
       all_not},
      {"Two providers, 1 hint each, same mask, 1 preferred, 1 not 1/2",
       {{R("resource1", {H({0}, true)})}, {R("resource2", {H({0}, false)})}},
       H({0}, false)},
      {"Two providers, 1 hint each, same mask, 1 preferred, 1 not 2/2",
       {{R("resource1", {H({1}, true)})}, {R("resource2", {H({1}, false)})}},
       H({1}, false)},
      {"Two providers, 1 hint each, 1 wider mask, both preferred 1/2",
       {{R("resource1", {H({0}, true)})}, {R("resource2", {H({0, 1}, true)})}},
       H({0}, false)},
      {"Two providers, 1 with 2 hints, 1 with single non-preferred hint matching",
       {{R("resource1", {H({0}, true), H({1}, true)})}, {R("resource2", {H({0, 1}, false)})}},
       H({0}, false)},
      {"Two providers, 1 hint each, 1 wider mask, both preferred 2/2",
       {{R("resource1", {H({1}, true)})}, {R("resource2", {H({0, 1}, true)})}},
       H({1}, false)},
  };
}

// singleNumaNodePolicy.mergeTestCases.
std::vector<MergeCase> singleNumaCases() {
  return {
      {"NUMATopologyHint not set", {}, kAnyPreferred},
      {"NUMATopologyHintProvider returns empty non-nil map", {{}}, kAnyPreferred},
      {"NUMATopologyHintProvider returns nil hints from provider",
       {{RNil("resource")}},
       kAnyPreferred},
      {"NUMATopologyHintProvider returns empty non-nil hints from provider",
       {{R("resource", {})}},
       kAnyNotPreferred},
      {"Single NUMATopologyHint with Preferred as true and NUMANodeAffinity as nil",
       {{R("resource", {kAnyPreferred})}},
       kAnyPreferred},
      {"Single NUMATopologyHint with Preferred as false and NUMANodeAffinity as nil",
       {{R("resource", {kAnyNotPreferred})}},
       kAnyNotPreferred},
      {"Two providers, 1 hint each, no common mask",
       {{R("resource1", {H({0}, true)})}, {R("resource2", {H({1}, true)})}},
       kAnyNotPreferred},
      {"Two providers, 1 hint each, same mask, 1 preferred, 1 not 1/2",
       {{R("resource1", {H({0}, true)})}, {R("resource2", {H({0}, false)})}},
       kAnyNotPreferred},
      {"Two providers, 1 hint each, same mask, 1 preferred, 1 not 2/2",
       {{R("resource1", {H({1}, true)})}, {R("resource2", {H({1}, false)})}},
       kAnyNotPreferred},
      {"Two providers, 1 with 2 hints, 1 with single non-preferred hint matching",
       {{R("resource1", {H({0}, true), H({1}, true)})}, {R("resource2", {H({0, 1}, false)})}},
       kAnyNotPreferred},
      {"Single NUMA hint generation",
       {{R("resource1", {H({0, 1}, true)}),
         R("resource2", {H({0}, true), H({1}, true), H({0, 1}, false)})}},
       kAnyNotPreferred},
      {"One no-preference provider",
       {{R("resource1", {H({0}, true), H({1}, true), H({0, 1}, false)})}, {}},
       H({0}, true)},
  };
}

void runMerge(NumaTopologyPolicy policy, const std::vector<int>& numa_nodes,
              const std::vector<MergeCase>& cases) {
  for (const MergeCase& c : cases) {
    INFO(nnr::toString(policy) << ": " << c.name);
    const nnr::NumaMergeResult r =
        nnr::mergeNumaHints(policy, maskOf(numa_nodes), c.providers, NumaExclusive::kPreferred, {});
    CHECK(r.hint == c.want);
    const bool want_admit = policy == NumaTopologyPolicy::kBestEffort || c.want.preferred;
    CHECK(r.admit == want_admit);
    CHECK(r.reason == (want_admit ? "" : nnr::kReasonNumaAffinityError));
  }
}

template <typename T>
std::vector<T> concat(std::vector<T> a, const std::vector<T>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

}  // namespace

// TestPolicyBestEffortMerge, TestPolicyRestrictedMerge, TestPolicySingleNumaNodeMerge.
TEST_CASE("NUMA hint merge per policy: the topology manager's tables", "[nodenumaresource]") {
  const std::vector<int> four = {0, 1, 2, 3};
  const std::vector<int> two = {0, 1};
  runMerge(NumaTopologyPolicy::kBestEffort, four, concat(commonCases(), bestEffortCases(four)));
  runMerge(NumaTopologyPolicy::kRestricted, four, concat(commonCases(), bestEffortCases(four)));
  runMerge(NumaTopologyPolicy::kSingleNUMANode, two, concat(commonCases(), singleNumaCases()));
}

// TestPolicyNoneMerge.
TEST_CASE("NUMA hint merge under None admits without affinity", "[nodenumaresource]") {
  const std::vector<std::vector<ProviderHints>> inputs = {
      {},
      {{R("resource", {H({0, 1}, true)})}},
      {{R("resource", {H({0, 1}, false)})}},
  };
  for (const auto& providers : inputs) {
    const auto r =
        nnr::mergeNumaHints(NumaTopologyPolicy::kNone, 0b11, providers, NumaExclusive::kNone, {});
    CHECK(r.admit);
    CHECK(r.hint == NumaHint{});
  }
}

TEST_CASE("NUMA hint merge: scores, exclusivity and the combination bound", "[nodenumaresource]") {
  SECTION("among preferred hints of one width the higher score wins") {
    const std::vector<ProviderHints> providers = {
        {R("cpu", {H({0}, true, 10), H({1}, true, 70), H({0, 1}, false, 90)})}};
    const auto r = nnr::mergeNumaHints(NumaTopologyPolicy::kBestEffort, 0b11, providers,
                                       NumaExclusive::kNone, {});
    CHECK(r.hint == H({1}, true, 70));
  }
  SECTION("Required exclusivity makes a hint onto a shared node non-preferred") {
    const std::vector<ProviderHints> providers = {{R("cpu", {H({0}, true), H({1}, true)})}};
    const std::vector<NumaNodeStatus> statuses = {NumaNodeStatus::kShared, NumaNodeStatus::kIdle};
    const auto required = nnr::mergeNumaHints(NumaTopologyPolicy::kRestricted, 0b11, providers,
                                              NumaExclusive::kRequired, statuses);
    CHECK(required.hint == H({1}, true));
    CHECK(required.admit);
    const std::vector<NumaNodeStatus> both_shared = {NumaNodeStatus::kShared,
                                                     NumaNodeStatus::kShared};
    const auto refused = nnr::mergeNumaHints(NumaTopologyPolicy::kSingleNUMANode, 0b11, providers,
                                             NumaExclusive::kRequired, both_shared);
    CHECK_FALSE(refused.admit);
    CHECK(refused.reason == nnr::kReasonNumaAffinityError);
  }
  SECTION("too many combinations are refused, not tried") {
    std::vector<NumaHint> many;
    for (int i = 0; i < 16; ++i)
      many.push_back(H({i}, true));
    ProviderHints p;
    for (int r = 0; r < 6; ++r)  // 16^6 > 2^20
      p.push_back(R("r" + std::to_string(r), many));
    const std::vector<ProviderHints> providers = {p};
    const auto r = nnr::mergeNumaHints(NumaTopologyPolicy::kBestEffort, 0xFFFF, providers,
                                       NumaExclusive::kNone, {});
    CHECK_FALSE(r.admit);
    CHECK(r.reason == nnr::kReasonTooManyHintCombinations);
  }
}

// Test_checkExclusivePolicy.
TEST_CASE("NUMA exclusive check: the topology manager's table", "[nodenumaresource]") {
  using S = NumaNodeStatus;
  struct Case {
    std::string name;
    NumaHint hint;
    NumaExclusive exclusive;
    std::vector<S> statuses;
    bool want;
  };
  const std::vector<Case> cases = {
      {"preferred policy 1",
       H({0}, true),
       NumaExclusive::kPreferred,
       {S::kShared, S::kShared},
       true},
      {"preferred policy 2",
       H({0, 1}, true),
       NumaExclusive::kPreferred,
       {S::kShared, S::kShared},
       true},
      {"preferred policy 3", H({0}, true), NumaExclusive::kPreferred, {S::kIdle, S::kSingle}, true},
      {"preferred policy 4",
       H({0, 1}, true),
       NumaExclusive::kPreferred,
       {S::kIdle, S::kSingle},
       true},
      {"required policy 1", H({0}, true), NumaExclusive::kRequired, {S::kIdle, S::kSingle}, true},
      {"required policy 2",
       H({0}, true),
       NumaExclusive::kRequired,
       {S::kShared, S::kSingle},
       false},
      {"required policy 3",
       H({0}, true),
       NumaExclusive::kRequired,
       {S::kShared, S::kShared},
       false},
      {"required policy 4", H({0}, true), NumaExclusive::kRequired, {S::kSingle, S::kShared}, true},
      {"required policy 5",
       H({0, 1}, true),
       NumaExclusive::kRequired,
       {S::kShared, S::kSingle},
       false},
      {"required policy 6",
       H({0, 1}, true),
       NumaExclusive::kRequired,
       {S::kShared, S::kIdle},
       true},
      {"required policy 7",
       H({0, 1}, true),
       NumaExclusive::kRequired,
       {S::kShared, S::kShared},
       true},
      {"the any hint never passes", kAnyPreferred, NumaExclusive::kPreferred, {}, false},
      {"nodes past the statuses are idle", H({3}, true), NumaExclusive::kRequired, {}, true},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    CHECK(nnr::checkNumaExclusive(c.hint, c.exclusive, c.statuses) == c.want);
  }
}

// Test_mergeTopologyPolicy.
TEST_CASE("NUMA topology policy of pod and node", "[nodenumaresource]") {
  CHECK(nnr::mergeNumaTopologyPolicy(NumaTopologyPolicy::kRestricted, NumaTopologyPolicy::kNone) ==
        NumaTopologyPolicy::kRestricted);
  CHECK(nnr::mergeNumaTopologyPolicy(NumaTopologyPolicy::kRestricted,
                                     NumaTopologyPolicy::kRestricted) ==
        NumaTopologyPolicy::kRestricted);
  CHECK_FALSE(
      nnr::mergeNumaTopologyPolicy(NumaTopologyPolicy::kRestricted, NumaTopologyPolicy::kBestEffort)
          .has_value());
  CHECK(nnr::mergeNumaTopologyPolicy(NumaTopologyPolicy::kNone,
                                     NumaTopologyPolicy::kSingleNUMANode) ==
        NumaTopologyPolicy::kSingleNUMANode);
}

TEST_CASE("NUMA hint generation over zones", "[nodenumaresource]") {
  constexpr std::int64_t kGi = 1024LL * 1024 * 1024;
  auto zone = [](int node, std::int64_t cpu, std::int64_t mem, std::int64_t free_cpu,
                 std::int64_t free_mem, std::optional<std::int64_t> free_hp = std::nullopt) {
    nnr::NumaZone z;
    z.node = node;
    z.total.set(NumaResource::kCpu, cpu);
    z.total.set(NumaResource::kMemory, mem);
    z.free.set(NumaResource::kCpu, free_cpu);
    z.free.set(NumaResource::kMemory, free_mem);
    if (free_hp) {
      z.total.set(NumaResource::kHugepages1Gi, 4 * kGi);
      z.free.set(NumaResource::kHugepages1Gi, *free_hp);
    }
    return z;
  };
  auto req = [](std::int64_t cpu, std::int64_t mem = -1, std::int64_t hp = -1) {
    nnr::NumaResources r;
    r.set(NumaResource::kCpu, cpu);
    if (mem >= 0)
      r.set(NumaResource::kMemory, mem);
    if (hp >= 0)
      r.set(NumaResource::kHugepages1Gi, hp);
    return r;
  };
  struct Case {
    std::string name;
    std::vector<nnr::NumaZone> zones;
    nnr::NumaResources requests;
    NumaTopologyPolicy policy;
    ProviderHints want;
  };
  const std::vector<Case> cases = {
      {"both nodes fit: single nodes preferred",
       {zone(0, 52000, 128 * kGi, 52000, 128 * kGi), zone(1, 52000, 128 * kGi, 52000, 128 * kGi)},
       req(4000),
       NumaTopologyPolicy::kBestEffort,
       {R("cpu", {H({0}, true), H({1}, true), H({0, 1}, false)})}},
      {"a node without free cpu lacks it",
       {zone(0, 52000, 128 * kGi, 4000, 128 * kGi), zone(1, 52000, 128 * kGi, 0, 128 * kGi)},
       req(4000),
       NumaTopologyPolicy::kBestEffort,
       {R("cpu", {H({0}, true)})}},
      {"nothing fits: an empty list",
       {zone(0, 52000, 128 * kGi, 2000, 128 * kGi), zone(1, 52000, 128 * kGi, 0, 128 * kGi)},
       req(4000),
       NumaTopologyPolicy::kBestEffort,
       {R("cpu", {})}},
      {"only both nodes together: the widest is the narrowest and preferred",
       {zone(0, 52000, 128 * kGi, 30000, 128 * kGi), zone(1, 52000, 128 * kGi, 30000, 128 * kGi)},
       req(50000),
       NumaTopologyPolicy::kBestEffort,
       {R("cpu", {H({0, 1}, true)})}},
      {"Restricted prefers every hint",
       {zone(0, 52000, 128 * kGi, 52000, 128 * kGi), zone(1, 52000, 128 * kGi, 52000, 128 * kGi)},
       req(4000),
       NumaTopologyPolicy::kRestricted,
       {R("cpu", {H({0}, true), H({1}, true), H({0, 1}, true)})}},
      {"memory and hugepages fit together or not at all",
       {zone(0, 4000, 128 * kGi, 4000, 8 * kGi, 0), zone(1, 4000, 128 * kGi, 4000, 8 * kGi, 0)},
       req(4000, 4 * kGi, 4 * kGi),
       NumaTopologyPolicy::kBestEffort,
       {R("cpu", {H({0}, true), H({1}, true), H({0, 1}, false)}), R("memory", {}),
        R("hugepages-1Gi", {})}},
      {"memory fits across both nodes only",
       {zone(0, 52000, 16 * kGi, 52000, 10 * kGi), zone(1, 52000, 16 * kGi, 52000, 10 * kGi)},
       req(1000, 12 * kGi),
       NumaTopologyPolicy::kBestEffort,
       {R("cpu", {H({0}, true), H({1}, true), H({0, 1}, false)}), R("memory", {H({0, 1}, true)})}},
      {"a requested resource no zone reports gets no entry",
       {zone(0, 52000, 128 * kGi, 52000, 128 * kGi)},
       [&] {
         nnr::NumaResources r = req(1000);
         r.set(NumaResource::kHugepages2Mi, 2 * 1024 * 1024);
         return r;
       }(),
       NumaTopologyPolicy::kBestEffort,
       {R("cpu", {H({0}, true)})}},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    auto got = nnr::generateNumaHints(c.zones, c.requests, nullptr, c.policy);
    REQUIRE(got.has_value());
    CHECK(*got == c.want);
  }

  SECTION("a scorer scores each set of nodes by what it would hold") {
    const nnr::ResourceAllocationScorer least(nnr::ScoringStrategyType::kLeastAllocated,
                                              {{"cpu", 1}});
    const std::vector<nnr::NumaZone> zones = {zone(0, 10000, 0, 5000, 0),
                                              zone(1, 10000, 0, 10000, 0)};
    auto got = nnr::generateNumaHints(zones, req(2000), &least, NumaTopologyPolicy::kBestEffort);
    REQUIRE(got.has_value());
    // node 0: (10000 - 5000 - 2000) * 100 / 10000 = 30; node 1: 80; both: 65.
    CHECK(*got ==
          ProviderHints{R("cpu", {H({0}, true, 30), H({1}, true, 80), H({0, 1}, false, 65)})});
  }
  SECTION("zones of a node past the mask, or given twice, are refused") {
    for (const auto& zones : {std::vector<nnr::NumaZone>{zone(64, 1000, kGi, 1000, kGi)},
                              std::vector<nnr::NumaZone>{zone(1, 1000, kGi, 1000, kGi),
                                                         zone(1, 1000, kGi, 1000, kGi)}}) {
      CHECK_FALSE(nnr::generateNumaHints(zones, req(1000), nullptr, NumaTopologyPolicy::kBestEffort)
                      .has_value());
    }
  }
  SECTION("more zones than hint generation enumerates are refused") {
    std::vector<nnr::NumaZone> zones;
    for (int i = 0; i <= nnr::kMaxHintNumaNodes; ++i)
      zones.push_back(zone(i, 1000, kGi, 1000, kGi));
    CHECK_FALSE(nnr::generateNumaHints(zones, req(1000), nullptr, NumaTopologyPolicy::kBestEffort)
                    .has_value());
  }
}
