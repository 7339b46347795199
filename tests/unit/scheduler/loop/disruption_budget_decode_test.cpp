// The PodDisruptionBudget projection preemption reads: selector, allowance and disrupted pods,
// and refusals that name the bad field.
#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <string>

#include "scheduler_informers.h"

namespace koord::roles::scheduler {
namespace {

kube::Labels labels(std::string key, std::string value) {
  kube::Labels l;
  l.emplace(std::move(key), std::move(value));
  return l;
}

TEST_CASE("PDB decode: selector, disruptionsAllowed and disruptedPods", "[scheduler][loop]") {
  auto pdb = decodeDisruptionBudget(boost::json::parse(R"({
    "metadata": {"namespace": "shop", "name": "web"},
    "spec": {"selector": {"matchLabels": {"app": "web"}}},
    "status": {"disruptionsAllowed": 2,
               "disruptedPods": {"web-1": "2026-11-22T10:00:00Z"}}})"));
  REQUIRE(pdb.has_value());
  CHECK(pdb->namespace_ == "shop");
  CHECK(pdb->name == "web");
  CHECK(pdb->disruptions_allowed == 2);
  REQUIRE(pdb->disrupted_pods.size() == 1);
  CHECK(pdb->disrupted_pods[0] == "web-1");
  CHECK(pdb->selector.matches(labels("app", "web")));
  CHECK_FALSE(pdb->selector.matches(labels("app", "db")));
}

TEST_CASE("PDB decode: a nil selector matches no pod and an empty one every pod",
          "[scheduler][loop]") {
  auto nil = decodeDisruptionBudget(boost::json::parse(R"({"spec": {}})"));
  REQUIRE(nil.has_value());
  CHECK_FALSE(nil->selector.matches(labels("app", "web")));
  auto empty = decodeDisruptionBudget(boost::json::parse(R"({"spec": {"selector": {}}})"));
  REQUIRE(empty.has_value());
  CHECK(empty->selector.matches(labels("app", "web")));
}

TEST_CASE("PDB decode: mistyped fields are refused by name", "[scheduler][loop]") {
  struct Case {
    const char* json;
    const char* path;
  };
  for (const auto& c :
       {Case{R"({"metadata": []})", "metadata"},
        Case{R"({"metadata": {"name": 1}})", "metadata.name"}, Case{R"({"spec": "x"})", "spec"},
        Case{R"({"status": {"disruptionsAllowed": "2"}})", "status.disruptionsAllowed"},
        Case{R"({"status": {"disruptedPods": []}})", "status.disruptedPods"}}) {
    INFO(c.json);
    auto r = decodeDisruptionBudget(boost::json::parse(c.json));
    REQUIRE_FALSE(r.has_value());
    CHECK_THAT(r.error().message, Catch::StartsWith(c.path));
  }
}

}  // namespace
}  // namespace koord::roles::scheduler
