// kube-scheduler 1.20's filtering_test.go tables (TestRequiredAffinitySingleNode,
// TestRequiredAffinityMultipleNodes, TestPreFilterDisabled) plus the first-pod special case.
#include <catch2/catch.hpp>

#include "fixture.h"

namespace ipa_test {
namespace {

const Labels kServiceSecurityScan = {{"service", "securityscan"}};
const Labels kSecurityS1 = {{"security", "S1"}};

TEST_CASE("InterPodAffinity Filter table on a single node (kube-scheduler 1.20)",
          "[scheduler][interpodaffinity]") {
  const NodeSpec machine1{"machine1", {{"region", "r1"}, {"zone", "z11"}}};
  struct Case {
    std::string name;
    PodSpec pod;
    std::vector<PodSpec> pods;
    Verdict want;
  };
  const std::vector<Case> cases = {
      {"a pod without required pod affinity rules fits a node without pods", {}, {}, fits()},
      {"In operator matching the existing pod satisfies required affinity",
       {.labels = kSecurityS1, .affinity = {{"service in (securityscan,value2)", "region"}}},
       {{.node = "machine1", .labels = kServiceSecurityScan}},
       fits()},
      {"NotIn operator matching the existing pod satisfies required affinity",
       {.labels = kSecurityS1, .affinity = {{"service notin (securityscan3,value3)", "region"}}},
       {{.node = "machine1", .labels = kServiceSecurityScan}},
       fits()},
      {"affinity is not satisfied by a matching pod in another namespace",
       {.labels = kSecurityS1,
        .affinity = {{"service in (securityscan,value2)", "", {"DiffNameSpace"}}}},
       {{.namespace_ = "ns", .node = "machine1", .labels = kServiceSecurityScan}},
       affinityRulesFail()},
      {"affinity is not satisfied when the selector matches no existing pod",
       {.labels = kServiceSecurityScan, .affinity = {{"service in (antivirusscan,value2)", ""}}},
       {{.node = "machine1", .labels = kServiceSecurityScan}},
       affinityRulesFail()},
      {"different operators in several required terms all match the existing pod",
       {.labels = kSecurityS1,
        .affinity = {{"service,!wrongkey", "region"},
                     {"service in (securityscan),service notin (WrongValue)", "region"}}},
       {{.node = "machine1", .labels = kServiceSecurityScan}},
       fits()},
      {"matchExpressions are ANDed: one unmatched expression fails the term",
       {.labels = kSecurityS1,
        .affinity = {{"service,!wrongkey", "region"},
                     {"service in (securityscan2),service notin (WrongValue)", "region"}}},
       {{.node = "machine1", .labels = kServiceSecurityScan}},
       affinityRulesFail()},
      {"affinity and anti-affinity both satisfied by the existing pod",
       {.labels = kSecurityS1,
        .affinity = {{"service in (securityscan,value2)", "region"}},
        .anti_affinity = {{"service in (antivirusscan,value2)", "node"}}},
       {{.node = "machine1", .labels = kServiceSecurityScan}},
       fits()},
      {"affinity and anti-affinity and the existing pod's anti-affinity are all satisfied",
       {.labels = kSecurityS1,
        .affinity = {{"service in (securityscan,value2)", "region"}},
        .anti_affinity = {{"service in (antivirusscan,value2)", "node"}}},
       {{.node = "machine1",
         .labels = kServiceSecurityScan,
         .anti_affinity = {{"service in (antivirusscan,value2)", "node"}}}},
       fits()},
      {"affinity satisfied but anti-affinity violated by the existing pod",
       {.labels = kSecurityS1,
        .affinity = {{"service in (securityscan,value2)", "region"}},
        .anti_affinity = {{"service in (securityscan,value2)", "zone"}}},
       {{.node = "machine1", .labels = kServiceSecurityScan}},
       antiAffinityRulesFail()},
      {"the existing pod's anti-affinity rejects the incoming pod",
       {.labels = kServiceSecurityScan,
        .affinity = {{"service in (securityscan,value2)", "region"}},
        .anti_affinity = {{"service in (antivirusscan,value2)", "node"}}},
       {{.node = "machine1",
         .labels = kServiceSecurityScan,
         .anti_affinity = {{"service in (securityscan,value2)", "zone"}}}},
       existingAntiAffinityFail()},
      {"a pod not matching its own affinity term with the matching pod on an unknown node",
       {.labels = kServiceSecurityScan,
        .affinity = {{"service notin (securityscan,value2)", "region"}}},
       {{.node = "machine2", .labels = kServiceSecurityScan}},
       affinityRulesFail()},
      {"existing anti-affinity is respected for a pod without anti-affinity (violated)",
       {.labels = kServiceSecurityScan},
       {{.node = "machine1",
         .labels = kServiceSecurityScan,
         .anti_affinity = {{"service in (securityscan,value2)", "zone"}}}},
       existingAntiAffinityFail()},
      {"existing anti-affinity is respected for a pod without anti-affinity (satisfied)",
       {.labels = kServiceSecurityScan},
       {{.node = "machine1",
         .labels = kServiceSecurityScan,
         .anti_affinity = {{"service notin (securityscan,value2)", "zone"}}}},
       fits()},
      {"the incoming pod's anti-affinity matches the existing pod",
       {.labels = kServiceSecurityScan,
        .anti_affinity = {{"service", "region"}, {"security", "region"}}},
       {{.node = "machine1", .labels = kSecurityS1, .anti_affinity = {{"security", "zone"}}}},
       antiAffinityRulesFail()},
      {"anti-affinity symmetry a1: partial match on terms",
       {.labels = kServiceSecurityScan,
        .anti_affinity = {{"service", "zone"}, {"security", "zone"}}},
       {{.node = "machine1", .labels = kSecurityS1, .anti_affinity = {{"security", "zone"}}}},
       antiAffinityRulesFail()},
      {"anti-affinity symmetry a2: partial match on terms",
       {.labels = kSecurityS1, .anti_affinity = {{"security", "zone"}}},
       {{.node = "machine1",
         .labels = kServiceSecurityScan,
         .anti_affinity = {{"service", "zone"}, {"security", "zone"}}}},
       existingAntiAffinityFail()},
      {"anti-affinity symmetry b1: partial match on terms",
       {.labels = {{"abc", ""}, {"xyz", ""}}, .anti_affinity = {{"abc", "zone"}, {"def", "zone"}}},
       {{.node = "machine1",
         .labels = {{"def", ""}, {"xyz", ""}},
         .anti_affinity = {{"abc", "zone"}, {"def", "zone"}}}},
       antiAffinityRulesFail()},
      {"anti-affinity symmetry b2: partial match on terms",
       {.labels = {{"def", ""}, {"xyz", ""}}, .anti_affinity = {{"abc", "zone"}, {"def", "zone"}}},
       {{.node = "machine1",
         .labels = {{"abc", ""}, {"xyz", ""}},
         .anti_affinity = {{"abc", "zone"}, {"def", "zone"}}}},
       antiAffinityRulesFail()},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    const Cluster cluster({machine1}, c.pods);
    const auto statuses = filterAll(cluster, makePod(c.pod));
    REQUIRE(statuses.size() == 1);
    checkVerdict(statuses[0], c.want);
  }
}

TEST_CASE("InterPodAffinity Filter table on several nodes (kube-scheduler 1.20)",
          "[scheduler][interpodaffinity]") {
  const Labels china = {{"region", "China"}};
  const Labels china_az1 = {{"region", "China"}, {"az", "az1"}};
  const Labels india = {{"region", "India"}};
  const auto zoned = [](std::string name, std::string zone) {
    return NodeSpec{name, {{"region", "r1"}, {"zone", std::move(zone)}, {"hostname", name}}};
  };
  struct Case {
    std::string name;
    PodSpec pod;
    std::vector<PodSpec> pods;
    std::vector<NodeSpec> nodes;
    std::vector<Verdict> want;
  };
  const std::vector<Case> cases = {
      {"nodes sharing the topology value of a node with a matching pod satisfy affinity",
       {.affinity = {{"foo in (bar)", "region"}}},
       {{.name = "p1", .node = "machine1", .labels = {{"foo", "bar"}}}},
       {{"machine1", china}, {"machine2", china_az1}, {"machine3", india}},
       {fits(), fits(), affinityRulesFail()}},
      {"the first pod of a group with affinity to itself is not blocked anywhere",
       {.labels = {{"foo", "bar"}, {"service", "securityscan"}},
        .affinity = {{"foo in (bar)", "zone"}, {"service in (securityscan)", "zone"}}},
       {{.name = "p1", .node = "nodeA", .labels = {{"foo", "bar"}}}},
       {{"nodeA", {{"zone", "az1"}, {"hostname", "h1"}}},
        {"nodeB", {{"zone", "az2"}, {"hostname", "h2"}}}},
       {fits(), fits()}},
      {"the first pod of a group still needs nodes with the topology keys",
       {.labels = {{"foo", "bar"}, {"service", "securityscan"}},
        .affinity = {{"foo in (bar)", "zone"}, {"service in (securityscan)", "zone"}}},
       {{.name = "p1", .node = "nodeA", .labels = {{"foo", "bar"}}}},
       {{"nodeA", {{"zoneLabel", "az1"}, {"hostname", "h1"}}},
        {"nodeB", {{"zoneLabel", "az2"}, {"hostname", "h2"}}}},
       {affinityRulesFail(), affinityRulesFail()}},
      {"anti-affinity excludes every node of the matching pod's region",
       {.anti_affinity = {{"foo in (abc)", "region"}}},
       {{.node = "nodeA", .labels = {{"foo", "abc"}}}},
       {{"nodeA", {{"region", "r1"}, {"hostname", "nodeA"}}},
        {"nodeB", {{"region", "r1"}, {"hostname", "nodeB"}}}},
       {antiAffinityRulesFail(), antiAffinityRulesFail()}},
      {"anti-affinity matches a pod when any of its terms matches",
       {.anti_affinity = {{"foo in (abc)", "region"}, {"service in (securityscan)", "zone"}}},
       {{.node = "nodeA", .labels = {{"foo", "abc"}, {"service", "securityscan"}}}},
       {{"nodeA", {{"region", "r1"}, {"zone", "z1"}, {"hostname", "nodeA"}}},
        {"nodeB", {{"region", "r1"}, {"zone", "z2"}, {"hostname", "nodeB"}}}},
       {antiAffinityRulesFail(), antiAffinityRulesFail()}},
      {"anti-affinity leaves the nodes of other regions",
       {.anti_affinity = {{"foo in (abc)", "region"}}},
       {{.node = "nodeA", .labels = {{"foo", "abc"}}}},
       {{"nodeA", china}, {"nodeB", china_az1}, {"nodeC", india}},
       {antiAffinityRulesFail(), antiAffinityRulesFail(), fits()}},
      {"an existing pod in another namespace does not count for anti-affinity",
       {.namespace_ = "NS1",
        .labels = {{"foo", "123"}},
        .anti_affinity = {{"foo in (bar)", "region"}}},
       {{.namespace_ = "NS1", .node = "nodeA", .labels = {{"foo", "bar"}}},
        {.namespace_ = "NS2", .node = "nodeC", .anti_affinity = {{"foo in (123)", "region"}}}},
       {{"nodeA", china}, {"nodeB", china_az1}, {"nodeC", india}},
       {antiAffinityRulesFail(), antiAffinityRulesFail(), fits()}},
      {"an existing pod's anti-affinity term counts only on nodes with its topology key",
       {.labels = {{"foo", ""}}},
       {{.node = "nodeA", .anti_affinity = {{"foo", "invalid-node-label"}}}},
       {zoned("nodeA", "z1"), zoned("nodeB", "z1")},
       {fits(), fits()}},
      {"the incoming pod's anti-affinity term counts only on nodes with its topology key",
       {.anti_affinity = {{"foo", "invalid-node-label"}}},
       {{.node = "nodeA", .labels = {{"foo", ""}}}},
       {zoned("nodeA", "z1"), zoned("nodeB", "z1")},
       {fits(), fits()}},
      {"the incoming pod violates each existing pod's anti-affinity on all nodes",
       {.labels = {{"foo", ""}, {"bar", ""}}},
       {{.node = "nodeA", .anti_affinity = {{"foo", "zone"}}},
        {.node = "nodeA", .anti_affinity = {{"bar", "region"}}}},
       {zoned("nodeA", "z1"), zoned("nodeB", "z2")},
       {existingAntiAffinityFail(), existingAntiAffinityFail()}},
      {"the incoming pod's anti-affinity is violated by some existing pod on every node",
       {.anti_affinity = {{"foo", "zone"}, {"bar", "region"}}},
       {{.node = "nodeA", .labels = {{"foo", ""}}}, {.node = "nodeB", .labels = {{"bar", ""}}}},
       {zoned("nodeA", "z1"), zoned("nodeB", "z2")},
       {antiAffinityRulesFail(), antiAffinityRulesFail()}},
      {"an existing pod's term counts only with selector and topology key both matching",
       {.labels = {{"foo", ""}, {"bar", ""}}},
       {{.node = "nodeA", .anti_affinity = {{"foo", "invalid-node-label"}, {"bar", "zone"}}}},
       {zoned("nodeA", "z1"), zoned("nodeB", "z2")},
       {existingAntiAffinityFail(), fits()}},
      {"an incoming pod's term counts only with selector and topology key both matching",
       {.anti_affinity = {{"foo", "invalid-node-label"}, {"bar", "zone"}}},
       {{.name = "podA", .node = "nodeA", .labels = {{"foo", ""}, {"bar", ""}}}},
       {zoned("nodeA", "z1"), zoned("nodeB", "z2")},
       {antiAffinityRulesFail(), fits()}},
      {"an existing pod's terms with valid topology keys reach both nodes",
       {.labels = {{"foo", ""}, {"bar", ""}}},
       {{.node = "nodeA", .anti_affinity = {{"foo", "region"}, {"bar", "zone"}}}},
       {zoned("nodeA", "z1"), zoned("nodeB", "z2")},
       {existingAntiAffinityFail(), existingAntiAffinityFail()}},
      {"an incoming pod's terms with valid topology keys reach both nodes",
       {.anti_affinity = {{"foo", "region"}, {"bar", "zone"}}},
       {{.node = "nodeA", .labels = {{"foo", ""}, {"bar", ""}}}},
       {zoned("nodeA", "z1"), zoned("nodeB", "z2")},
       {antiAffinityRulesFail(), antiAffinityRulesFail()}},
      {"existing pods on nodeA and nodeB reject the pod so only nodeC fits",
       {.labels = {{"foo", ""}, {"bar", ""}}},
       {{.node = "nodeA", .anti_affinity = {{"foo", "zone"}, {"labelA", "zone"}}},
        {.node = "nodeB", .anti_affinity = {{"bar", "zone"}, {"labelB", "zone"}}}},
       {zoned("nodeA", "z1"), zoned("nodeB", "z2"), zoned("nodeC", "z3")},
       {existingAntiAffinityFail(), existingAntiAffinityFail(), fits()}},
      {"affinity: all terms match one pod and every topology key matches",
       {.affinity = {{"foo", "region"}, {"bar", "zone"}}},
       {{.name = "pod1", .node = "nodeA", .labels = {{"foo", ""}, {"bar", ""}}}},
       {zoned("nodeA", "z1"), zoned("nodeB", "z1")},
       {fits(), fits()}},
      {"affinity: the terms must be matched by one and the same pod",
       {.affinity = {{"foo", "region"}, {"bar", "zone"}}},
       {{.name = "pod1", .node = "nodeA", .labels = {{"foo", ""}}},
        {.name = "pod2", .node = "nodeB", .labels = {{"bar", ""}}}},
       {zoned("nodeA", "z1"), zoned("nodeB", "z2")},
       {affinityRulesFail(), affinityRulesFail()}},
      // Not in upstream's tables: once one pod of the group exists, the exception is gone.
      {"a self-matching pod must join its group once a member exists",
       {.labels = {{"app", "web"}}, .affinity = {{"app in (web)", "zone"}}},
       {{.node = "nodeA", .labels = {{"app", "web"}}}},
       {zoned("nodeA", "z1"), zoned("nodeB", "z2")},
       {fits(), affinityRulesFail()}},
      {"a pod not matching its own terms is not treated as the first of a group",
       {.labels = {{"app", "db"}}, .affinity = {{"app in (web)", "zone"}}},
       {},
       {zoned("nodeA", "z1"), zoned("nodeB", "z2")},
       {affinityRulesFail(), affinityRulesFail()}},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    const Cluster cluster(c.nodes, c.pods);
    const auto statuses = filterAll(cluster, makePod(c.pod));
    REQUIRE(statuses.size() == c.want.size());
    for (std::size_t i = 0; i < statuses.size(); ++i) {
      INFO("node " << c.nodes[i].name);
      checkVerdict(statuses[i], c.want[i]);
    }
  }
}

TEST_CASE("InterPodAffinity Filter without PreFilter state is an error",
          "[scheduler][interpodaffinity]") {
  const Cluster cluster({{"machine1"}}, {});
  auto plugin = makePlugin(cluster);
  const Status st = plugin->filter(CycleState{}, makePod({}), cluster.node("machine1"));
  CHECK(st.code() == Code::kError);
  CHECK(st.message() == "error reading \"PreFilterInterPodAffinity\" from cycleState: not found");
}

TEST_CASE("InterPodAffinity Filter on a NodeInfo without its Node is an error",
          "[scheduler][interpodaffinity]") {
  const Cluster cluster({{"machine1"}}, {});
  auto plugin = makePlugin(cluster);
  CycleState state;
  const PodInfo pod = makePod({.anti_affinity = {{"app", "zone"}}});
  REQUIRE(plugin->preFilter(state, pod).ok());
  const Status st = plugin->filter(state, pod, NodeInfo{});
  CHECK(st.code() == Code::kError);
  CHECK(st.message() == "node not found");
}

}  // namespace
}  // namespace ipa_test
