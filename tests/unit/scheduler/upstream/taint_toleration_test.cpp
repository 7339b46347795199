#include <catch2/catch.hpp>

#include "fixtures.h"
#include "plugins/upstream/tainttoleration/taint_toleration.h"

namespace koord::roles::scheduler::upstream {
namespace {

using namespace testing;

TEST_CASE("TaintToleration Filter table (kube-scheduler 1.20)", "[scheduler][upstream]") {
  struct Case {
    std::string name;
    std::string tolerations;
    std::string taints;
    std::string reason;  // empty: fits
  };
  const std::vector<Case> cases = {
      {"a pod having no tolerations can't be scheduled onto a node with nonempty taints", "[]",
       R"([{"key":"dedicated","value":"user1","effect":"NoSchedule"}])",
       "node(s) had taint {dedicated: user1}, that the pod didn't tolerate"},
      {"a pod which can be scheduled on a dedicated node assigned to user1 with effect NoSchedule",
       R"([{"key":"dedicated","value":"user1","effect":"NoSchedule"}])",
       R"([{"key":"dedicated","value":"user1","effect":"NoSchedule"}])", ""},
      {"a pod which can't be scheduled on a dedicated node assigned to user2 with effect "
       "NoSchedule",
       R"([{"key":"dedicated","operator":"Equal","value":"user2","effect":"NoSchedule"}])",
       R"([{"key":"dedicated","value":"user1","effect":"NoSchedule"}])",
       "node(s) had taint {dedicated: user1}, that the pod didn't tolerate"},
      {"a pod can be scheduled onto the node, with a toleration uses operator Exists that "
       "tolerates the taints on the node",
       R"([{"key":"foo","operator":"Exists","effect":"NoSchedule"}])",
       R"([{"key":"foo","value":"bar","effect":"NoSchedule"}])", ""},
      {"a pod has multiple tolerations, node has multiple taints, all the taints are tolerated",
       R"([{"key":"dedicated","operator":"Equal","value":"user2","effect":"NoSchedule"},
           {"key":"foo","operator":"Exists","effect":"NoSchedule"}])",
       R"([{"key":"dedicated","value":"user2","effect":"NoSchedule"},
           {"key":"foo","value":"bar","effect":"NoSchedule"}])",
       ""},
      {"a toleration whose key and value match but whose (non-empty) effect does not",
       R"([{"key":"foo","operator":"Equal","value":"bar","effect":"PreferNoSchedule"}])",
       R"([{"key":"foo","value":"bar","effect":"NoSchedule"}])",
       "node(s) had taint {foo: bar}, that the pod didn't tolerate"},
      {"a toleration with an empty effect tolerates a NoSchedule taint",
       R"([{"key":"foo","operator":"Equal","value":"bar"}])",
       R"([{"key":"foo","value":"bar","effect":"NoSchedule"}])", ""},
      {"an untolerated PreferNoSchedule taint does not filter",
       R"([{"key":"dedicated","operator":"Equal","value":"user2","effect":"NoSchedule"}])",
       R"([{"key":"dedicated","value":"user1","effect":"PreferNoSchedule"}])", ""},
      {"no tolerations and only a PreferNoSchedule taint", "[]",
       R"([{"key":"dedicated","value":"user1","effect":"PreferNoSchedule"}])", ""},
      {"an untolerated NoExecute taint filters", "[]",
       R"([{"key":"evict","value":"now","effect":"NoExecute"}])",
       "node(s) had taint {evict: now}, that the pod didn't tolerate"},
  };
  const TaintToleration plugin;
  for (const auto& c : cases) {
    INFO(c.name);
    auto node = makeNode("n1");
    node->taints = taints(c.taints);
    PodInfo pod;
    pod.tolerations = tolerations(c.tolerations);
    const Status st = plugin.filter(CycleState{}, pod, makeNodeInfo(node));
    if (c.reason.empty()) {
      CHECK(st.ok());
    } else {
      CHECK(st.code() == Code::kUnschedulableAndUnresolvable);
      CHECK(st.reasons() == std::vector<std::string>{c.reason});
    }
  }
}

