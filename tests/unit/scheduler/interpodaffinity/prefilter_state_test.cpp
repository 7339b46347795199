// kube-scheduler 1.20's TestPreFilterStateAddRemovePod, TestPreFilterStateClone and
// TestGetTPMapMatchingIncomingAffinityAntiAffinity: the topology-pair counts PreFilter leaves
// and how AddPod/RemovePod (preemption's what-if) move them.
#include <catch2/catch.hpp>

#include "fixture.h"

namespace ipa_test {
namespace {

const PreFilterState& preFilterState(const CycleState& state) {
  const auto* s = state.read<PreFilterState>(kPreFilterStateKey);
  REQUIRE(s != nullptr);
  return *s;
}

void checkSameCounts(const PreFilterState& got, const PreFilterState& want) {
  CHECK(got.existing_anti_affinity.entries() == want.existing_anti_affinity.entries());
  CHECK(got.affinity.entries() == want.affinity.entries());
  CHECK(got.anti_affinity.entries() == want.anti_affinity.entries());
  CHECK(got.pod_matches_own_affinity == want.pod_matches_own_affinity);
}

TEST_CASE("InterPodAffinity AddPod and RemovePod update the PreFilter state (kube-scheduler 1.20)",
          "[scheduler][interpodaffinity]") {
  const std::vector<NodeSpec> nodes = {{"nodeA", {{"region", "r1"}, {"zone", "z11"}}},
                                       {"nodeB", {{"region", "r1"}, {"zone", "z12"}}},
                                       {"nodeC", {{"region", "r2"}, {"zone", "z21"}}}};
  const Labels foo_bar = {{"foo", "bar"}};
  const std::vector<Term> anti_foo_bar = {{"foo in (bar)", "region"}};
  const std::vector<Term> complex = {{"foo in (bar,buzz)", "region"},
                                     {"service notin (bar,security,test)", "zone"}};
  struct Case {
    std::string name;
    PodSpec pending;
    PodSpec added;
    std::vector<PodSpec> existing;
    Pairs want_anti_affinity;
    Pairs want_affinity;
  };
  const std::vector<Case> cases = {
      {"no affinity exists",
       {.name = "pending", .labels = foo_bar},
       {.name = "addedPod", .node = "nodeB", .labels = foo_bar},
       {{.name = "p1", .node = "nodeA", .labels = foo_bar}, {.name = "p2", .node = "nodeC"}},
       {},
       {}},
      {"anti-affinity counts are updated after adding and removing a pod",
       {.name = "pending", .labels = foo_bar, .anti_affinity = anti_foo_bar},
       {.name = "addedPod", .node = "nodeB", .labels = foo_bar, .anti_affinity = anti_foo_bar},
       {{.name = "p1", .node = "nodeA", .labels = foo_bar},
        {.name = "p2", .node = "nodeC", .anti_affinity = anti_foo_bar}},
       {{"region", "r1", 2}},
       {}},
      {"anti-affinity counts of several terms are updated after adding and removing a pod",
       {.name = "pending", .labels = foo_bar, .anti_affinity = complex},
       {.name = "addedPod", .node = "nodeA", .labels = foo_bar, .anti_affinity = complex},
       {{.name = "p1", .node = "nodeA", .labels = foo_bar},
        {.name = "p2", .node = "nodeC", .anti_affinity = anti_foo_bar}},
       {{"region", "r1", 2}, {"zone", "z11", 2}, {"zone", "z21", 1}},
       {}},
      {"affinity and anti-affinity counts are updated after adding and removing a pod",
       {.name = "pending", .labels = foo_bar, .affinity = complex},
       {.name = "addedPod", .node = "nodeA", .labels = foo_bar, .anti_affinity = complex},
       {{.name = "p1", .node = "nodeA", .labels = foo_bar},
        {.name = "p2", .node = "nodeC", .affinity = complex, .anti_affinity = anti_foo_bar}},
       {},
       {{"region", "r1", 2}, {"zone", "z11", 2}}},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    const PodInfo pending = makePod(c.pending);
    const PodInfo added = makePod(c.added);

    std::vector<PodSpec> with_added = c.existing;
    with_added.push_back(c.added);
    const Cluster all(nodes, with_added);
    CycleState all_state;
    const Status all_pre = makePlugin(all)->preFilter(all_state, pending);

    const Cluster cluster(nodes, c.existing);
    auto plugin = makePlugin(cluster);
    CycleState state;
    const Status pre = plugin->preFilter(state, pending);
    if (c.pending.affinity.empty() && c.pending.anti_affinity.empty() &&
        c.want_anti_affinity.empty()) {
      // Nothing for the pending pod to fear: PreFilter answers Skip with and without the added
      // pod, so the framework never calls AddPod/RemovePod (1.20's counts stayed empty too).
      CHECK(pre.isSkip());
      CHECK(all_pre.isSkip());
      CHECK(state.read<PreFilterState>(kPreFilterStateKey) == nullptr);
      continue;
    }
    REQUIRE(all_pre.ok());
    REQUIRE(pre.ok());
    const CycleState original = state.clone();
    REQUIRE(plugin->preFilterExtensions() != nullptr);
    const NodeInfo& node = cluster.node(c.added.node);

    REQUIRE(plugin->preFilterExtensions()->addPod(state, pending, added, node).ok());
    CHECK(preFilterState(state).anti_affinity.entries() == c.want_anti_affinity);
    CHECK(preFilterState(state).affinity.entries() == c.want_affinity);
    checkSameCounts(preFilterState(state), preFilterState(all_state));

    REQUIRE(plugin->preFilterExtensions()->removePod(state, pending, added, node).ok());
    checkSameCounts(preFilterState(state), preFilterState(original));
  }
}

TEST_CASE("InterPodAffinity AddPod lets Filter see a pod preemption would keep",
          "[scheduler][interpodaffinity]") {
  // A nominated pod with anti-affinity towards the incoming pod, added through the extension,
  // must make Filter fail on its domain; removing it again lets the node pass.
  Cluster cluster({{"nodeA", {{"zone", "z1"}}}, {"nodeB", {{"zone", "z2"}}}}, {});
  auto plugin = makePlugin(cluster);
  const PodInfo pod = makePod({.labels = {{"app", "web"}}});
  const PodInfo nominated =
      makePod({.name = "nominated", .node = "nodeA", .anti_affinity = {{"app", "zone"}}});
  CycleState state;
  // Without nominations nothing could fail the pod: Skip, and AddPod is never called.
  CHECK(plugin->preFilter(state, pod).isSkip());
  CHECK(state.read<PreFilterState>(kPreFilterStateKey) == nullptr);
  // With some pod nominated the counts are kept for AddPod, as 1.20 keeps them.
  cluster.setNominations(true);
  REQUIRE(plugin->preFilter(state, pod).ok());
  checkVerdict(plugin->filter(state, pod, cluster.node("nodeA")), fits());

  REQUIRE(plugin->addPod(state, pod, nominated, cluster.node("nodeA")).ok());
  checkVerdict(plugin->filter(state, pod, cluster.node("nodeA")), existingAntiAffinityFail());
  checkVerdict(plugin->filter(state, pod, cluster.node("nodeB")), fits());

  REQUIRE(plugin->removePod(state, pod, nominated, cluster.node("nodeA")).ok());
  checkVerdict(plugin->filter(state, pod, cluster.node("nodeA")), fits());
  CHECK(preFilterState(state).existing_anti_affinity.empty());
}

TEST_CASE("InterPodAffinity AddPod without PreFilter state is an error",
          "[scheduler][interpodaffinity]") {
  const Cluster cluster({{"nodeA"}}, {});
  auto plugin = makePlugin(cluster);
  CycleState state;
  const Status st = plugin->addPod(state, makePod({}), makePod({}), cluster.node("nodeA"));
  CHECK(st.code() == Code::kError);
  CHECK(st.message() == "error reading \"PreFilterInterPodAffinity\" from cycleState: not found");
}

TEST_CASE("InterPodAffinity PreFilter state clone is a deep copy (kube-scheduler 1.20)",
          "[scheduler][interpodaffinity]") {
  PreFilterState source;
  source.existing_anti_affinity.add("name", "machine1", 1);
  source.existing_anti_affinity.add("name", "machine2", 1);
  source.affinity.add("name", "nodeA", 1);
  source.affinity.add("name", "nodeC", 2);
  source.anti_affinity.add("name", "nodeN", 3);
  source.anti_affinity.add("name", "nodeM", 1);
  source.pod_matches_own_affinity = true;

  auto copy = source.clone();
  const auto* cloned = dynamic_cast<const PreFilterState*>(copy.get());
  REQUIRE(cloned != nullptr);
  REQUIRE(cloned != &source);
  checkSameCounts(*cloned, source);

  source.affinity.add("name", "nodeA", -1);
  source.anti_affinity.add("name", "nodeZ", 1);
  CHECK(cloned->affinity.entries() == Pairs{{"name", "nodeA", 1}, {"name", "nodeC", 2}});
  CHECK(cloned->anti_affinity.entries() == Pairs{{"name", "nodeM", 1}, {"name", "nodeN", 3}});
}

TEST_CASE("InterPodAffinity PreFilter counts of the incoming pod's terms (kube-scheduler 1.20)",
          "[scheduler][interpodaffinity]") {
  const auto terms = [](std::vector<std::string> keys) {
    std::vector<Term> out;
    for (auto& k : keys)
      out.push_back({std::move(k), "hostname"});
    return out;
  };
  const auto onNodeA = [](std::vector<std::string> labels) {
    PodSpec p{.name = "normal", .node = "nodeA"};
    for (auto& l : labels)
      p.labels.emplace(std::move(l), "");
    return p;
  };
  const PodSpec pod_a = onNodeA({"aaa"});
  const PodSpec pod_b = onNodeA({"bbb"});
  const PodSpec pod_ab = onNodeA({"aaa", "bbb"});
  struct Case {
    std::string name;
    std::vector<PodSpec> existing;
    PodSpec pod;
    Pairs want_affinity;
    Pairs want_anti_affinity;
  };
  const std::vector<Case> cases = {
      {"nil test", {}, {.name = "aaa-normal"}, {}, {}},
      {"incoming pod without affinity or anti-affinity causes a no-op",
       {pod_a},
       {.name = "aaa-normal"},
       {},
       {}},
      {"no pod has a label that violates the incoming pod's affinity and anti-affinity",
       {pod_b},
       {.name = "aaa-anti", .affinity = terms({"aaa"}), .anti_affinity = terms({"aaa"})},
       {},
       {}},
      {"existing pod matches the incoming pod's affinity and anti-affinity: single term",
       {pod_a},
       {.name = "affi-antiaffi", .affinity = terms({"aaa"}), .anti_affinity = terms({"aaa"})},
       {{"hostname", "nodeA", 1}},
       {{"hostname", "nodeA", 1}}},
      {"existing pod matches the incoming pod's affinity and anti-affinity: several terms",
       {pod_ab},
       {.name = "affi-antiaffi",
        .affinity = terms({"aaa", "bbb"}),
        .anti_affinity = terms({"aaa"})},
       {{"hostname", "nodeA", 2}},
       {{"hostname", "nodeA", 1}}},
      {"existing pod does not match the incoming pod's affinity but matches anti-affinity",
       {pod_a},
       {.name = "affi-antiaffi",
        .affinity = terms({"aaa", "bbb"}),
        .anti_affinity = terms({"aaa", "bbb"})},
       {},
       {{"hostname", "nodeA", 1}}},
      {"existing pod violates part of the incoming pod's anti-affinity terms: case 1",
       {pod_ab},
       {.name = "anaffi-antiaffiti",
        .affinity = terms({"aaa", "ccc"}),
        .anti_affinity = terms({"aaa", "ccc"})},
       {},
       {{"hostname", "nodeA", 1}}},
      {"existing pod violates part of the incoming pod's anti-affinity terms: case 2",
       {pod_b},
       {.name = "affi-antiaffi",
        .affinity = terms({"aaa", "bbb"}),
        .anti_affinity = terms({"aaa", "bbb"})},
       {},
       {{"hostname", "nodeA", 1}}},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    const Cluster cluster({{"nodeA", {{"hostname", "nodeA"}}}}, c.existing);
    CycleState state;
    const Status pre = makePlugin(cluster)->preFilter(state, makePod(c.pod));
    if (c.pod.affinity.empty() && c.pod.anti_affinity.empty()) {
      // No terms of its own and none towards it: Skip, no counts at all.
      CHECK(pre.isSkip());
      CHECK(c.want_affinity.empty());
      CHECK(c.want_anti_affinity.empty());
      continue;
    }
    REQUIRE(pre.ok());
    CHECK(preFilterState(state).affinity.entries() == c.want_affinity);
    CHECK(preFilterState(state).anti_affinity.entries() == c.want_anti_affinity);
  }
}

}  // namespace
}  // namespace ipa_test
