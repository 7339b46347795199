#include <catch2/catch.hpp>

#include "fixtures.h"
#include "plugins/upstream/nodeaffinity/node_affinity.h"

namespace koord::roles::scheduler::upstream {
namespace {

using namespace testing;

std::shared_ptr<const NodeAffinityArgs> argsFrom(std::string_view json) {
  if (json.empty())
    return nullptr;
  const auto v = parseJson(json);
  auto args = decodeNodeAffinityArgs(&v, "kubescheduler.config.k8s.io/v1beta2");
  INFO((args ? std::string() : args.error().message));
  REQUIRE(args.has_value());
  return *args;
}

constexpr std::string_view kAddedRequiredZone = R"({"addedAffinity":{
  "requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[
    {"matchExpressions":[{"key":"zone","operator":"In","values":["foo"]}]}]}}})";

TEST_CASE("NodeAffinity Filter table (kube-scheduler 1.20)", "[scheduler][upstream]") {
  struct Case {
    std::string name;
    kube::Labels node_selector;
    std::string affinity;  // pod.spec.affinity.nodeAffinity JSON; empty: none
    kube::Labels node_labels;
    std::string reason;  // empty: fits
    std::string args = "";
    std::string node_name = "node_1";
  };
  const std::string kSelector = "node(s) didn't match node selector";
  const std::string kEnforced = "node(s) didn't match scheduler-enforced node affinity";
  const std::vector<Case> cases = {
      {"no selector", {}, "", {}, ""},
      {"missing labels", {{"foo", "bar"}}, "", {}, kSelector},
      {"same labels", {{"foo", "bar"}}, "", {{"foo", "bar"}}, ""},
      {"node labels are superset", {{"foo", "bar"}}, "", {{"foo", "bar"}, {"baz", "blah"}}, ""},
      {"node labels are subset",
       {{"foo", "bar"}, {"baz", "blah"}},
       "",
       {{"foo", "bar"}},
       kSelector},
      {"matchExpressions In that matches the existing node",
       {},
       R"({"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[
          {"matchExpressions":[{"key":"foo","operator":"In","values":["bar","value2"]}]}]}})",
       {{"foo", "bar"}},
       ""},
      {"matchExpressions Gt that matches the existing node",
       {},
       R"({"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[
          {"matchExpressions":[{"key":"kernel-version","operator":"Gt","values":["0204"]}]}]}})",
       {{"kernel-version", "0206"}},
       ""},
      {"matchExpressions NotIn that matches the existing node",
       {},
       R"({"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[
          {"matchExpressions":[{"key":"mem-type","operator":"NotIn","values":["DDR","DDR2"]}]}]}})",
       {{"mem-type", "DDR3"}},
       ""},
      {"matchExpressions Exists that matches the existing node",
       {},
       R"({"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[
          {"matchExpressions":[{"key":"GPU","operator":"Exists"}]}]}})",
       {{"GPU", "NVIDIA-GRID-K1"}},
       ""},
      {"affinity that doesn't match the node's labels",
       {},
       R"({"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[
          {"matchExpressions":[{"key":"foo","operator":"In","values":["value1","value2"]}]}]}})",
       {{"foo", "bar"}},
       kSelector},
      {"a nil []NodeSelectorTerm in affinity can't match any node",
       {},
       R"({"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":null}})",
       {{"foo", "bar"}},
       kSelector},
      {"an empty []NodeSelectorTerm in affinity can't match any node",
       {},
       R"({"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[]}})",
       {{"foo", "bar"}},
       kSelector},
      {"an empty MatchExpressions list in a term can't match any node",
       {},
       R"({"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[
          {"matchExpressions":[]}]}})",
       {{"foo", "bar"}},
       kSelector},
      {"no Affinity will schedule onto a node", {}, R"({})", {{"foo", "bar"}}, ""},
      {"nil RequiredDuringScheduling will schedule onto a node",
       {},
       R"({"requiredDuringSchedulingIgnoredDuringExecution":null})",
       {{"foo", "bar"}},
       ""},
      {"multiple matchExpressions ANDed that all match",
       {},
       R"({"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[
          {"matchExpressions":[{"key":"GPU","operator":"Exists"},
                               {"key":"GPU","operator":"NotIn","values":["AMD","INTER"]}]}]}})",
       {{"GPU", "NVIDIA-GRID-K1"}},
       ""},
      {"multiple matchExpressions ANDed, one fails",
       {},
       R"({"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[
          {"matchExpressions":[{"key":"GPU","operator":"Exists"},
                               {"key":"GPU","operator":"In","values":["AMD","INTER"]}]}]}})",
       {{"GPU", "NVIDIA-GRID-K1"}},
       kSelector},
      {"multiple nodeSelectorTerms ORed",
       {},
       R"({"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[
          {"matchExpressions":[{"key":"foo","operator":"In","values":["bar","value2"]}]},
          {"matchExpressions":[{"key":"diffkey","operator":"In","values":["wrong","value2"]}]}]}})",
       {{"foo", "bar"}},
       ""},
      {"nodeSelector and affinity both satisfied",
       {{"foo", "bar"}},
       R"({"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[
          {"matchExpressions":[{"key":"foo","operator":"Exists"}]}]}})",
       {{"foo", "bar"}},
       ""},
      {"nodeSelector satisfied, affinity not",
       {{"foo", "bar"}},
       R"({"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[
          {"matchExpressions":[{"key":"foo","operator":"In","values":["other"]}]}]}})",
       {{"foo", "bar"}},
       kSelector},
      {"matchFields metadata.name matches the node",
       {},
       R"({"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[
          {"matchFields":[{"key":"metadata.name","operator":"In","values":["node_1"]}]}]}})",
       {},
       ""},
      {"matchFields metadata.name names another node",
       {},
       R"({"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[
          {"matchFields":[{"key":"metadata.name","operator":"In","values":["node_1"]}]}]}})",
       {},
       kSelector,
       "",
       "node_2"},
      {"matchFields and matchExpressions ANDed in one term",
       {},
       R"({"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[
          {"matchFields":[{"key":"metadata.name","operator":"In","values":["node_1"]}],
           "matchExpressions":[{"key":"foo","operator":"In","values":["bar"]}]}]}})",
       {{"foo", "bar"}},
       "",
       "",
       "node_1"},
      {"matchFields and matchExpressions in separate terms ORed",
       {},
       R"({"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[
          {"matchFields":[{"key":"metadata.name","operator":"In","values":["node_1"]}]},
          {"matchExpressions":[{"key":"foo","operator":"In","values":["bar"]}]}]}})",
       {{"foo", "bar"}},
       "",
       "",
       "node_2"},
      {"addedAffinity matches the node and the pod has no affinity",
       {},
       "",
       {{"zone", "foo"}},
       "",
       std::string(kAddedRequiredZone)},
      {"addedAffinity does not match the node",
       {},
       "",
       {{"zone", "bar"}},
       kEnforced,
       std::string(kAddedRequiredZone)},
      {"addedAffinity matches, the pod's nodeSelector does not",
       {{"foo", "bar"}},
       "",
       {{"zone", "foo"}},
       kSelector,
       std::string(kAddedRequiredZone)},
      {"addedAffinity is checked before the pod's own affinity",
       {{"foo", "bar"}},
       "",
       {{"zone", "bar"}},
       kEnforced,
       std::string(kAddedRequiredZone)},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    const NodeAffinity plugin(argsFrom(c.args));
    auto node = makeNode(c.node_name);
    node->labels = c.node_labels;
    PodInfo pod;
    pod.node_selector = c.node_selector;
    if (!c.affinity.empty())
      pod.node_affinity = nodeAffinity(c.affinity);
    const Status st = plugin.filter(CycleState{}, pod, makeNodeInfo(node));
    if (c.reason.empty()) {
      CHECK(st.ok());
    } else {
      CHECK(st.code() == Code::kUnschedulableAndUnresolvable);
      CHECK(st.reasons() == std::vector<std::string>{c.reason});
    }
    // PreFilter (v1beta2+ profiles) skips Filter only when nothing is required of any node.
    NodeAffinity pre(argsFrom(c.args));
    CycleState state;
    const Status pf = pre.preFilter(state, pod);
    CHECK((pf.ok() || pf.isSkip()));
    // A null requiredDuringScheduling... requires nothing, whatever the JSON spells.
    const bool requires_something = !c.node_selector.empty() ||
                                    (pod.node_affinity && pod.node_affinity->required) ||
                                    c.args.find("required") != std::string::npos;
    CHECK(pf.isSkip() == !requires_something);
    if (pf.isSkip())
      CHECK(st.ok());
  }
}

