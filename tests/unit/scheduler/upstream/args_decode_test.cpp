#include <catch2/catch.hpp>

#include <functional>

#include "fixtures.h"
#include "plugins/upstream/args_decode.h"
#include "plugins/upstream/nodeaffinity/node_affinity.h"
#include "plugins/upstream/noderesources/balanced_allocation.h"
#include "plugins/upstream/noderesources/fit.h"
#include "plugins/upstream/noderesources/least_allocated.h"
#include "plugins/upstream/noderesources/most_allocated.h"

namespace koord::roles::scheduler::upstream {
namespace {

using namespace testing;

constexpr std::string_view kV1beta1 = "kubescheduler.config.k8s.io/v1beta1";
constexpr std::string_view kV1beta2 = "kubescheduler.config.k8s.io/v1beta2";

using Decoder = std::function<kube::Expected<void>(const boost::json::value*, std::string_view)>;

template <typename Fn>
Decoder wrap(Fn fn) {
  return [fn](const boost::json::value* v, std::string_view version) -> kube::Expected<void> {
    auto r = fn(v, version);
    if (!r)
      return r.error();
    return {};
  };
}

TEST_CASE("upstream plugin args decode errors name the field", "[scheduler][upstream]") {
  const Decoder fit = wrap(decodeNodeResourcesFitArgs);
  const Decoder least = wrap(decodeNodeResourcesLeastAllocatedArgs);
  const Decoder most = wrap(decodeNodeResourcesMostAllocatedArgs);
  const Decoder balanced = wrap(decodeNodeResourcesBalancedAllocationArgs);
  const Decoder affinity = wrap(decodeNodeAffinityArgs);
  const Decoder none =
      wrap([](const boost::json::value* v, std::string_view) { return refuseArgs(v, "NodeName"); });
  struct Case {
    std::string name;
    Decoder decode;
    std::string_view version;
    std::string json;
    std::string error;  // the whole message
  };
  const std::vector<Case> cases = {
      {"args must be an object", fit, kV1beta2, "[1]", "args: expected object, got array"},
      {"Fit: unknown field", fit, kV1beta2, R"({"foo":1})", "foo: unknown field"},
      {"Fit: scoringStrategy is unknown under v1beta1", fit, kV1beta1,
       R"({"scoringStrategy":{"type":"LeastAllocated"}})", "scoringStrategy: unknown field"},
      {"Fit: ignoredResources must be a list", fit, kV1beta2, R"({"ignoredResources":"x"})",
       "ignoredResources: expected array, got string"},
      {"Fit: ignoredResources entries are strings", fit, kV1beta2,
       R"({"ignoredResources":["a",2]})", "ignoredResources[1]: expected string, got number"},
      {"Fit: an ignored resource group can't contain '/'", fit, kV1beta2,
       R"({"ignoredResourceGroups":["example.com/aaa"]})",
       "ignoredResourceGroups[0]: Invalid value: \"example.com/aaa\": resource group name "
       "can't contain '/'"},
      {"Fit: scoringStrategy must be an object", fit, kV1beta2, R"({"scoringStrategy":[]})",
       "scoringStrategy: expected object, got array"},
      {"Fit: unknown scoringStrategy field", fit, kV1beta2,
       R"({"scoringStrategy":{"type":"LeastAllocated","shape":[]}})",
       "scoringStrategy.shape: unknown field"},
      {"Fit: unknown scoringStrategy type", fit, kV1beta2,
       R"({"scoringStrategy":{"type":"Random"}})",
       "scoringStrategy.type: Unsupported value: \"Random\": supported values: "
       "\"LeastAllocated\", \"MostAllocated\", \"RequestedToCapacityRatio\""},
      {"Fit: scoringStrategy without a type", fit, kV1beta2, R"({"scoringStrategy":{}})",
       "scoringStrategy.type: Unsupported value: \"\": supported values: \"LeastAllocated\", "
       "\"MostAllocated\", \"RequestedToCapacityRatio\""},
      {"Fit: resource weight above 100", fit, kV1beta2,
       R"({"scoringStrategy":{"type":"LeastAllocated","resources":[{"name":"cpu","weight":101}]}})",
       "scoringStrategy.resources[0].weight: Invalid value: 101: resource weight of cpu not in "
       "valid range (0, 100]"},
      {"Fit: negative resource weight", fit, kV1beta2,
       R"({"scoringStrategy":{"type":"MostAllocated","resources":[
           {"name":"memory","weight":1},{"name":"cpu","weight":-1}]}})",
       "scoringStrategy.resources[1].weight: Invalid value: -1: resource weight of cpu not in "
       "valid range (0, 100]"},
      {"Fit: a weight must be an integer", fit, kV1beta2,
       R"({"scoringStrategy":{"type":"LeastAllocated","resources":[{"name":"cpu","weight":1.5}]}})",
       "scoringStrategy.resources[0].weight: expected integer, got number"},
      {"Fit: unknown field in a resource", fit, kV1beta2,
       R"({"scoringStrategy":{"type":"LeastAllocated","resources":[{"name":"cpu","w":1}]}})",
       "scoringStrategy.resources[0].w: unknown field"},
      {"Fit: a resource needs a name", fit, kV1beta2,
       R"({"scoringStrategy":{"type":"LeastAllocated","resources":[{"weight":1}]}})",
       "scoringStrategy.resources[0].name: Required value"},
      {"Fit: duplicate resource", fit, kV1beta2,
       R"({"scoringStrategy":{"type":"LeastAllocated","resources":[{"name":"cpu"},{"name":"cpu"}]}})",
       "scoringStrategy.resources[1].name: Duplicate value: \"cpu\""},
      {"Fit: RequestedToCapacityRatio needs its shape", fit, kV1beta2,
       R"({"scoringStrategy":{"type":"RequestedToCapacityRatio"}})",
       "scoringStrategy.requestedToCapacityRatio: Required value: required when type is "
       "RequestedToCapacityRatio"},
      {"Fit: an empty shape", fit, kV1beta2,
       R"({"scoringStrategy":{"type":"RequestedToCapacityRatio","requestedToCapacityRatio":{"shape":[]}}})",
       "scoringStrategy.requestedToCapacityRatio.shape: Required value: at least one point must "
       "be specified"},
      {"Fit: shape utilization not increasing", fit, kV1beta2,
       R"({"scoringStrategy":{"type":"RequestedToCapacityRatio","requestedToCapacityRatio":{"shape":[
           {"utilization":50,"score":1},{"utilization":50,"score":2}]}}})",
       "scoringStrategy.requestedToCapacityRatio.shape[1].utilization: Invalid value: 50: "
       "utilization values must be sorted in increasing order"},
      {"Fit: shape score above 10", fit, kV1beta2,
       R"({"scoringStrategy":{"type":"RequestedToCapacityRatio","requestedToCapacityRatio":{"shape":[
           {"utilization":0,"score":11}]}}})",
       "scoringStrategy.requestedToCapacityRatio.shape[0].score: Invalid value: 11: not in valid "
       "range [0, 10]"},
      {"Fit: shape utilization above 100", fit, kV1beta2,
       R"({"scoringStrategy":{"type":"RequestedToCapacityRatio","requestedToCapacityRatio":{"shape":[
           {"utilization":101,"score":1}]}}})",
       "scoringStrategy.requestedToCapacityRatio.shape[0].utilization: Invalid value: 101: not "
       "in valid range [0, 100]"},
      {"Fit: unknown field in a shape point", fit, kV1beta2,
       R"({"scoringStrategy":{"type":"RequestedToCapacityRatio","requestedToCapacityRatio":{"shape":[
           {"utilization":1,"scor":1}]}}})",
       "scoringStrategy.requestedToCapacityRatio.shape[0].scor: unknown field"},
      {"LeastAllocated: unknown field", least, kV1beta1, R"({"resource":[]})",
       "resource: unknown field"},
      {"LeastAllocated: zero weight is not defaulted in v1beta1", least, kV1beta1,
       R"({"resources":[{"name":"cpu","weight":0}]})",
       "resources[0].weight: resource cpu weight 0 must be positive"},
      {"MostAllocated: weight above 100", most, kV1beta1,
       R"({"resources":[{"name":"memory","weight":1},{"name":"cpu","weight":101}]})",
       "resources[1].weight: resource cpu weight 101 must not exceed 100"},
      {"BalancedAllocation takes no args in v1beta1", balanced, kV1beta1,
       R"({"resources":[{"name":"cpu"}]})",
       "resources: unknown field (plugin NodeResourcesBalancedAllocation takes no args)"},
      {"BalancedAllocation: every weight must be 1", balanced, kV1beta2,
       R"({"resources":[{"name":"cpu","weight":2}]})",
       "resources[0].weight: Invalid value: 2: must be 1"},
      {"BalancedAllocation: unknown field", balanced, kV1beta2, R"({"resources":[],"x":1})",
       "x: unknown field"},
      {"NodeAffinity: unknown field", affinity, kV1beta2, R"({"affinity":{}})",
       "affinity: unknown field"},
      {"NodeAffinity: unknown field inside addedAffinity", affinity, kV1beta2,
       R"({"addedAffinity":{"required":{}}})", "addedAffinity.required: unknown field"},
      {"NodeAffinity: unknown field deep in a requirement", affinity, kV1beta2,
       R"({"addedAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[
           {"matchExpressions":[{"key":"a","operator":"In","values":["b"],"value":"c"}]}]}}})",
       "addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]."
       "matchExpressions[0].value: unknown field"},
      {"NodeAffinity: unknown operator", affinity, kV1beta2,
       R"({"addedAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[
           {"matchExpressions":[{"key":"a","operator":"Within","values":["b"]}]}]}}})",
       "addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]."
       "matchExpressions[0].operator: unsupported value \"Within\": supported values: "
       "\"DoesNotExist\", \"Exists\", \"Gt\", \"In\", \"Lt\", \"NotIn\""},
      {"NodeAffinity: matchFields may only name metadata.name", affinity, kV1beta2,
       R"({"addedAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[
           {"matchFields":[{"key":"metadata.namespace","operator":"In","values":["b"]}]}]}}})",
       "addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]."
       "matchFields[0].key: Invalid value: \"metadata.namespace\": not a valid field selector "
       "key"},
      {"NodeAffinity: preferred weight out of range", affinity, kV1beta2,
       R"({"addedAffinity":{"preferredDuringSchedulingIgnoredDuringExecution":[
           {"weight":0,"preference":{"matchExpressions":[{"key":"a","operator":"Exists"}]}}]}})",
       "addedAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight: Invalid value: "
       "0: must be in the range 1-100"},
      {"a plugin without args refuses any field", none, kV1beta2, R"({"x":1})",
       "x: unknown field (plugin NodeName takes no args)"},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    const auto v = parseJson(c.json);
    const auto got = c.decode(&v, c.version);
    REQUIRE_FALSE(got.has_value());
    CHECK(got.error().message == c.error);
  }
}

