// The spreading informers' projections: namespace, name and selector of Services and RCs (maps)
// and of ReplicaSets and StatefulSets (label selectors); nil and empty select nothing; bad or
// oversized selectors are refused with the field named.
#include <boost/json.hpp>

#include <catch2/catch.hpp>

#include <string>

#include "catch_expected.h"
#include "fixtures.h"

namespace selectorspread_test {
namespace {

using koord::roles::scheduler::upstream::helper::decodeReplicaSetSelector;
using koord::roles::scheduler::upstream::helper::decodeReplicationControllerSelector;
using koord::roles::scheduler::upstream::helper::decodeServiceSelector;
using koord::roles::scheduler::upstream::helper::decodeStatefulSetSelector;
using koord::roles::scheduler::upstream::helper::kMaxSelectorTerms;

boost::json::value parse(std::string_view text) {
  return boost::json::parse(text);
}

TEST_CASE("map selectors decode as equalities", "[selectorspread][decode]") {
  for (auto decode : {decodeServiceSelector, decodeReplicationControllerSelector}) {
    auto got = decode(parse(
        R"({"metadata":{"namespace":"ns1","name":"web"},"spec":{"selector":{"app":"web","tier":"front"},"ports":[]}})"));
    REQUIRE(got);
    CHECK(got->namespace_ == "ns1");
    CHECK(got->name == "web");
    CHECK(got->key() == "ns1/web");
    CHECK(got->selector == sel("app=web,tier=front"));

    for (const char* text :
         {R"({"metadata":{"name":"x"},"spec":{}})",
          R"({"metadata":{"name":"x"},"spec":{"selector":null}})",
          R"({"metadata":{"name":"x"},"spec":{"selector":{}}})", R"({"metadata":{"name":"x"}})"}) {
      INFO(text);
      auto none = decode(parse(text));
      REQUIRE(none);
      CHECK(none->selector.matchesNothing());
    }
    auto bad = decode(parse(R"({"metadata":{"name":"x"},"spec":{"selector":{"app":1}}})"));
    REQUIRE_FALSE(bad);
    CHECK(bad.error().message == "spec.selector[app]: expected string, got number");
  }
}

TEST_CASE("label selectors decode as metav1.LabelSelectorAsSelector", "[selectorspread][decode]") {
  for (auto decode : {decodeReplicaSetSelector, decodeStatefulSetSelector}) {
    auto got = decode(parse(R"({"metadata":{"namespace":"default","name":"web-h1"},
      "spec":{"replicas":3,"selector":{"matchLabels":{"app":"web"},
      "matchExpressions":[{"key":"tier","operator":"In","values":["front","back"]},
                          {"key":"canary","operator":"DoesNotExist"}]}}})"));
    REQUIRE(got);
    CHECK(got->key() == "default/web-h1");
    CHECK(got->selector == sel("app=web,tier in (back,front),!canary"));

    for (const char* text : {R"({"metadata":{"name":"x"},"spec":{}})",
                             R"({"metadata":{"name":"x"},"spec":{"selector":null}})",
                             R"({"metadata":{"name":"x"},"spec":{"selector":{}}})"}) {
      INFO(text);
      auto none = decode(parse(text));
      REQUIRE(none);
      CHECK(none->selector.matchesNothing());
    }
    auto bad_op = decode(parse(R"({"metadata":{"name":"x"},"spec":{"selector":
      {"matchExpressions":[{"key":"a","operator":"Near"}]}}})"));
    REQUIRE_FALSE(bad_op);
    CHECK_THAT(bad_op.error().message,
               Catch::StartsWith("spec.selector.matchExpressions[0].operator: unsupported value"));
    auto bad_key = decode(parse(R"({"metadata":{"name":"x"},"spec":{"selector":
      {"matchLabels":{"not a key":"v"}}}})"));
    REQUIRE_FALSE(bad_key);
    CHECK_THAT(bad_key.error().message, Catch::StartsWith("spec.selector.matchLabels: "));
  }
}

TEST_CASE("oversized selectors are refused", "[selectorspread][decode]") {
  boost::json::object labels;
  for (std::size_t i = 0; i <= kMaxSelectorTerms; ++i)
    labels["k" + std::to_string(i)] = "v";
  boost::json::object map_obj{{"metadata", {{"name", "x"}}}, {"spec", {{"selector", labels}}}};
  auto map = decodeServiceSelector(map_obj);
  REQUIRE_FALSE(map);
  CHECK_THAT(map.error().message, Catch::StartsWith("spec.selector: 257 entries"));

  boost::json::array values;
  for (std::size_t i = 0; i < kMaxSelectorTerms; ++i)
    values.push_back(boost::json::value("v" + std::to_string(i)));
  boost::json::object expr{{"key", "a"}, {"operator", "In"}, {"values", values}};
  boost::json::object rs{
      {"metadata", {{"name", "x"}}},
      {"spec", {{"selector", {{"matchExpressions", boost::json::array{expr}}}}}}};
  auto big = decodeReplicaSetSelector(rs);
  REQUIRE_FALSE(big);
  CHECK_THAT(big.error().message, Catch::StartsWith("spec.selector: 257 terms"));
}

TEST_CASE("projections refuse what is not an object", "[selectorspread][decode]") {
  CHECK_FALSE(decodeServiceSelector(parse("[]")));
  CHECK_FALSE(decodeReplicaSetSelector(parse(R"({"metadata":{"name":"x"},"spec":[]})")));
}

}  // namespace
}  // namespace selectorspread_test
