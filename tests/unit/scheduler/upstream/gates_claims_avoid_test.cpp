#include <catch2/catch.hpp>

#include <boost/json.hpp>

#include "fixtures.h"
#include "plugins/upstream/dynamicresources/dynamic_resources.h"
#include "plugins/upstream/nodepreferavoidpods/node_prefer_avoid_pods.h"
#include "plugins/upstream/schedulinggates/scheduling_gates.h"

namespace koord::roles::scheduler::upstream {
namespace {

using namespace testing;

PodInfo decodedPod(std::string_view spec) {
  auto pod = decodePodInfo(boost::json::parse(
      std::string(R"({"metadata":{"name":"p","namespace":"default","uid":"u"},"spec":)") +
      std::string(spec) + "}"));
  REQUIRE(pod.has_value());
  return *pod;
}

TEST_CASE("SchedulingGates refuses a pod while any gate is left, naming them",
          "[scheduler][upstream]") {
  const SchedulingGates plugin;
  CHECK(plugin.preEnqueue(decodedPod(R"({"containers":[]})")).ok());
  const PodInfo gated =
      decodedPod(R"({"containers":[],"schedulingGates":[{"name":"a.io/x"},{"name":"b"}]})");
  CHECK(gated.scheduling_gates == std::vector<std::string>{"a.io/x", "b"});
  const Status s = plugin.preEnqueue(gated);
  CHECK(s.code() == Code::kUnschedulableAndUnresolvable);
  CHECK(s.reasons() == std::vector<std::string>{"waiting for scheduling gates: [a.io/x b]"});
}

TEST_CASE("pod decode: a scheduling gate without a string name is refused, naming the field",
          "[scheduler][upstream]") {
  auto pod = decodePodInfo(
      boost::json::parse(R"({"metadata":{"name":"p"},"spec":{"schedulingGates":[{"name":7}]}})"));
  REQUIRE_FALSE(pod.has_value());
  CHECK_THAT(pod.error().message, Catch::Matchers::Contains("spec.schedulingGates[0].name"));
}

TEST_CASE("DynamicResources skips pods without claims and refuses pods with them",
          "[scheduler][upstream]") {
  DynamicResources plugin;
  CycleState state;
  CHECK(plugin.preFilter(state, decodedPod(R"({"containers":[]})")).isSkip());
  const PodInfo claims =
      decodedPod(R"({"containers":[],"resourceClaims":[{"name":"gpu","resourceClaimName":"c"}]})");
  CHECK(claims.resource_claims == 1);
  const Status s = plugin.preFilter(state, claims);
  CHECK(s.code() == Code::kUnschedulableAndUnresolvable);
  CHECK_THAT(s.message(), Catch::Matchers::Contains("does not allocate dynamic resources"));
}

TEST_CASE("NodePreferAvoidPods scores 0 on nodes that avoid the pod's controller",
          "[scheduler][upstream]") {
  const std::string avoid_rc = R"({"preferAvoidPods":[{"podSignature":{"podController":{
      "apiVersion":"v1","kind":"ReplicationController","name":"foo","uid":"abcdef123456",
      "controller":true}},"reason":"some reason","message":"some message"}]})";
  const std::string avoid_rs = R"({"preferAvoidPods":[{"podSignature":{"podController":{
      "apiVersion":"v1","kind":"ReplicaSet","name":"foo","uid":"qwert12345","controller":true}},
      "reason":"some reason","message":"some message"}]})";
  auto node = [](std::string name, std::string annotation) {
    auto n = makeNode(std::move(name));
    if (!annotation.empty())
      n->avoid_pods = parsePreferAvoidPods(annotation);
    return makeNodeInfo(n);
  };
  const NodeInfo m1 = node("machine1", avoid_rc);
  const NodeInfo m2 = node("machine2", avoid_rs);
  const NodeInfo m3 = node("machine3", "");
  const NodeInfo bad = node("machine4", "{not json");
  struct Case {
    std::string name;
    std::string kind;
    std::string uid;
    std::vector<std::int64_t> want;  // machine1..4
  };
  const std::vector<Case> cases = {
      {"pod managed by ReplicationController should avoid a node, this node get lowest priority "
       "score",
       "ReplicationController",
       "abcdef123456",
       {0, 100, 100, 100}},
      {"ownership by random controller should be ignored",
       "RandomController",
       "abcdef123456",
       {100, 100, 100, 100}},
      {"pod without controller should be ignored", "", "", {100, 100, 100, 100}},
      {"pod managed by ReplicaSet should avoid a node, this node get lowest priority score",
       "ReplicaSet",
       "qwert12345",
       {100, 0, 100, 100}},
  };
  const NodePreferAvoidPods plugin;
  for (const auto& c : cases) {
    INFO(c.name);
    PodInfo pod;
    pod.controller_kind = c.kind;
    pod.controller_uid = c.uid;
    std::vector<std::int64_t> got;
    for (const NodeInfo* n : {&m1, &m2, &m3, &bad}) {
      std::int64_t score = -1;
      REQUIRE(plugin.score(CycleState{}, pod, *n, score).ok());
      got.push_back(score);
    }
    CHECK(got == c.want);
    // The framework leaves the plugin out only for pods it cannot score apart.
    CHECK(plugin.scoresEveryNodeAlike(pod) ==
          (c.kind != "ReplicationController" && c.kind != "ReplicaSet"));
  }
}

TEST_CASE("node decode reads the preferAvoidPods annotation once", "[scheduler][upstream]") {
  // The annotation's value is itself JSON, in a JSON string.
  const std::string value =
      R"({"preferAvoidPods":[{"podSignature":{"podController":{"kind":"ReplicaSet","uid":"u1"}}},)"
      R"({"reason":"none"}]})";
  boost::json::object node_json = {
      {"metadata",
       {{"name", "n"},
        {"annotations",
         {{"scheduler.alpha.kubernetes.io/preferAvoidPods", value}, {"other", "x"}}}}}};
  auto node = decodeNode(boost::json::value(std::move(node_json)));
  REQUIRE(node.has_value());
  CHECK(node->avoid_pods == std::vector<AvoidedController>{{"ReplicaSet", "u1"}});
  // The parsed annotation is not kept, nor one no plugin reads.
  CHECK(node->annotations.empty());
}

TEST_CASE("parsePreferAvoidPods: malformed values avoid nothing; entries are bounded",
          "[scheduler][upstream]") {
  CHECK(parsePreferAvoidPods("").empty());
  CHECK(parsePreferAvoidPods("{not json").empty());
  CHECK(parsePreferAvoidPods("[]").empty());
  CHECK(parsePreferAvoidPods(R"({"preferAvoidPods":{}})").empty());
  CHECK(parsePreferAvoidPods(R"({"preferAvoidPods":[1,"x",{"podSignature":3}]})").empty());
  std::string many = R"({"preferAvoidPods":[)";
  for (std::size_t i = 0; i < kMaxAvoidedControllers + 5; ++i) {
    if (i != 0)
      many += ',';
    many += R"({"podSignature":{"podController":{"kind":"ReplicaSet","uid":"u"}}})";
  }
  many += "]}";
  CHECK(parsePreferAvoidPods(many).size() == kMaxAvoidedControllers);
}

}  // namespace
}  // namespace koord::roles::scheduler::upstream
