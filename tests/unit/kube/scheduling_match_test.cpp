#include "koord/kube/scheduling_match.h"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

using namespace koord::kube;
using Op = NodeSelectorOperator;

namespace {

NodeAffinity required(std::vector<NodeSelectorTerm> terms) {
  NodeAffinity a;
  a.required = NodeSelector{std::move(terms)};
  return a;
}

NodeSelectorTerm exprs(std::vector<NodeSelectorRequirement> e) {
  return {std::move(e), {}};
}
NodeSelectorTerm fields(std::vector<NodeSelectorRequirement> f) {
  return {{}, std::move(f)};
}

}  // namespace

// Modelled on TestNodeAffinity in kube-scheduler's nodeaffinity plugin (the Filter results).
TEST_CASE("node affinity filter table", "[kube][scheduling]") {
  struct Case {
    const char* name;
    Labels pod_node_selector;
    std::optional<NodeAffinity> affinity;
    Labels node_labels;
    const char* node_name;
    bool want;
  };
  const std::vector<Case> cases = {
      {"missing labels", {{"foo", "bar"}}, std::nullopt, {}, "", false},
      {"same labels", {{"foo", "bar"}}, std::nullopt, {{"foo", "bar"}}, "", true},
      {"node labels are superset",
       {{"foo", "bar"}},
       std::nullopt,
       {{"foo", "bar"}, {"baz", "blah"}},
       "",
       true},
      {"node labels are subset",
       {{"foo", "bar"}, {"baz", "blah"}},
       std::nullopt,
       {{"foo", "bar"}},
       "",
       false},
      {"In matches",
       {},
       required({exprs({{"foo", Op::kIn, {"bar", "value2"}}})}),
       {{"foo", "bar"}},
       "",
       true},
      {"Gt matches (integers, not strings)",
       {},
       required({exprs({{"kernel-version", Op::kGt, {"0204"}}})}),
       {{"kernel-version", "0206"}},
       "",
       true},
      {"Lt does not match",
       {},
       required({exprs({{"kernel-version", Op::kLt, {"0204"}}})}),
       {{"kernel-version", "0206"}},
       "",
       false},
      {"Gt on a non-integer label",
       {},
       required({exprs({{"kernel-version", Op::kGt, {"1"}}})}),
       {{"kernel-version", "v2"}},
       "",
       false},
      {"Gt with two values is invalid and matches nothing",
       {},
       required({exprs({{"kernel-version", Op::kGt, {"1", "2"}}})}),
       {{"kernel-version", "5"}},
       "",
       false},
      {"NotIn matches",
       {},
       required({exprs({{"mem-type", Op::kNotIn, {"DDR", "DDR2"}}})}),
       {{"mem-type", "DDR3"}},
       "",
       true},
      {"Exists matches",
       {},
       required({exprs({{"GPU", Op::kExists, {}}})}),
       {{"GPU", "NVIDIA-GRID-K1"}},
       "",
       true},
      {"DoesNotExist",
       {},
       required({exprs({{"GPU", Op::kDoesNotExist, {}}})}),
       {{"GPU", "NVIDIA-GRID-K1"}},
       "",
       false},
      {"affinity that does not match",
       {},
       required({exprs({{"foo", Op::kIn, {"value1", "value2"}}})}),
       {{"foo", "bar"}},
       "",
       false},
      {"empty matchExpressions matches nothing",
       {},
       required({exprs({})}),
       {{"foo", "bar"}},
       "",
       false},
      {"no terms match nothing", {}, required({}), {{"foo", "bar"}}, "", false},
      {"no affinity", {}, std::nullopt, {{"foo", "bar"}}, "", true},
      {"affinity without required", {}, NodeAffinity{}, {{"foo", "bar"}}, "", true},
      {"ANDed expressions match",
       {},
       required({exprs({{"GPU", Op::kExists, {}}, {"GPU", Op::kNotIn, {"AMD", "INTER"}}})}),
       {{"GPU", "NVIDIA-GRID-K1"}},
       "",
       true},
      {"ANDed expressions do not match",
       {},
       required({exprs({{"GPU", Op::kExists, {}}, {"GPU", Op::kIn, {"AMD", "INTER"}}})}),
       {{"GPU", "NVIDIA-GRID-K1"}},
       "",
       false},
      {"ORed terms, one matches",
       {},
       required({exprs({{"foo", Op::kIn, {"bar", "value2"}}}),
                 exprs({{"diffkey", Op::kIn, {"wrong", "value2"}}})}),
       {{"foo", "bar"}},
       "",
       true},
      {"affinity and nodeSelector both satisfied",
       {{"foo", "bar"}},
       required({exprs({{"foo", Op::kExists, {}}})}),
       {{"foo", "bar"}},
       "",
       true},
      {"affinity satisfied but nodeSelector not",
       {{"foo", "bar"}},
       required({exprs({{"foo", Op::kExists, {}}})}),
       {{"foo", "barrrrrr"}},
       "",
       false},
      {"invalid value in a term",
       {},
       required({exprs({{"foo", Op::kNotIn, {"invalid value: ___@#$%^"}}})}),
       {{"foo", "bar"}},
       "",
       false},
      {"matchFields In matches",
       {},
       required({fields({{"metadata.name", Op::kIn, {"node1"}}})}),
       {},
       "node1",
       true},
      {"matchFields In does not match",
       {},
       required({fields({{"metadata.name", Op::kIn, {"node1"}}})}),
       {},
       "node2",
       false},
      {"matchFields NotIn",
       {},
       required({fields({{"metadata.name", Op::kNotIn, {"node1"}}})}),
       {},
       "node2",
       true},
      {"matchFields In with two values is invalid",
       {},
       required({fields({{"metadata.name", Op::kIn, {"node1", "node2"}}})}),
       {},
       "node2",
       false},
      {"matchFields Exists is invalid",
       {},
       required({fields({{"metadata.name", Op::kExists, {}}})}),
       {},
       "node2",
       false},
      {"two terms: matchFields does not match, matchExpressions does",
       {},
       required(
           {fields({{"metadata.name", Op::kIn, {"node1"}}, {"metadata.name", Op::kIn, {"node2"}}}),
            exprs({{"foo", Op::kIn, {"bar"}}})}),
       {{"foo", "bar"}},
       "node2",
       true},
      {"one term: matchFields does not match, matchExpressions does",
       {},
       required({NodeSelectorTerm{{{"foo", Op::kIn, {"bar"}}},
                                  {{"metadata.name", Op::kIn, {"node1"}}}}}),
       {{"foo", "bar"}},
       "node2",
       false},
      {"one term: both match",
       {},
       required({NodeSelectorTerm{{{"foo", Op::kIn, {"bar"}}},
                                  {{"metadata.name", Op::kIn, {"node1"}}}}}),
       {{"foo", "bar"}},
       "node1",
       true},
      {"two terms: neither matches",
       {},
       required({fields({{"metadata.name", Op::kIn, {"node1"}}}),
                 exprs({{"foo", Op::kIn, {"not-match-to-bar"}}})}),
       {{"foo", "bar"}},
       "node2",
       false},
      {"two terms of node name",
       {},
       required({fields({{"metadata.name", Op::kIn, {"node1"}}}),
                 fields({{"metadata.name", Op::kIn, {"node2"}}})}),
       {},
       "node2",
       true},
      {"two conflicting matchFields requirements",
       {},
       required({fields(
           {{"metadata.name", Op::kIn, {"node1"}}, {"metadata.name", Op::kIn, {"node2"}}})}),
       {{"foo", "bar"}},
       "node2",
       false},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    const NodeAffinity* affinity = c.affinity ? &*c.affinity : nullptr;
    CHECK(podMatchesNodeSelectorAndAffinityTerms(c.pod_node_selector, affinity, c.node_labels,
                                                 c.node_name) == c.want);
  }
}

