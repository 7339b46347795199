#include "koord/kube/decode.h"

#include <boost/json.hpp>

#include <catch2/catch.hpp>

using namespace koord::kube;
namespace json = boost::json;

namespace {

json::value parse(std::string_view text) {
  return json::parse(text);
}

template <typename T>
std::string errorOf(const Expected<T>& r) {
  REQUIRE_FALSE(r.has_value());
  return r.error().message;
}

}  // namespace

TEST_CASE("node affinity decodes from a pod spec", "[kube][decode]") {
  auto pod = parse(R"({"spec": {"affinity": {"nodeAffinity": {
    "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
      {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a", "b"]},
                            {"key": "gpu", "operator": "Exists"}]},
      {"matchFields": [{"key": "metadata.name", "operator": "NotIn", "values": ["n1"]}]}]},
    "preferredDuringSchedulingIgnoredDuringExecution": [
      {"weight": 7, "preference": {"matchExpressions": [{"key": "disk", "operator": "Gt", "values": ["3"]}]}}]
  }}, "unknownField": true}})");
  auto a = decodeNodeAffinity(pod.at("spec").at("affinity").at("nodeAffinity"));
  REQUIRE(a.has_value());
  REQUIRE(a->required.has_value());
  REQUIRE(a->required->node_selector_terms.size() == 2);
  const auto& t0 = a->required->node_selector_terms[0];
  REQUIRE(t0.match_expressions.size() == 2);
  CHECK(t0.match_expressions[0] ==
        NodeSelectorRequirement{"zone", NodeSelectorOperator::kIn, {"a", "b"}});
  CHECK(t0.match_expressions[1].op == NodeSelectorOperator::kExists);
  CHECK(a->required->node_selector_terms[1].match_fields[0].op == NodeSelectorOperator::kNotIn);
  REQUIRE(a->preferred.size() == 1);
  CHECK(a->preferred[0].weight == 7);
  CHECK(a->preferred[0].preference.match_expressions[0].op == NodeSelectorOperator::kGt);

  CHECK(a->required->matches({{"zone", "b"}, {"gpu", "x"}}, "n1"));
  CHECK(a->required->matches({}, "n2"));
  CHECK_FALSE(a->required->matches({{"zone", "c"}}, "n1"));
  CHECK(*preferredSchedulingScore(a->preferred, {{"disk", "4"}}) == 7);

  // Null and absent read as Go's zero values.
  auto empty = decodeNodeAffinity(parse("null"));
  REQUIRE(empty.has_value());
  CHECK_FALSE(empty->required.has_value());
  auto no_required =
      decodeNodeAffinity(parse(R"({"requiredDuringSchedulingIgnoredDuringExecution": null})"));
  REQUIRE(no_required.has_value());
  CHECK_FALSE(no_required->required.has_value());
}

TEST_CASE("node affinity decode errors name the field", "[kube][decode]") {
  const std::vector<std::pair<const char*, const char*>> cases = {
      {R"([])", "spec.affinity.nodeAffinity: expected object, got array"},
      {R"({"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": [{"key": "a", "operator": "Foo"}]}]}})",
       "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
       "nodeSelectorTerms[0].matchExpressions[0].operator: unsupported value \"Foo\""},
      {R"({"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{}, {"matchFields": [{"key": "a", "operator": "In", "values": [1]}]}]}})",
       "nodeSelectorTerms[1].matchFields[0].values[0]: expected string, got number"},
      {R"({"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": {}}})",
       "nodeSelectorTerms: expected array, got object"},
      {R"({"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 1.5}]})",
       "preferredDuringSchedulingIgnoredDuringExecution[0].weight: expected integer, got number"},
      {R"({"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 4294967296}]})",
       "preferredDuringSchedulingIgnoredDuringExecution[0].weight: 4294967296 overflows int32"},
      {R"({"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 1, "preference": {"matchExpressions": [{"key": 5}]}}]})",
       "preference.matchExpressions[0].key: expected string, got number"},
  };
  for (const auto& [in, want] : cases) {
    INFO(in);
    CHECK_THAT(errorOf(decodeNodeAffinity(parse(in))), Catch::Contains(want));
  }
}

