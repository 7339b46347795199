// The per-node predicates VolumeBinding compiles once: a PV's node affinity as 1.20's
// CheckNodeAffinity reads it (labels only), a class's allowed topologies, and the claim checks.
#include <catch2/catch.hpp>

#include "fixtures.h"
#include "plugins/upstream/volumebinding/matching.h"

namespace vb_test {
namespace {

using koord::kube::NodeSelector;
using koord::kube::NodeSelectorOperator;
using koord::kube::NodeSelectorRequirement;
using koord::kube::NodeSelectorTerm;

const koord::kube::Labels kNodeA = {{"kubernetes.io/hostname", "node-a"}, {"zone", "a"}};

NodeSelectorTerm labelTerm(std::string key, NodeSelectorOperator op,
                           std::vector<std::string> values) {
  NodeSelectorTerm t;
  t.match_expressions.push_back({std::move(key), op, std::move(values)});
  return t;
}

TEST_CASE("volumebinding: a volume's node affinity reads the node's labels only",
          "[scheduler][volumebinding]") {
  NodeSelector by_label{{labelTerm("zone", NodeSelectorOperator::kIn, {"a"})}};
  CHECK(vb::NodeLabelMatcher::volumeAffinity(by_label).matches(kNodeA));
  CHECK_FALSE(vb::NodeLabelMatcher::volumeAffinity(by_label).matches({{"zone", "b"}}));

  // 1.20 hands CheckNodeAffinity no fields: metadata.name In [node-a] matches no node, NotIn
  // every node.
  NodeSelectorTerm by_name;
  by_name.match_fields.push_back(
      {std::string(koord::kube::kNodeNameField), NodeSelectorOperator::kIn, {"node-a"}});
  CHECK_FALSE(vb::NodeLabelMatcher::volumeAffinity(NodeSelector{{by_name}}).matches(kNodeA));
  by_name.match_fields[0].op = NodeSelectorOperator::kNotIn;
  CHECK(vb::NodeLabelMatcher::volumeAffinity(NodeSelector{{by_name}}).matches(kNodeA));

  // Empty and invalid terms select nothing; another term may still match.
  NodeSelector mixed{{NodeSelectorTerm{}, labelTerm("zone", NodeSelectorOperator::kGt, {"x"}),
                      labelTerm("kubernetes.io/hostname", NodeSelectorOperator::kIn, {"node-a"})}};
  CHECK(vb::NodeLabelMatcher::volumeAffinity(mixed).matches(kNodeA));
  mixed.node_selector_terms.pop_back();
  CHECK_FALSE(vb::NodeLabelMatcher::volumeAffinity(mixed).matches(kNodeA));
  CHECK_FALSE(vb::NodeLabelMatcher::volumeAffinity(NodeSelector{}).matches(kNodeA));
}

TEST_CASE("volumebinding: a class's allowed topologies", "[scheduler][volumebinding]") {
  CHECK(vb::NodeLabelMatcher::allowedTopologies({}).matches(kNodeA));
  CHECK_FALSE(vb::NodeLabelMatcher::allowedTopologies({NodeSelectorTerm{}}).matches(kNodeA));
  CHECK(vb::NodeLabelMatcher::allowedTopologies(
            {NodeSelectorTerm{}, labelTerm("zone", NodeSelectorOperator::kIn, {"b", "a"})})
            .matches(kNodeA));
  CHECK_FALSE(
      vb::NodeLabelMatcher::allowedTopologies({labelTerm("zone", NodeSelectorOperator::kIn, {"b"})})
          .matches(kNodeA));
}

TEST_CASE("volumebinding: claim and volume predicates", "[scheduler][volumebinding]") {
  auto claim = makeClaim({.name = "data", .storage_class = "local", .request = "2Gi"});
  CHECK(vb::volumeFitsClaim(*makePV({.name = "pv", .storage_class = "local", .capacity = "2Gi"}),
                            *claim) == vb::VolumeFit::kAvailable);
  // Pre-bound by name: the claim's, even in another phase; too small, it is not.
  CHECK(vb::volumeFitsClaim(*makePV({.name = "pv",
                                     .storage_class = "local",
                                     .capacity = "2Gi",
                                     .phase = "Pending",
                                     .claim = "data"}),
                            *claim) == vb::VolumeFit::kBoundToClaim);
  CHECK(vb::volumeFitsClaim(
            *makePV({.name = "pv", .storage_class = "local", .capacity = "1Gi", .claim = "data"}),
            *claim) == vb::VolumeFit::kNo);
  CHECK(vb::volumeBoundToClaim(*makePV({.name = "pv", .claim = "data", .claim_uid = "uid-data"}),
                               *claim));
  CHECK_FALSE(
      vb::volumeBoundToClaim(*makePV({.name = "pv", .claim = "data", .claim_uid = "x"}), *claim));
  CHECK_FALSE(vb::claimFullyBound(*makeClaim({.name = "c", .volume_name = "pv"})));
  CHECK(
      vb::claimFullyBound(*makeClaim({.name = "c", .volume_name = "pv", .bind_completed = true})));
  CHECK(vb::parseResourceVersion("42") == 42);
  CHECK_FALSE(vb::parseResourceVersion(""));
  CHECK_FALSE(vb::parseResourceVersion("4x"));
}

}  // namespace
}  // namespace vb_test