// Modelled on TestNodeAffinityPriority: raw scores (the plugin then normalises to 0..100).
TEST_CASE("preferred scheduling terms sum the weights that match", "[kube][scheduling]") {
  const Labels label1{{"foo", "bar"}};
  const Labels label2{{"key", "value"}};
  const Labels label3{{"az", "az1"}};
  const Labels label4{{"abc", "az11"}, {"def", "az22"}};
  const Labels label5{{"foo", "bar"}, {"key", "value"}, {"az", "az1"}};
  const std::vector<PreferredSchedulingTerm> affinity1{{2, exprs({{"foo", Op::kIn, {"bar"}}})}};
  const std::vector<PreferredSchedulingTerm> affinity2{
      {2, exprs({{"foo", Op::kIn, {"bar"}}})},
      {4, exprs({{"key", Op::kIn, {"value"}}})},
      {5,
       exprs({{"foo", Op::kIn, {"bar"}}, {"key", Op::kIn, {"value"}}, {"az", Op::kIn, {"az1"}}})}};

  CHECK(*preferredSchedulingScore({}, label1) == 0);
  CHECK(*preferredSchedulingScore(affinity1, label4) == 0);
  CHECK(*preferredSchedulingScore(affinity1, label2) == 0);
  CHECK(*preferredSchedulingScore(affinity1, label3) == 0);
  CHECK(*preferredSchedulingScore(affinity1, label1) == 2);
  CHECK(*preferredSchedulingScore(affinity2, label1) == 2);
  CHECK(*preferredSchedulingScore(affinity2, label5) == 11);
  CHECK(*preferredSchedulingScore(affinity2, label2) == 4);
  // Zero weights are skipped, even when invalid; an empty term matches nothing; 1.20 ignores
  // matchFields in preferences.
  CHECK(*preferredSchedulingScore({{0, exprs({{"k", Op::kIn, {}}})}}, label1) == 0);
  CHECK(*preferredSchedulingScore({{3, NodeSelectorTerm{}}}, label1) == 0);
  CHECK(*preferredSchedulingScore({{3, fields({{"metadata.name", Op::kIn, {"n"}}})}}, label1) == 0);
  auto bad = preferredSchedulingScore({{1, exprs({{"k", Op::kIn, {}}})}}, label1);
  REQUIRE_FALSE(bad.has_value());
  CHECK_THAT(bad.error().message,
             Catch::Contains("preferredDuringSchedulingIgnoredDuringExecution[0]"));
}

