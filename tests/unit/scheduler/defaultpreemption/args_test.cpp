// DefaultPreemptionArgs: defaults, strict fields and kube-scheduler's validation, errors naming
// the field; and the registry's decode_args/create.
#include <boost/json.hpp>

#include <catch2/catch.hpp>

#include "catch_expected.h"
#include "fixture.h"
#include "plugins/upstream/defaultpreemption/args.h"

namespace koord::roles::scheduler::upstream::dptest {
namespace {

kube::Expected<std::shared_ptr<const DefaultPreemptionArgs>> decode(std::string_view text) {
  const boost::json::value v = boost::json::parse(text);
  return decodeDefaultPreemptionArgs(&v);
}

TEST_CASE("DefaultPreemptionArgs: defaults 10 percent and 100 nodes") {
  auto absent = decodeDefaultPreemptionArgs(nullptr);
  REQUIRE(absent);
  CHECK((*absent)->min_candidate_nodes_percentage == 10);
  CHECK((*absent)->min_candidate_nodes_absolute == 100);
  for (const auto* text : {"null", "{}"}) {
    auto d = decode(text);
    REQUIRE(d);
    CHECK((*d)->min_candidate_nodes_percentage == 10);
    CHECK((*d)->min_candidate_nodes_absolute == 100);
  }
  auto one = decode(R"({"minCandidateNodesPercentage": 40})");
  REQUIRE(one);
  CHECK((*one)->min_candidate_nodes_percentage == 40);
  CHECK((*one)->min_candidate_nodes_absolute == 100);
  auto both = decode(R"({"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 2})");
  REQUIRE(both);
  CHECK((*both)->min_candidate_nodes_percentage == 0);
  CHECK((*both)->min_candidate_nodes_absolute == 2);
  auto edge = decode(R"({"minCandidateNodesPercentage": 100, "minCandidateNodesAbsolute": 0})");
  REQUIRE(edge);
  CHECK((*edge)->min_candidate_nodes_percentage == 100);
  CHECK((*edge)->min_candidate_nodes_absolute == 0);
}

struct BadArgs {
  std::string name;
  std::string json;
  std::string error;
};

TEST_CASE("DefaultPreemptionArgs: errors name the field") {
  const std::vector<BadArgs> table = {
      {"unknown field", R"({"minCandidateNodes": 1})", "minCandidateNodes: unknown field"},
      {"not an object", R"([1])", "args: expected object, got array"},
      {"percentage not an integer", R"({"minCandidateNodesPercentage": "10"})",
       "minCandidateNodesPercentage: expected integer, got string"},
      {"absolute a float", R"({"minCandidateNodesAbsolute": 1.5})",
       "minCandidateNodesAbsolute: expected integer, got number"},
      {"percentage above 100", R"({"minCandidateNodesPercentage": 101})",
       "minCandidateNodesPercentage: Invalid value: 101: not in valid range [0, 100]"},
      {"percentage negative", R"({"minCandidateNodesPercentage": -1})",
       "minCandidateNodesPercentage: Invalid value: -1: not in valid range [0, 100]"},
      {"absolute negative", R"({"minCandidateNodesAbsolute": -1})",
       "minCandidateNodesAbsolute: Invalid value: -1: not in valid range [0, inf)"},
      {"absolute beyond int32", R"({"minCandidateNodesAbsolute": 2147483648})",
       "minCandidateNodesAbsolute: 2147483648 overflows int32"},
      {"both zero", R"({"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 0})",
       "minCandidateNodesPercentage: Invalid value: 0: both minCandidateNodesPercentage and "
       "minCandidateNodesAbsolute cannot be zero"},
  };
  for (const auto& tc : table) {
    SECTION(tc.name) {
      auto d = decode(tc.json);
      REQUIRE_FALSE(d);
      CHECK(d.error().message == tc.error);
    }
  }
}

TEST_CASE("DefaultPreemption in the registry: args decoded and a PostFilter plugin built") {
  PluginRegistry registry;
  registerDefaultPreemption(registry);
  const PluginFactory* f = registry.find("DefaultPreemption");
  REQUIRE(f != nullptr);
  const boost::json::value v = boost::json::parse(R"({"minCandidateNodesAbsolute": 7})");
  for (const auto* version :
       {"kubescheduler.config.k8s.io/v1beta1", "kubescheduler.config.k8s.io/v1"}) {
    auto args = f->decode_args(&v, version);
    REQUIRE(args);
    const auto* typed = dynamic_cast<const DefaultPreemptionArgs*>(args->get());
    REQUIRE(typed != nullptr);
    CHECK(typed->min_candidate_nodes_absolute == 7);
  }
  const boost::json::value bad = boost::json::parse(R"({"minCandidateNodesPercentage": 200})");
  auto refused = f->decode_args(&bad, "kubescheduler.config.k8s.io/v1");
  REQUIRE_FALSE(refused);
  CHECK_THAT(refused.error().message, Catch::Matchers::StartsWith("minCandidateNodesPercentage"));

  Harness h;
  auto built = f->create(*f->decode_args(nullptr, ""), *h.fw);
  REQUIRE(built);
  auto* pf = dynamic_cast<PostFilterPlugin*>(built->get());
  REQUIRE(pf != nullptr);
  CHECK(pf->name() == "DefaultPreemption");

  struct OtherArgs final : PluginArgs {};
  auto wrong = f->create(std::make_shared<const OtherArgs>(), *h.fw);
  REQUIRE_FALSE(wrong);
  CHECK(wrong.error().message == "DefaultPreemption: args are not DefaultPreemptionArgs");
}

}  // namespace
}  // namespace koord::roles::scheduler::upstream::dptest
