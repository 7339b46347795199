// RemovePodsHavingTooManyRestartsArgs: every member read, upstream's validation, strict refusals.
#include "plugins/removepodshavingtoomanyrestarts/args.h"

#include <boost/json.hpp>

#include <catch2/catch.hpp>

#include <string>

#include "args_checks.h"

namespace koord::roles::descheduler::toomanyrestarts {
namespace {

const auto decode = testkit::textDecoder(decodeTooManyRestartsArgs);

TEST_CASE("RemovePodsHavingTooManyRestartsArgs: every member is read", "[descheduler]") {
  auto a = decode(R"({
    "podRestartThreshold": 5,
    "includingInitContainers": true,
    "states": ["Running", "CrashLoopBackOff"],
    "namespaces": {"exclude": ["kube-system"]},
    "labelSelector": {"matchLabels": {"app": "web"}}
  })");
  REQUIRE(a.has_value());
  CHECK(a->pod_restart_threshold == 5);
  CHECK(a->including_init_containers);
  CHECK(a->states == std::vector<std::string>{"Running", "CrashLoopBackOff"});
  REQUIRE(a->common.namespaces);
  CHECK(a->common.namespaces->exclude == std::vector<std::string>{"kube-system"});
  REQUIRE(a->common.label_selector);
  CHECK(a->common.label_selector->match_labels.at("app") == "web");

  auto minimal = decode(R"({"podRestartThreshold": 1})");
  REQUIRE(minimal.has_value());
  CHECK_FALSE(minimal->including_init_containers);
  CHECK(minimal->states.empty());
  CHECK_FALSE(minimal->common.namespaces);
  CHECK_FALSE(minimal->common.label_selector);
}

TEST_CASE("RemovePodsHavingTooManyRestartsArgs: the threshold has no default", "[descheduler]") {
  testkit::checkNoArgsRefused(decodeTooManyRestartsArgs, "podRestartThreshold");
}

TEST_CASE("RemovePodsHavingTooManyRestartsArgs: refusals name the field", "[descheduler]") {
  const testkit::Refusal cases[] = {
      {R"({})", "podRestartThreshold"},
      {R"({"podRestartThreshold": 0})", "podRestartThreshold"},
      {R"({"podRestartThreshold": -3})", "podRestartThreshold"},
      {R"({"podRestartThreshold": "5"})", "podRestartThreshold"},
      {R"({"podRestartThreshold": 5, "restartThreshold": 5})", "restartThreshold"},
      {R"({"podRestartThreshold": 5, "includingInitContainers": "yes"})",
       "includingInitContainers"},
      {R"({"podRestartThreshold": 5, "states": ["Pending"]})", "states[0]"},
      {R"({"podRestartThreshold": 5, "states": "Running"})", "states"},
      {R"({"podRestartThreshold": 5, "namespaces": {"include": ["a"], "exclude": ["b"]}})",
       "namespaces"},
      {R"({"podRestartThreshold": 5, "labelSelector": {"matchLabels": {"a b": "c"}}})",
       "labelSelector"},
  };
  testkit::checkRefusals(decodeTooManyRestartsArgs, cases);
}

}  // namespace
}  // namespace koord::roles::descheduler::toomanyrestarts
