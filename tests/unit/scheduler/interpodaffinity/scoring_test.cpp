// kube-scheduler 1.20's scoring_test.go tables (TestPreferredAffinity,
// TestPreferredAffinityWithHardPodAffinitySymmetricWeight) plus NormalizeScore's range rules.
#include <catch2/catch.hpp>

#include "fixture.h"

namespace ipa_test {
namespace {

struct Affinity {
  std::vector<Term> required = {};
  std::vector<Term> required_anti = {};
  std::vector<WeightedTerm> preferred = {};
  std::vector<WeightedTerm> preferred_anti = {};
};

PodSpec pod(Labels labels, std::string node = "", const Affinity& a = {}) {
  return PodSpec{.node = std::move(node),
                 .labels = std::move(labels),
                 .affinity = a.required,
                 .anti_affinity = a.required_anti,
                 .preferred_affinity = a.preferred,
                 .preferred_anti_affinity = a.preferred_anti};
}

const Labels kChina = {{"region", "China"}};
const Labels kIndia = {{"region", "India"}};
const Labels kAz1 = {{"az", "az1"}};
const Labels kAz2 = {{"az", "az2"}};
const Labels kChinaAz1 = {{"region", "China"}, {"az", "az1"}};
const Labels kS1 = {{"security", "S1"}};
const Labels kS2 = {{"security", "S2"}};

const Affinity kStayWithS1InRegion = {.preferred = {{5, {"security in (S1)", "region"}}}};
const Affinity kStayWithS2InRegion = {.preferred = {{6, {"security in (S2)", "region"}}}};
const Affinity kAffinity3 = {.preferred = {{8, {"security notin (S1),security in (S2)", "region"}},
                                           {2, {"security,!wrongkey", "region"}}}};
const Affinity kHardAffinity = {
    .required = {{"security in (S1,value2)", "region"}, {"security,!wrongkey", "region"}}};
const Affinity kAwayFromS1InAz = {.preferred_anti = {{5, {"security in (S1)", "az"}}}};
const Affinity kAwayFromS2InAz = {.preferred_anti = {{5, {"security in (S2)", "az"}}}};
const Affinity kStayWithS1InRegionAwayFromS2InAz = {
    .preferred = {{8, {"security in (S1)", "region"}}},
    .preferred_anti = {{5, {"security in (S2)", "az"}}}};

struct ScoreCase {
  std::string name;
  PodSpec pod;
  std::vector<PodSpec> pods;
  std::vector<NodeSpec> nodes;
  std::vector<std::int64_t> want;
};

TEST_CASE("InterPodAffinity Score table (kube-scheduler 1.20)", "[scheduler][interpodaffinity]") {
  const std::vector<ScoreCase> cases = {
      {"all nodes score the same without affinity",
       pod(kS1),
       {},
       {{"machine1", kChina}, {"machine2", kIndia}, {"machine3", kAz1}},
       {0, 0, 0}},
      {"affinity: matching topology key and matching pods score high",
       pod(kS1, "", kStayWithS1InRegion),
       {pod(kS1, "machine1"), pod(kS2, "machine2"), pod(kS1, "machine3")},
       {{"machine1", kChina}, {"machine2", kIndia}, {"machine3", kAz1}},
       {100, 0, 0}},
      {"affinity: nodes sharing the topology value of a matching pod score the same",
       pod({}, "", kStayWithS1InRegion),
       {pod(kS1, "machine1")},
       {{"machine1", kChina}, {"machine2", kChinaAz1}, {"machine3", kIndia}},
       {100, 100, 0}},
      {"affinity: the region with more matching pods scores higher",
       pod(kS1, "", kStayWithS2InRegion),
       {pod(kS2, "machine1"), pod(kS2, "machine1"), pod(kS2, "machine2"), pod(kS2, "machine3"),
        pod(kS2, "machine4"), pod(kS2, "machine5")},
       {{"machine1", kChina},
        {"machine2", kIndia},
        {"machine3", kChina},
        {"machine4", kChina},
        {"machine5", kIndia}},
       {100, 50, 100, 100, 50}},
      {"affinity: different operators and values with some failing matches",
       pod(kS1, "", kAffinity3),
       {pod(kS1, "machine1"), pod(kS2, "machine2"), pod(kS1, "machine3")},
       {{"machine1", kChina}, {"machine2", kIndia}, {"machine3", kAz1}},
       {20, 100, 0}},
      {"affinity symmetry: existing pods' preferred affinity towards the pod",
       pod(kS2),
       {pod(kS1, "machine1", kStayWithS1InRegion), pod(kS2, "machine2", kStayWithS2InRegion)},
       {{"machine1", kChina}, {"machine2", kIndia}, {"machine3", kAz1}},
       {0, 100, 0}},
      {"affinity symmetry: existing pods' required affinity towards the pod",
       pod(kS1),
       {pod(kS1, "machine1", kHardAffinity), pod(kS2, "machine2", kHardAffinity)},
       {{"machine1", kChina}, {"machine2", kIndia}, {"machine3", kAz1}},
       {100, 100, 0}},
      {"anti-affinity: a node without matching pods scores high",
       pod(kS1, "", kAwayFromS1InAz),
       {pod(kS1, "machine1"), pod(kS2, "machine2")},
       {{"machine1", kAz1}, {"machine2", kChina}},
       {0, 100}},
      {"anti-affinity: a node without the topology key scores high",
       pod(kS1, "", kAwayFromS1InAz),
       {pod(kS1, "machine1"), pod(kS1, "machine2")},
       {{"machine1", kAz1}, {"machine2", kChina}},
       {0, 100}},
      {"anti-affinity: the node with more matching pods scores lower",
       pod(kS1, "", kAwayFromS1InAz),
       {pod(kS1, "machine1"), pod(kS1, "machine1"), pod(kS2, "machine2")},
       {{"machine1", kAz1}, {"machine2", kIndia}},
       {0, 100}},
      {"anti-affinity symmetry: existing pods' preferred anti-affinity towards the pod",
       pod(kS2),
       {pod(kS1, "machine1", kAwayFromS2InAz), pod(kS2, "machine2", kAwayFromS1InAz)},
       {{"machine1", kAz1}, {"machine2", kAz2}},
       {0, 100}},
      {"affinity and anti-affinity: preferred terms of both kinds",
       pod(kS1, "", kStayWithS1InRegionAwayFromS2InAz),
       {pod(kS1, "machine1"), pod(kS1, "machine2")},
       {{"machine1", kChina}, {"machine2", kAz1}},
       {100, 0}},
      {"affinity and anti-affinity: pods of one service together in a region",
       pod(kS1, "", kStayWithS1InRegionAwayFromS2InAz),
       {pod(kS1, "machine1"), pod(kS1, "machine1"), pod(kS1, "machine2"), pod(kS1, "machine3"),
        pod(kS1, "machine3"), pod(kS1, "machine4"), pod(kS1, "machine5")},
       {{"machine1", kChinaAz1},
        {"machine2", kIndia},
        {"machine3", kChina},
        {"machine4", kChina},
        {"machine5", kIndia}},
       {100, 40, 100, 100, 40}},
      {"affinity and anti-affinity and symmetry together",
       pod(kS1, "", kStayWithS1InRegionAwayFromS2InAz),
       {pod(kS1, "machine1"), pod(kS2, "machine2"),
        pod({}, "machine3", kStayWithS1InRegionAwayFromS2InAz),
        pod({}, "machine4", kAwayFromS1InAz)},
       {{"machine1", kChina}, {"machine2", kAz1}, {"machine3", kIndia}, {"machine4", kAz2}},
       {100, 0, 100, 0}},
      {"nodes of a topology without pods with affinity share the score of the others",
       pod(kS1),
       {pod(kS1, "machine1"), pod({}, "machine2", kStayWithS1InRegionAwayFromS2InAz)},
       {{"machine1", kChina}, {"machine2", kChina}},
       {100, 100}},
      // Not in upstream's table: a term's namespaces decide which pods it sees.
      {"a preferred term sees only pods in its namespaces",
       PodSpec{.namespace_ = "default",
               .preferred_affinity = {{5, {"app in (x)", "region", {"other"}}}}},
       {PodSpec{.namespace_ = "default", .node = "machine1", .labels = {{"app", "x"}}},
        PodSpec{.namespace_ = "other", .node = "machine2", .labels = {{"app", "x"}}}},
       {{"machine1", kChina}, {"machine2", kIndia}},
       {0, 100}},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    const Cluster cluster(c.nodes, c.pods);
    CHECK(scoreAll(cluster, makePod(c.pod)) == c.want);
  }
}

TEST_CASE("InterPodAffinity Score with hardPodAffinityWeight (kube-scheduler 1.20)",
          "[scheduler][interpodaffinity]") {
  const Affinity hard = {.required = {{"service in (S1)", "region"}}};
  const std::vector<NodeSpec> nodes = {
      {"machine1", kChina}, {"machine2", kIndia}, {"machine3", kAz1}};
  const std::vector<PodSpec> pods = {pod({}, "machine1", hard), pod({}, "machine2", hard)};
  const PodInfo incoming = makePod(pod({{"service", "S1"}}));
  const Cluster cluster(nodes, pods);

  // The default weight 1 rewards the nodes where existing pods' required terms hold.
  CHECK(scoreAll(cluster, incoming, 1) == std::vector<std::int64_t>{100, 100, 0});
  // Weight 0 switches the symmetry off: every node scores the same.
  CHECK(scoreAll(cluster, incoming, 0) == std::vector<std::int64_t>{0, 0, 0});

  // The weight's size against preferred weights: 1 loses to a preferred 5, 10 beats it.
  const std::vector<PodSpec> mixed = {pod({}, "machine1", hard), pod({{"app", "x"}}, "machine2")};
  const PodInfo wants_x =
      makePod(pod({{"service", "S1"}}, "", Affinity{.preferred = {{5, {"app in (x)", "region"}}}}));
  const Cluster mixed_cluster(nodes, mixed);
  CHECK(scoreAll(mixed_cluster, wants_x, 1) == std::vector<std::int64_t>{20, 100, 0});
  CHECK(scoreAll(mixed_cluster, wants_x, 10) == std::vector<std::int64_t>{100, 50, 0});
}

TEST_CASE("InterPodAffinity NormalizeScore maps min(0 lowest) to max(0 highest) onto 0 to 100",
          "[scheduler][interpodaffinity]") {
  const Cluster cluster({{"a"}, {"b"}, {"c"}}, {});
  auto plugin = makePlugin(cluster);
  const PodInfo p = makePod({});
  const auto normalize = [&](std::vector<std::int64_t> raw, bool any_pair) {
    CycleState state;
    auto s = std::make_unique<PreScoreState>();
    auto counts = std::make_shared<TopologyCounts>();
    if (any_pair)
      counts->add("zone", "z1", 1);
    s->scores = std::move(counts);
    state.write(kPreScoreStateKey, std::move(s));
    std::vector<NodeScore> scores;
    for (auto r : raw)
      scores.push_back({"n", r});
    REQUIRE(plugin->normalizeScore(state, p, scores).ok());
    std::vector<std::int64_t> out;
    for (const auto& ns : scores)
      out.push_back(ns.score);
    return out;
  };
  CHECK(normalize({-5, 0, 10}, true) == std::vector<std::int64_t>{0, 33, 100});
  CHECK(normalize({-5, -10}, true) == std::vector<std::int64_t>{50, 0});
  CHECK(normalize({3, 6}, true) == std::vector<std::int64_t>{50, 100});
  CHECK(normalize({0, 0}, true) == std::vector<std::int64_t>{0, 0});
  // No topology pair at all: the scores are left as Score gave them.
  CHECK(normalize({7, 0}, false) == std::vector<std::int64_t>{7, 0});
}

TEST_CASE("InterPodAffinity Score and NormalizeScore without PreScore state are errors",
          "[scheduler][interpodaffinity]") {
  const Cluster cluster({{"machine1", kChina}}, {});
  auto plugin = makePlugin(cluster);
  const PodInfo p = makePod({});
  std::int64_t score = -1;
  const Status st = plugin->score(CycleState{}, p, cluster.node("machine1"), score);
  CHECK(st.code() == Code::kError);
  CHECK(st.message() == "failed to read \"PreScoreInterPodAffinity\" from cycleState: not found");
  std::vector<NodeScore> scores = {{"machine1", 0}};
  CHECK(plugin->normalizeScore(CycleState{}, p, scores).code() == Code::kError);
}

TEST_CASE("InterPodAffinity PreScore with no nodes writes no state",
          "[scheduler][interpodaffinity]") {
  const Cluster cluster({{"machine1", kChina}}, {pod(kS1, "machine1")});
  auto plugin = makePlugin(cluster);
  CycleState state;
  REQUIRE(plugin->preScore(state, makePod(pod(kS1, "", kStayWithS1InRegion)), {}).ok());
  CHECK(state.read<PreScoreState>(kPreScoreStateKey) == nullptr);
}

}  // namespace
}  // namespace ipa_test