TEST_CASE("NodeAffinity rejects an invalid addedAffinity requirement", "[scheduler][upstream]") {
  // In without values is not a selector clause: an error at startup, not a term that quietly
  // matches nothing.
  const auto v = parseJson(R"({"addedAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":
      {"nodeSelectorTerms":[{"matchExpressions":[{"key":"a","operator":"In"}]}]}}})");
  const auto got = decodeNodeAffinityArgs(&v, kV1beta2);
  REQUIRE_FALSE(got.has_value());
  CHECK_THAT(got.error().message,
             Catch::StartsWith("addedAffinity.requiredDuringSchedulingIgnoredDuringExecution."
                               "nodeSelectorTerms[0].matchExpressions: "));
}

TEST_CASE("upstream plugin args decode defaults", "[scheduler][upstream]") {
  SECTION("absent, null and {} are all the defaults") {
    const auto null_value = parseJson("null");
    const auto empty = parseJson("{}");
    for (const boost::json::value* v :
         {static_cast<const boost::json::value*>(nullptr), &null_value, &empty}) {
      auto least = decodeNodeResourcesLeastAllocatedArgs(v, kV1beta1);
      REQUIRE(least.has_value());
      CHECK((*least)->resources == defaultResourceSpecs());
      auto fit = decodeNodeResourcesFitArgs(v, kV1beta2);
      REQUIRE(fit.has_value());
      CHECK((*fit)->ignored_resources.empty());
      REQUIRE((*fit)->scoring_strategy);
      CHECK((*fit)->scoring_strategy->resources == defaultResourceSpecs());
      auto balanced = decodeNodeResourcesBalancedAllocationArgs(v, kV1beta2);
      REQUIRE(balanced.has_value());
      CHECK((*balanced)->resources.empty());
      auto affinity = decodeNodeAffinityArgs(v, kV1beta2);
      REQUIRE(affinity.has_value());
      CHECK_FALSE((*affinity)->added_affinity);
      CHECK(refuseArgs(v, "NodePorts").has_value());
    }
  }
  SECTION("Fit: a zero or absent weight defaults to 1, given weights stay") {
    const auto v = parseJson(R"({"ignoredResources":["example.com/aaa"],
        "ignoredResourceGroups":["example.com"],
        "scoringStrategy":{"type":"MostAllocated","resources":[
          {"name":"cpu"},{"name":"kubernetes.io/batch-cpu","weight":3},{"name":"memory","weight":0}]}})");
    auto fit = decodeNodeResourcesFitArgs(&v, kV1beta2);
    REQUIRE(fit.has_value());
    CHECK((*fit)->ignored_resources == std::vector<std::string>{"example.com/aaa"});
    CHECK((*fit)->ignored_resource_groups == std::vector<std::string>{"example.com"});
    REQUIRE((*fit)->scoring_strategy);
    CHECK((*fit)->scoring_strategy->type == ScoringStrategyType::kMostAllocated);
    CHECK((*fit)->scoring_strategy->resources ==
          std::vector<ResourceSpec>{{"cpu", 1}, {"kubernetes.io/batch-cpu", 3}, {"memory", 1}});
  }
  SECTION("Fit: an empty resource list is the default list") {
    const auto v = parseJson(R"({"scoringStrategy":{"type":"LeastAllocated","resources":[]}})");
    auto fit = decodeNodeResourcesFitArgs(&v, kV1beta2);
    REQUIRE(fit.has_value());
    CHECK((*fit)->scoring_strategy->resources == defaultResourceSpecs());
  }
  SECTION("Fit: the shape's scores are scaled to node scores") {
    const auto v = parseJson(R"({"scoringStrategy":{"type":"RequestedToCapacityRatio",
        "requestedToCapacityRatio":{"shape":[{"utilization":0,"score":0},{"utilization":80,"score":7}]}}})");
    auto fit = decodeNodeResourcesFitArgs(&v, kV1beta2);
    REQUIRE(fit.has_value());
    CHECK((*fit)->scoring_strategy->shape == std::vector<UtilizationShapePoint>{{0, 0}, {80, 70}});
  }
  SECTION("Fit under v1beta1 keeps its ignored resources and no strategy") {
    const auto v = parseJson(R"({"ignoredResources":["example.com/aaa"]})");
    auto fit = decodeNodeResourcesFitArgs(&v, kV1beta1);
    REQUIRE(fit.has_value());
    CHECK((*fit)->ignored_resources == std::vector<std::string>{"example.com/aaa"});
    CHECK_FALSE((*fit)->scoring_strategy);
  }
  SECTION("LeastAllocated keeps the configured resources") {
    const auto v =
        parseJson(R"({"resources":[{"name":"memory","weight":2},{"name":"cpu","weight":1}]})");
    auto least = decodeNodeResourcesLeastAllocatedArgs(&v, kV1beta1);
    REQUIRE(least.has_value());
    CHECK((*least)->resources == std::vector<ResourceSpec>{{"memory", 2}, {"cpu", 1}});
  }
  SECTION("BalancedAllocation: a zero weight defaults to 1") {
    const auto v = parseJson(R"({"resources":[{"name":"cpu"},{"name":"memory","weight":0}]})");
    auto balanced = decodeNodeResourcesBalancedAllocationArgs(&v, kV1beta2);
    REQUIRE(balanced.has_value());
    CHECK((*balanced)->resources == std::vector<ResourceSpec>{{"cpu", 1}, {"memory", 1}});
  }
  SECTION("NodeAffinity keeps the added affinity") {
    const auto v = parseJson(R"({"addedAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":
        {"nodeSelectorTerms":[{"matchExpressions":[{"key":"zone","operator":"In","values":["a"]}]}]}}})");
    auto affinity = decodeNodeAffinityArgs(&v, kV1beta2);
    REQUIRE(affinity.has_value());
    REQUIRE((*affinity)->added_affinity);
    REQUIRE((*affinity)->added_affinity->required);
    CHECK((*affinity)->added_affinity->required->node_selector_terms.size() == 1);
  }
}

TEST_CASE("config versions: only v1beta1 and older get the 1.20 args shapes",
          "[scheduler][upstream]") {
  CHECK(isV1beta1OrOlder("kubescheduler.config.k8s.io/v1beta1"));
  CHECK(isV1beta1OrOlder("kubescheduler.config.k8s.io/v1alpha2"));
  CHECK_FALSE(isV1beta1OrOlder("kubescheduler.config.k8s.io/v1beta2"));
  CHECK_FALSE(isV1beta1OrOlder("kubescheduler.config.k8s.io/v1beta3"));
  CHECK_FALSE(isV1beta1OrOlder("kubescheduler.config.k8s.io/v1"));
  CHECK_FALSE(isV1beta1OrOlder(""));
}

}  // namespace
}  // namespace koord::roles::scheduler::upstream
