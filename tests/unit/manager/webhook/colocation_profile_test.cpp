#include "koord/apis/colocation_profile.h"

#include <boost/json.hpp>

#include <catch2/catch.hpp>

#include "webhook_test_util.h"

using namespace koord::apis;
using koord::manager::webhook::testing::parse;

namespace {

std::string errorOf(std::string_view text) {
  auto r = decodeClusterColocationProfile(parse(text));
  REQUIRE_FALSE(r.has_value());
  return r.error().message;
}

}  // namespace

TEST_CASE("a ClusterColocationProfile decodes every field", "[apis][colocation_profile]") {
  auto r = decodeClusterColocationProfile(parse(R"({
    "apiVersion": "config.koordinator.sh/v1alpha1", "kind": "ClusterColocationProfile",
    "metadata": {"name": "colo", "annotations": {"config.koordinator.sh/skip-update-resources": ""}},
    "spec": {
      "namespaceSelector": {"matchLabels": {"team": "a"}},
      "selector": {"matchExpressions": [{"key": "app", "operator": "In", "values": ["x"]}]},
      "probability": "30%", "qosClass": "BE", "priorityClassName": "koord-batch",
      "koordinatorPriority": 1111, "labels": {"l": "1"}, "annotations": {"a": "2"},
      "labelKeysMapping": {"from": "to"}, "annotationKeysMapping": {"af": "at"},
      "labelSuffixes": {"app": "-s"}, "schedulerName": "koord-scheduler",
      "patch": {"spec": {"hostNetwork": false}}, "unknown": 1}})"));
  REQUIRE(r.has_value());
  CHECK(r->name == "colo");
  CHECK(r->skip_update_resources);
  REQUIRE(r->namespace_selector.has_value());
  CHECK(r->namespace_selector->match_labels == koord::kube::Labels{{"team", "a"}});
  REQUIRE(r->selector.has_value());
  CHECK(r->selector->match_expressions.size() == 1);
  CHECK(r->probability_percent == 30);
  CHECK(r->qos_class == "BE");
  CHECK(r->priority_class_name == "koord-batch");
  CHECK(r->koordinator_priority == 1111);
  CHECK(r->labels == koord::kube::Labels{{"l", "1"}});
  CHECK(r->annotations == koord::kube::Labels{{"a", "2"}});
  CHECK(r->label_keys_mapping == koord::kube::Labels{{"from", "to"}});
  CHECK(r->annotation_keys_mapping == koord::kube::Labels{{"af", "at"}});
  CHECK(r->label_suffixes == koord::kube::Labels{{"app", "-s"}});
  CHECK(r->scheduler_name == "koord-scheduler");
  CHECK(r->patch == parse(R"({"spec": {"hostNetwork": false}})"));
}

TEST_CASE("absent and null fields are their zero values", "[apis][colocation_profile]") {
  auto r = decodeClusterColocationProfile(parse(R"({"metadata": {"name": "n"},
    "spec": {"selector": null, "probability": null, "qosClass": null, "patch": null}})"));
  REQUIRE(r.has_value());
  CHECK_FALSE(r->namespace_selector.has_value());
  CHECK_FALSE(r->selector.has_value());
  CHECK_FALSE(r->probability_percent.has_value());
  CHECK(r->qos_class.empty());
  CHECK(r->patch.is_null());
  CHECK_FALSE(r->skip_update_resources);
  auto bare = decodeClusterColocationProfile(parse("{}"));
  REQUIRE(bare.has_value());
  CHECK(bare->name.empty());
  // An empty selector is present: it matches everything.
  auto empty = decodeClusterColocationProfile(parse(R"({"spec": {"selector": {}}})"));
  REQUIRE(empty.has_value());
  CHECK(empty->selector == koord::kube::LabelSelector{});
}

TEST_CASE("probability is an integer or a percentage string", "[apis][colocation_profile]") {
  auto percent = [](std::string_view p) {
    auto r = decodeClusterColocationProfile(
        parse(std::string(R"({"spec": {"probability": )") + std::string(p) + "}}"));
    REQUIRE(r.has_value());
    return *r->probability_percent;
  };
  CHECK(percent("50") == 50);
  CHECK(percent("\"50%\"") == 50);
  CHECK(percent("\"+7%\"") == 7);
  CHECK(percent("\"-1%\"") == -1);
  CHECK(percent("\"150%\"") == 150);
  CHECK(errorOf(R"({"spec": {"probability": "50"}})") ==
        "spec.probability: invalid value \"50\": a string must be a percentage such as \"50%\"");
  CHECK(errorOf(R"({"spec": {"probability": "x%"}})") ==
        "spec.probability: invalid value \"x%\": not an integer percentage");
  CHECK(errorOf(R"({"spec": {"probability": "%"}})") ==
        "spec.probability: invalid value \"%\": not an integer percentage");
  CHECK(errorOf(R"({"spec": {"probability": 0.5}})") ==
        "spec.probability: expected integer, got number");
  CHECK(errorOf(R"({"spec": {"probability": 3000000000}})") ==
        "spec.probability: 3000000000 overflows int32");
}

TEST_CASE("malformed profiles name the field", "[apis][colocation_profile]") {
  CHECK(errorOf("[]") == "ClusterColocationProfile: expected object, got array");
  CHECK(errorOf(R"({"metadata": 1})") == "metadata: expected object, got number");
  CHECK(errorOf(R"({"metadata": {"name": 1}})") == "metadata.name: expected string, got number");
  CHECK(errorOf(R"({"spec": []})") == "spec: expected object, got array");
  CHECK(errorOf(R"({"spec": {"qosClass": "Gold"}})") ==
        "spec.qosClass: unsupported value \"Gold\": supported values: \"BE\", \"LS\", \"LSE\", "
        "\"LSR\", \"SYSTEM\"");
  CHECK(errorOf(R"({"spec": {"koordinatorPriority": "high"}})") ==
        "spec.koordinatorPriority: expected integer, got string");
  CHECK(errorOf(R"({"spec": {"labels": {"a": 1}}})") ==
        "spec.labels[a]: expected string, got number");
  CHECK(errorOf(R"({"spec": {"labelSuffixes": []}})") ==
        "spec.labelSuffixes: expected object, got array");
  CHECK(errorOf(R"({"spec": {"patch": "x"}})") == "spec.patch: expected object, got string");
  CHECK(errorOf(R"({"spec": {"schedulerName": false}})") ==
        "spec.schedulerName: expected string, got boolean");
  CHECK_THAT(errorOf(R"({"spec": {"selector": {"matchExpressions": [
    {"key": "a", "operator": "Near"}]}}})"),
             Catch::StartsWith("spec.selector.matchExpressions[0].operator"));
  CHECK_THAT(errorOf(R"({"spec": {"namespaceSelector": {"matchLabels": {"bad key!": "v"}}}})"),
             Catch::StartsWith("spec.namespaceSelector: "));
  CHECK_THAT(errorOf(R"({"spec": {"selector": {"matchExpressions": [
    {"key": "a", "operator": "In"}]}}})"),
             Catch::StartsWith("spec.selector: "));
}
