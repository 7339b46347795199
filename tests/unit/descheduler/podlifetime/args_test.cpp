// PodLifeTimeArgs: the required limit, every member read, strict refusals naming the field.
#include "plugins/podlifetime/args.h"

#include <boost/json.hpp>

#include <catch2/catch.hpp>

#include <string>

namespace koord::roles::descheduler::podlifetime {
namespace {

Expected<PodLifeTimeArgs> decode(std::string_view text) {
  const boost::json::value v = boost::json::parse(text);
  return decodePodLifeTimeArgs(&v);
}

TEST_CASE("PodLifeTimeArgs: every member is read", "[descheduler]") {
  auto a = decode(R"({
    "maxPodLifeTimeSeconds": 86400,
    "states": ["Running", "Pending", "PodInitializing", "ContainerCreating"],
    "namespaces": {"exclude": ["kube-system"]},
    "labelSelector": {"matchLabels": {"app": "web"}}
  })");
  REQUIRE(a.has_value());
  CHECK(a->max_pod_lifetime_seconds == 86400);
  CHECK(a->states.size() == 4);
  REQUIRE(a->common.namespaces);
  CHECK(a->common.namespaces->exclude == std::vector<std::string>{"kube-system"});
  REQUIRE(a->common.label_selector);

  auto zero = decode(R"({"maxPodLifeTimeSeconds": 0})");
  REQUIRE(zero.has_value());
  CHECK(zero->max_pod_lifetime_seconds == 0);
  CHECK(zero->states.empty());
}

TEST_CASE("PodLifeTimeArgs: refusals name the field", "[descheduler]") {
  const boost::json::value null_value;
  for (const boost::json::value* v :
       {static_cast<const boost::json::value*>(nullptr), &null_value}) {
    auto a = decodePodLifeTimeArgs(v);
    REQUIRE_FALSE(a.has_value());
    CHECK_THAT(a.error().message, Catch::Contains("maxPodLifeTimeSeconds"));
  }
  struct Case {
    const char* json;
    const char* names;
  };
  const Case cases[] = {
      {R"({})", "maxPodLifeTimeSeconds"},
      {R"({"maxPodLifeTimeSeconds": null})", "maxPodLifeTimeSeconds"},
      {R"({"maxPodLifeTimeSeconds": -1})", "maxPodLifeTimeSeconds"},
      {R"({"maxPodLifeTimeSeconds": "1d"})", "maxPodLifeTimeSeconds"},
      {R"({"maxPodLifetimeSeconds": 60})", "maxPodLifetimeSeconds"},
      {R"({"maxPodLifeTimeSeconds": 60, "states": ["Running", "CrashLoopBackOff"]})", "states[1]"},
      {R"({"maxPodLifeTimeSeconds": 60, "states": [3]})", "states"},
      {R"({"maxPodLifeTimeSeconds": 60, "namespaces": {"include": ["a"], "exclude": ["b"]}})",
       "namespaces"},
      {R"({"maxPodLifeTimeSeconds": 60, "labelSelector": {"matchLabels": 1}})", "labelSelector"},
  };
  for (const auto& c : cases) {
    INFO(c.json);
    auto a = decode(c.json);
    REQUIRE_FALSE(a.has_value());
    CHECK_THAT(a.error().message, Catch::Contains(c.names));
  }
}

}  // namespace
}  // namespace koord::roles::descheduler::podlifetime