TEST_CASE("TaintToleration Score table (kube-scheduler 1.20)", "[scheduler][upstream]") {
  struct Case {
    std::string name;
    std::string tolerations;
    std::vector<std::string> node_taints;
    std::vector<std::int64_t> raw;
    std::vector<std::int64_t> normalized;
  };
  const std::vector<Case> cases = {
      {"nodes whose taints are tolerated score higher than those with intolerable taints",
       R"([{"key":"foo","operator":"Equal","value":"bar","effect":"PreferNoSchedule"}])",
       {R"([{"key":"foo","value":"bar","effect":"PreferNoSchedule"}])",
        R"([{"key":"foo","value":"blah","effect":"PreferNoSchedule"}])"},
       {0, 1},
       {100, 0}},
      {"all taints tolerated: the same score however many tolerable taints a node has",
       R"([{"key":"cpu-type","operator":"Equal","value":"arm64","effect":"PreferNoSchedule"},
           {"key":"disk-type","operator":"Equal","value":"ssd","effect":"PreferNoSchedule"}])",
       {"[]", R"([{"key":"cpu-type","value":"arm64","effect":"PreferNoSchedule"}])",
        R"([{"key":"cpu-type","value":"arm64","effect":"PreferNoSchedule"},
            {"key":"disk-type","value":"ssd","effect":"PreferNoSchedule"}])"},
       {0, 0, 0},
       {100, 100, 100}},
      {"the more intolerable taints a node has, the lower its score",
       R"([{"key":"foo","operator":"Equal","value":"bar","effect":"PreferNoSchedule"}])",
       {"[]", R"([{"key":"cpu-type","value":"arm64","effect":"PreferNoSchedule"}])",
        R"([{"key":"cpu-type","value":"arm64","effect":"PreferNoSchedule"},
            {"key":"disk-type","value":"ssd","effect":"PreferNoSchedule"}])"},
       {0, 1, 2},
       {100, 50, 0}},
      {"only PreferNoSchedule taints and tolerations count",
       R"([{"key":"cpu-type","operator":"Equal","value":"arm64","effect":"NoSchedule"},
           {"key":"disk-type","operator":"Equal","value":"ssd","effect":"NoSchedule"}])",
       {"[]", R"([{"key":"cpu-type","value":"arm64","effect":"NoSchedule"}])",
        R"([{"key":"cpu-type","value":"arm64","effect":"PreferNoSchedule"},
            {"key":"disk-type","value":"ssd","effect":"PreferNoSchedule"}])"},
       {0, 0, 2},
       {100, 100, 0}},
      {"no taints and no tolerations: lands on the node without taints",
       "[]",
       {"[]", R"([{"key":"cpu-type","value":"arm64","effect":"PreferNoSchedule"}])"},
       {0, 1},
       {100, 0}},
  };
  TaintToleration plugin;
  for (const auto& c : cases) {
    INFO(c.name);
    std::vector<NodeInfo> nodes;
    for (std::size_t i = 0; i < c.node_taints.size(); ++i) {
      auto node = makeNode("node" + std::to_string(i));
      node->taints = taints(c.node_taints[i]);
      nodes.push_back(makeNodeInfo(node));
    }
    std::vector<const NodeInfo*> ptrs;
    for (const auto& n : nodes)
      ptrs.push_back(&n);
    PodInfo pod;
    pod.tolerations = tolerations(c.tolerations);
    CycleState state;
    REQUIRE(plugin.preScore(state, pod, ptrs).ok());
    std::vector<std::int64_t> raw;
    for (const auto& n : nodes) {
      std::int64_t s = -1;
      REQUIRE(plugin.score(state, pod, n, s).ok());
      raw.push_back(s);
    }
    CHECK(raw == c.raw);
    CHECK(scoreAll(plugin, state, pod, nodes) == c.normalized);
  }
}

TEST_CASE("TaintToleration PreScore answers Skip when no candidate has a PreferNoSchedule taint",
          "[scheduler][upstream]") {
  TaintToleration plugin;
  auto plain = makeNode("plain");
  auto hard = makeNode("hard");
  hard->taints = taints(R"([{"key":"foo","value":"bar","effect":"NoSchedule"}])");
  auto soft = makeNode("soft");
  soft->taints = taints(R"([{"key":"foo","value":"bar","effect":"PreferNoSchedule"}])");
  const NodeInfo a = makeNodeInfo(plain), b = makeNodeInfo(hard), c = makeNodeInfo(soft);
  PodInfo pod;
  CycleState state;
  // 1.20 scored both 0 and normalised both to 100: the plugin may be left out.
  CHECK(plugin.preScore(state, pod, {&a, &b}).isSkip());
  CHECK(state.read<StateData>("PreScoreTaintToleration") == nullptr);
  // One soft taint among the candidates: the scores differ, Score runs.
  REQUIRE(plugin.preScore(state, pod, {&a, &c}).ok());
  std::int64_t s = -1;
  REQUIRE(plugin.score(state, pod, c, s).ok());
  CHECK(s == 1);
}

TEST_CASE("TaintToleration Score without PreScore is an error", "[scheduler][upstream]") {
  std::int64_t s = 0;
  const Status st =
      TaintToleration{}.score(CycleState{}, PodInfo{}, makeNodeInfo(makeNode("n")), s);
  CHECK(st.code() == Code::kError);
  CHECK(st.message() == "error reading \"PreScoreTaintToleration\" from cycleState: not found");
}

}  // namespace
}  // namespace koord::roles::scheduler::upstream