TEST_CASE("NodeAffinity Score table (kube-scheduler 1.20)", "[scheduler][upstream]") {
  const kube::Labels label1{{"foo", "bar"}};
  const kube::Labels label2{{"key", "value"}};
  const kube::Labels label3{{"az", "az1"}};
  const kube::Labels label4{{"abc", "az11"}, {"def", "az22"}};
  const kube::Labels label5{{"foo", "bar"}, {"key", "value"}, {"az", "az1"}};
  const std::string affinity1 = R"({"preferredDuringSchedulingIgnoredDuringExecution":[
    {"weight":2,"preference":{"matchExpressions":[{"key":"foo","operator":"In","values":["bar"]}]}}]})";
  const std::string affinity2 = R"({"preferredDuringSchedulingIgnoredDuringExecution":[
    {"weight":2,"preference":{"matchExpressions":[{"key":"foo","operator":"In","values":["bar"]}]}},
    {"weight":4,"preference":{"matchExpressions":[{"key":"key","operator":"In","values":["value"]}]}},
    {"weight":5,"preference":{"matchExpressions":[
      {"key":"foo","operator":"In","values":["bar"]},
      {"key":"key","operator":"In","values":["value"]},
      {"key":"az","operator":"In","values":["az1"]}]}}]})";
  struct Case {
    std::string name;
    std::string affinity;
    std::vector<kube::Labels> nodes;
    std::vector<std::int64_t> raw;
    std::vector<std::int64_t> normalized;
    std::string args = "";
  };
  const std::vector<Case> cases = {
      {"all nodes score the same when the pod has no NodeAffinity",
       "",
       {label1, label2, label3},
       {0, 0, 0},
       {0, 0, 0}},
      {"no node matches the preferred terms: every score is zero",
       affinity1,
       {label4, label2, label3},
       {0, 0, 0},
       {0, 0, 0}},
      {"only machine1 matches the preferred terms",
       affinity1,
       {label1, label2, label3},
       {2, 0, 0},
       {100, 0, 0}},
      {"all nodes match the preferred terms with different weights",
       affinity2,
       {label1, label5, label2},
       {2, 11, 4},
       {18, 100, 36}},
      {"addedAffinity's preferred terms add to the pod's",
       affinity1,
       {label1, label2, label3},
       {2, 3, 0},
       {66, 100, 0},
       R"({"addedAffinity":{"preferredDuringSchedulingIgnoredDuringExecution":[
         {"weight":3,"preference":{"matchExpressions":[{"key":"key","operator":"In","values":["value"]}]}}]}})"},
      {"addedAffinity's preferred terms may match on the node name",
       "",
       {label1, label2},
       {5, 0},
       {100, 0},
       R"({"addedAffinity":{"preferredDuringSchedulingIgnoredDuringExecution":[
         {"weight":5,"preference":{"matchFields":[{"key":"metadata.name","operator":"In","values":["node0"]}]}}]}})"},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    const NodeAffinity plugin(argsFrom(c.args));
    std::vector<NodeInfo> nodes;
    for (std::size_t i = 0; i < c.nodes.size(); ++i) {
      auto node = makeNode("node" + std::to_string(i));
      node->labels = c.nodes[i];
      nodes.push_back(makeNodeInfo(node));
    }
    PodInfo pod;
    if (!c.affinity.empty())
      pod.node_affinity = nodeAffinity(c.affinity);
    std::vector<std::int64_t> raw;
    for (const auto& n : nodes) {
      std::int64_t s = -1;
      REQUIRE(plugin.score(CycleState{}, pod, n, s).ok());
      raw.push_back(s);
    }
    CHECK(raw == c.raw);
    CHECK(scoreAll(plugin, CycleState{}, pod, nodes) == c.normalized);
    // PreScore (later upstream's) answers Skip exactly when no preferred term exists, and then
    // every node scored the same.
    NodeAffinity pre(argsFrom(c.args));
    CycleState state;
    const Status st = pre.preScore(state, pod, {});
    const bool has_preferred = !c.affinity.empty() || !c.args.empty();
    CHECK(st.isSkip() == !has_preferred);
    CHECK((st.ok() || st.isSkip()));
    if (st.isSkip()) {
      for (const auto n : c.normalized)
        CHECK(n == c.normalized.front());
    }
  }
}

TEST_CASE("NodeAffinity Score fails on an invalid preferred requirement", "[scheduler][upstream]") {
  PodInfo pod;
  pod.node_affinity = nodeAffinity(R"({"preferredDuringSchedulingIgnoredDuringExecution":[
    {"weight":1,"preference":{"matchExpressions":[{"key":"foo","operator":"Gt","values":["x"]}]}}]})");
  auto node = makeNode("n1");
  node->labels = {{"foo", "1"}};
  std::int64_t s = 0;
  CHECK(NodeAffinity(nullptr).score(CycleState{}, pod, makeNodeInfo(node), s).code() ==
        Code::kError);
}

}  // namespace
}  // namespace koord::roles::scheduler::upstream
