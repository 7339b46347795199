// The cost rules: a pod without terms in a cluster without (anti-)affinity gets Skip at
// PreFilter and PreScore; PreFilter and PreScore walk only the snapshot's derived lists when
// that is enough; Filter and Score never touch the snapshot.
#include <catch2/catch.hpp>

#include <stdexcept>

#include "fixture.h"

namespace ipa_test {
namespace {

// Refuses the snapshot once told to, so a test can prove Filter and Score do without it.
class GuardedCluster : public Cluster {
 public:
  using Cluster::Cluster;
  const Snapshot& snapshot() const override {
    if (!allow_snapshot)
      throw std::logic_error("snapshot read outside PreFilter/PreScore");
    return Cluster::snapshot();
  }
  bool allow_snapshot = true;
};

TEST_CASE("InterPodAffinity fast path: no terms anywhere answers Skip and leaves no state",
          "[scheduler][interpodaffinity]") {
  GuardedCluster cluster({{"n1", {{"zone", "z1"}}}, {"n2", {{"zone", "z2"}}}},
                         {{.node = "n1", .labels = {{"app", "web"}}}, {.node = "n2"}});
  REQUIRE(cluster.snapshot().nodesWithPodAffinity().empty());
  auto plugin = makePlugin(cluster);
  const PodInfo pod = makePod({.labels = {{"app", "web"}}});

  // Filter would pass every node and Score give every node 0: the framework leaves both out.
  CycleState state;
  CHECK(plugin->preFilter(state, pod).isSkip());
  CHECK(state.read<PreFilterState>(kPreFilterStateKey) == nullptr);
  const auto nodes = cluster.nodes();
  CHECK(plugin->preScore(state, pod, nodes).isSkip());
  CHECK(state.read<PreScoreState>(kPreScoreStateKey) == nullptr);
}

TEST_CASE("InterPodAffinity PreFilter answers Skip only when nothing can fail the pod",
          "[scheduler][interpodaffinity]") {
  // An existing pod's anti-affinity that does not select the incoming pod fails nothing.
  Cluster cluster({{"n1", {{"zone", "z1"}}}, {"n2", {{"zone", "z2"}}}},
                  {{.node = "n1", .anti_affinity = {{"app in (db)", "zone"}}}});
  REQUIRE_FALSE(cluster.snapshot().nodesWithRequiredAntiAffinity().empty());
  auto plugin = makePlugin(cluster);
  CycleState state;
  CHECK(plugin->preFilter(state, makePod({.labels = {{"app", "web"}}})).isSkip());
  // One that selects it does.
  REQUIRE(plugin->preFilter(state, makePod({.labels = {{"app", "db"}}})).ok());
  CHECK_FALSE(state.read<PreFilterState>(kPreFilterStateKey)->existing_anti_affinity.empty());
  // Terms of its own do.
  CycleState own;
  REQUIRE(plugin->preFilter(own, makePod({.affinity = {{"app in (web)", "zone"}}})).ok());
  REQUIRE(plugin->preFilter(own, makePod({.anti_affinity = {{"app in (x)", "zone"}}})).ok());
  // So does a nomination anywhere: AddPod must then see the nominated pod's terms.
  cluster.setNominations(true);
  CycleState nominated;
  REQUIRE(plugin->preFilter(nominated, makePod({.labels = {{"app", "web"}}})).ok());
  CHECK(nominated.read<PreFilterState>(kPreFilterStateKey) != nullptr);
}

TEST_CASE("InterPodAffinity Filter and Score read only the CycleState",
          "[scheduler][interpodaffinity]") {
  GuardedCluster cluster(
      {{"n1", {{"zone", "z1"}}}, {"n2", {{"zone", "z2"}}}},
      {{.node = "n1", .labels = {{"app", "db"}}, .anti_affinity = {{"app in (web)", "zone"}}},
       {.node = "n2", .labels = {{"app", "cache"}}}});
  auto plugin = makePlugin(cluster);
  const PodInfo pod = makePod({.labels = {{"app", "web"}},
                               .affinity = {{"app in (cache)", "zone"}},
                               .preferred_anti_affinity = {{10, {"app in (db)", "zone"}}}});
  CycleState state;
  const auto nodes = cluster.nodes();
  REQUIRE(plugin->preFilter(state, pod).ok());
  REQUIRE(plugin->preScore(state, pod, nodes).ok());

  cluster.allow_snapshot = false;
  checkVerdict(plugin->filter(state, pod, *nodes[0]), affinityRulesFail());
  checkVerdict(plugin->filter(state, pod, *nodes[1]), fits());
  std::vector<NodeScore> scores;
  for (const auto* n : nodes) {
    std::int64_t s = 0;
    REQUIRE(plugin->score(state, pod, *n, s).ok());
    scores.push_back({n->name(), s});
  }
  CHECK(scores[0].score == -10);
  CHECK(scores[1].score == 0);
  REQUIRE(plugin->normalizeScore(state, pod, scores).ok());
  CHECK(scores[0].score == 0);
  CHECK(scores[1].score == 100);
}

// A NodeInfo whose pod list holds `pod` but whose derived lists were left empty: a walk that
// finds the pod must have gone through pods, not the derived lists.
std::shared_ptr<const NodeInfo> hiddenFromDerivedLists(const NodeSpec& node, PodInfo pod) {
  auto info = std::make_shared<NodeInfo>();
  info->node = makeNode(node);
  pod.node_name = node.name;
  info->pods.push_back(std::make_shared<const PodInfo>(std::move(pod)));
  return info;
}

TEST_CASE("InterPodAffinity PreFilter walks only nodes with required anti-affinity pods",
          "[scheduler][interpodaffinity]") {
  const NodeSpec n1{"n1", {{"zone", "z1"}}};
  const PodInfo hater = makePod({.name = "hater", .anti_affinity = {{"app in (web)", "zone"}}});
  const PodInfo web = makePod({.labels = {{"app", "web"}}});

  const Cluster hidden(Snapshot({hiddenFromDerivedLists(n1, hater)}));
  REQUIRE(hidden.snapshot().nodesWithRequiredAntiAffinity().empty());
  CycleState state;
  // Not walked, so not found: nothing can fail the pod and PreFilter answers Skip.
  CHECK(makePlugin(hidden)->preFilter(state, web).isSkip());

  // The same pod added the normal way is listed, walked and counted.
  const Cluster listed(
      {n1}, {{.name = "hater", .node = "n1", .anti_affinity = {{"app in (web)", "zone"}}}});
  CycleState listed_state;
  REQUIRE(makePlugin(listed)->preFilter(listed_state, web).ok());
  CHECK(listed_state.read<PreFilterState>(kPreFilterStateKey)->existing_anti_affinity.entries() ==
        Pairs{{"zone", "z1", 1}});
}

TEST_CASE("InterPodAffinity PreScore walks all pods only for a pod with preferred terms",
          "[scheduler][interpodaffinity]") {
  const NodeSpec n1{"n1", {{"zone", "z1"}}};
  const PodInfo fan =
      makePod({.name = "fan", .preferred_affinity = {{7, {"app in (web)", "zone"}}}});
  const Cluster hidden(Snapshot({hiddenFromDerivedLists(n1, fan)}));
  REQUIRE(hidden.snapshot().nodesWithPodAffinity().empty());
  const auto nodes = hidden.nodes();

  // No preferred terms of its own: only nodesWithPodAffinity() is walked, and it is empty.
  const PodInfo plain = makePod({.labels = {{"app", "web"}}});
  CycleState plain_state;
  CHECK(makePlugin(hidden)->preScore(plain_state, plain, nodes).isSkip());

  // With preferred terms every node's every pod is walked, so the fan's term is found.
  const PodInfo picky = makePod(
      {.labels = {{"app", "web"}}, .preferred_affinity = {{1, {"app in (nothing)", "zone"}}}});
  CycleState picky_state;
  REQUIRE(makePlugin(hidden)->preScore(picky_state, picky, nodes).ok());
  CHECK(picky_state.read<PreScoreState>(kPreScoreStateKey)->scores->entries() ==
        Pairs{{"zone", "z1", 7}});
}

}  // namespace
}  // namespace ipa_test