TEST_CASE("taints and tolerations decode from node and pod specs", "[kube][decode]") {
  auto taints = decodeTaints(parse(R"([
    {"key": "dedicated", "value": "db", "effect": "NoSchedule", "timeAdded": null},
    {"key": "node.kubernetes.io/unreachable", "effect": "NoExecute", "timeAdded": "2024-01-01T00:00:00Z"}])"));
  REQUIRE(taints.has_value());
  REQUIRE(taints->size() == 2);
  CHECK((*taints)[0] == Taint{"dedicated", "db", TaintEffect::kNoSchedule});
  CHECK((*taints)[1].effect == TaintEffect::kNoExecute);

  auto tolerations = decodeTolerations(parse(R"([
    {"key": "dedicated", "operator": "Equal", "value": "db", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
    {"operator": "Exists"},
    {"key": "k", "value": "v"}])"));
  REQUIRE(tolerations.has_value());
  REQUIRE(tolerations->size() == 4);
  CHECK((*tolerations)[1].toleration_seconds == 300);
  CHECK((*tolerations)[2].op == TolerationOperator::kExists);
  CHECK((*tolerations)[2].key.empty());
  CHECK((*tolerations)[2].effect == TaintEffect::kAll);
  CHECK((*tolerations)[3].op == TolerationOperator::kEqual);
  CHECK(findUntoleratedTaint(*taints, *tolerations) == nullptr);

  CHECK(decodeTaints(parse("null"))->empty());
  CHECK(decodeTolerations(parse("null"))->empty());

  const std::vector<std::pair<const char*, const char*>> taint_errors = {
      {R"({})", "spec.taints: expected array, got object"},
      {R"([{"key": "a", "effect": "Sometimes"}])",
       "spec.taints[0].effect: unsupported value \"Sometimes\""},
      {R"([{"key": "a", "effect": ""}])", "spec.taints[0].effect: unsupported value \"\""},
      {R"([{"key": "a", "effect": "NoSchedule"}, 3])",
       "spec.taints[1]: expected object, got number"},
      {R"([{"key": ["a"], "effect": "NoSchedule"}])",
       "spec.taints[0].key: expected string, got array"},
  };
  for (const auto& [in, want] : taint_errors) {
    INFO(in);
    CHECK_THAT(errorOf(decodeTaints(parse(in))), Catch::Contains(want));
  }
  const std::vector<std::pair<const char*, const char*>> toleration_errors = {
      {R"([{"operator": "Gt"}])", "spec.tolerations[0].operator: unsupported value \"Gt\""},
      {R"([{}, {"effect": "Never"}])", "spec.tolerations[1].effect: unsupported value \"Never\""},
      {R"([{"tolerationSeconds": "300"}])",
       "spec.tolerations[0].tolerationSeconds: expected integer, got string"},
      {R"([{"tolerationSeconds": 1.0}])",
       "spec.tolerations[0].tolerationSeconds: expected integer"},
      {R"([{"tolerationSeconds": 18446744073709551615}])", "overflows int64"},
  };
  for (const auto& [in, want] : toleration_errors) {
    INFO(in);
    CHECK_THAT(errorOf(decodeTolerations(parse(in))), Catch::Contains(want));
  }
}

TEST_CASE("label selectors and label maps decode", "[kube][decode]") {
  auto ls = decodeLabelSelector(parse(R"({"matchLabels": {"app": "web"},
    "matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["db"]},
                         {"key": "canary", "operator": "DoesNotExist"}]})"));
  REQUIRE(ls.has_value());
  CHECK(ls->match_labels == Labels{{"app", "web"}});
  REQUIRE(ls->match_expressions.size() == 2);
  CHECK(ls->match_expressions[0].op == LabelSelectorOperator::kNotIn);
  auto s = toSelector(*ls);
  REQUIRE(s.has_value());
  CHECK(s->toString() == "app=web,!canary,tier notin (db)");

  CHECK(decodeLabelSelector(parse("{}"))->match_expressions.empty());
  CHECK_THAT(errorOf(decodeLabelSelector(parse("null"))),
             Catch::Contains("spec.selector: expected object, got null"));
  CHECK_THAT(
      errorOf(
          decodeLabelSelector(parse(R"({"matchExpressions": [{"key": "a", "operator": "Gt"}]})"))),
      Catch::Contains("spec.selector.matchExpressions[0].operator: unsupported value \"Gt\""));
  CHECK_THAT(errorOf(decodeLabelSelector(parse(R"({"matchLabels": {"a": 1}})"))),
             Catch::Contains("spec.selector.matchLabels[a]: expected string, got number"));

  auto labels = decodeStringMap(parse(R"({"a": "1", "b": ""})"));
  REQUIRE(labels.has_value());
  CHECK(*labels == Labels{{"a", "1"}, {"b", ""}});
  CHECK(decodeStringMap(parse("null"))->empty());
  CHECK_THAT(errorOf(decodeStringMap(parse(R"(["a"])"), "spec.nodeSelector")),
             Catch::Contains("spec.nodeSelector: expected object, got array"));
}