TEST_CASE("tolerations tolerate taints as v1.Toleration.ToleratesTaint", "[kube][scheduling]") {
  using E = TaintEffect;
  using T = TolerationOperator;
  struct Case {
    const char* name;
    Toleration toleration;
    Taint taint;
    bool want;
  };
  const std::vector<Case> cases = {
      {"empty key with Exists tolerates all",
       {"", T::kExists, "", E::kAll, {}},
       {"k", "v", E::kNoExecute},
       true},
      {"empty key Exists with an effect",
       {"", T::kExists, "", E::kNoSchedule, {}},
       {"k", "v", E::kNoExecute},
       false},
      {"Equal, same key and value, empty effect",
       {"k", T::kEqual, "v", E::kAll, {}},
       {"k", "v", E::kNoSchedule},
       true},
      {"Equal, different value",
       {"k", T::kEqual, "v", E::kAll, {}},
       {"k", "w", E::kNoSchedule},
       false},
      {"Equal, different key",
       {"k", T::kEqual, "v", E::kAll, {}},
       {"j", "v", E::kNoSchedule},
       false},
      {"Equal, different effect",
       {"k", T::kEqual, "v", E::kNoExecute, {}},
       {"k", "v", E::kNoSchedule},
       false},
      {"Exists on the key, any value",
       {"k", T::kExists, "", E::kNoSchedule, {}},
       {"k", "anything", E::kNoSchedule},
       true},
      {"Exists on another key",
       {"k", T::kExists, "", E::kAll, {}},
       {"j", "", E::kNoSchedule},
       false},
      {"Equal with empty values",
       {"k", T::kEqual, "", E::kAll, {}},
       {"k", "", E::kPreferNoSchedule},
       true},
      // The empty key only short-cuts the key check: with Equal the value must still agree.
      {"empty key with Equal", {"", T::kEqual, "v", E::kAll, {}}, {"k", "v", E::kNoSchedule}, true},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    CHECK(tolerates(c.toleration, c.taint) == c.want);
  }
}

