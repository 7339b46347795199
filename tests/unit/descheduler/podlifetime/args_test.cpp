// PodLifeTimeArgs: the required limit, every member read, strict refusals naming the field.
#include "plugins/podlifetime/args.h"

#include <boost/json.hpp>

#include <catch2/catch.hpp>

#include <string>

#include "args_checks.h"

namespace koord::roles::descheduler::podlifetime {
namespace {

const auto decode = testkit::textDecoder(decodePodLifeTimeArgs);

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
  testkit::checkNoArgsRefused(decodePodLifeTimeArgs, "maxPodLifeTimeSeconds");
  const testkit::Refusal cases[] = {
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
  testkit::checkRefusals(decodePodLifeTimeArgs, cases);
}

}  // namespace
}  // namespace koord::roles::descheduler::podlifetime