TEST_CASE("only the wanted entries of a string map are decoded and checked", "[kube][decode]") {
  constexpr std::string_view kWanted[] = {"a", "c"};
  auto kept = decodeStringMapEntries(parse(R"({"a": "1", "b": 2, "c": "", "d": "4"})"), kWanted);
  REQUIRE(kept.has_value());
  // "b" is not a string, but it is not wanted either: it is never read.
  CHECK(*kept == Labels{{"a", "1"}, {"c", ""}});
  CHECK(decodeStringMapEntries(parse(R"({"a": null})"), kWanted)->empty());
  CHECK(decodeStringMapEntries(parse("null"), kWanted)->empty());
  CHECK_THAT(errorOf(decodeStringMapEntries(parse(R"({"c": true})"), kWanted)),
             Catch::Contains("metadata.annotations[c]: expected string, got boolean"));
  CHECK_THAT(errorOf(decodeStringMapEntries(parse("[]"), kWanted, "metadata.labels")),
             Catch::Contains("metadata.labels: expected object, got array"));
}

TEST_CASE("quantities and resource lists decode from strings and numbers", "[kube][decode]") {
  auto rl = decodeResourceList(
      parse(
          R"({"cpu": "500m", "memory": "1Gi", "pods": 110, "ephemeral-storage": " 1.5 ", "x": 0.25, "n": null})"),
      "status.allocatable");
  REQUIRE(rl.has_value());
  CHECK(rl->at("cpu").milliValue() == 500);
  CHECK(rl->at("memory").toString() == "1Gi");
  CHECK(rl->at("pods").value() == 110);
  CHECK(rl->at("ephemeral-storage").toString() == "1500m");
  CHECK(rl->at("x").toString() == "250m");
  CHECK(rl->at("n").isZero());
  auto big = decodeQuantity(parse("18446744073709551615"), "q");
  REQUIRE(big.has_value());
  CHECK(big->toString() == "18446744073709551615");

  CHECK_THAT(errorOf(decodeResourceList(parse(R"({"cpu": "1mi"})"),
                                        "spec.containers[0].resources.limits")),
             Catch::Contains(
                 "spec.containers[0].resources.limits[cpu]: unable to parse quantity's suffix"));
  CHECK_THAT(errorOf(decodeResourceList(parse(R"({"cpu": "1x"})"), "limits")),
             Catch::Contains("limits[cpu]: quantities must match the regular expression"));
  CHECK_THAT(errorOf(decodeResourceList(parse(R"({"cpu": true})"), "limits")),
             Catch::Contains("limits[cpu]: expected quantity (string or number), got boolean"));
  CHECK_THAT(errorOf(decodeResourceList(parse(R"([])"), "limits")),
             Catch::Contains("limits: expected object, got array"));
}