// Modelled on TestTaintTolerationFilter and TestTaintTolerationScore.
TEST_CASE("taint toleration filter and score", "[kube][scheduling]") {
  using E = TaintEffect;
  using T = TolerationOperator;
  const std::vector<Taint> dedicated_user1{{"dedicated", "user1", E::kNoSchedule}};
  CHECK(findUntoleratedTaint(dedicated_user1, {}) == &dedicated_user1[0]);
  CHECK(findUntoleratedTaint(dedicated_user1,
                             {{"dedicated", T::kEqual, "user1", E::kNoSchedule, {}}}) == nullptr);
  CHECK(findUntoleratedTaint(dedicated_user1,
                             {{"dedicated", T::kEqual, "user2", E::kNoSchedule, {}}}) != nullptr);
  CHECK(findUntoleratedTaint(dedicated_user1,
                             {{"dedicated", T::kExists, "", E::kNoSchedule, {}}}) == nullptr);

  const std::vector<Taint> two{{"dedicated", "user2", E::kNoSchedule},
                               {"foo", "bar", E::kNoSchedule}};
  CHECK(findUntoleratedTaint(two, {{"dedicated", T::kEqual, "user2", E::kNoSchedule, {}},
                                   {"foo", T::kExists, "", E::kNoSchedule, {}}}) == nullptr);
  CHECK(findUntoleratedTaint(two, {{"dedicated", T::kEqual, "user2", E::kNoSchedule, {}}}) ==
        &two[1]);

  const std::vector<Taint> foo_noschedule{{"foo", "bar", E::kNoSchedule}};
  CHECK(findUntoleratedTaint(foo_noschedule,
                             {{"foo", T::kEqual, "bar", E::kPreferNoSchedule, {}}}) != nullptr);
  CHECK(findUntoleratedTaint(foo_noschedule, {{"foo", T::kEqual, "bar", E::kAll, {}}}) == nullptr);

  // PreferNoSchedule taints never block the filter.
  const std::vector<Taint> prefer{{"dedicated", "user1", E::kPreferNoSchedule}};
  CHECK(findUntoleratedTaint(prefer, {{"dedicated", T::kEqual, "user2", E::kNoSchedule, {}}}) ==
        nullptr);
  CHECK(findUntoleratedTaint(prefer, {}) == nullptr);
  const std::vector<Taint> no_execute{{"k", "v", E::kNoExecute}};
  CHECK(findUntoleratedTaint(no_execute, {}) == &no_execute[0]);
  CHECK(findUntoleratedTaint(no_execute, {{"k", T::kExists, "", E::kNoExecute, 300}}) == nullptr);

  // A custom filter.
  CHECK(findMatchingUntoleratedTaint(prefer, {}, [](const Taint&) { return true; }) == &prefer[0]);

  // Score: untolerated PreferNoSchedule taints, counting only tolerations whose effect is
  // empty or PreferNoSchedule.
  const std::vector<Taint> prefer_two{{"cpu-type", "arm64", E::kPreferNoSchedule},
                                      {"disk-type", "ssd", E::kPreferNoSchedule}};
  CHECK(countIntolerableTaintsPreferNoSchedule(prefer_two, {}) == 2);
  CHECK(countIntolerableTaintsPreferNoSchedule(
            prefer_two, {{"cpu-type", T::kEqual, "arm64", E::kPreferNoSchedule, {}}}) == 1);
  CHECK(countIntolerableTaintsPreferNoSchedule(
            prefer_two, {{"cpu-type", T::kEqual, "arm64", E::kPreferNoSchedule, {}},
                         {"disk-type", T::kEqual, "ssd", E::kAll, {}}}) == 0);
  // A NoSchedule toleration does not count for PreferNoSchedule taints.
  CHECK(countIntolerableTaintsPreferNoSchedule(
            prefer_two, {{"cpu-type", T::kEqual, "arm64", E::kNoSchedule, {}}}) == 2);
  // NoSchedule taints are not the score's business.
  CHECK(countIntolerableTaintsPreferNoSchedule({{"k", "v", E::kNoSchedule}}, {}) == 0);
}
