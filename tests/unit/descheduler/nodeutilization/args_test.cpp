// LowNodeUtilizationArgs and HighNodeUtilizationArgs: filled defaults and upstream's refusals.
#include "plugins/nodeutilization/args.h"

#include <boost/json.hpp>

#include <catch2/catch.hpp>

#include "args_checks.h"

namespace koord::roles::descheduler::nodeutilization {
namespace {

boost::json::value parse(std::string_view text) {
  return boost::json::parse(text);
}

TEST_CASE("LowNodeUtilizationArgs: cpu, memory and pods are filled in", "[descheduler]") {
  const auto v = parse(R"({"thresholds": {"cpu": 20}, "targetThresholds": {"cpu": 70},
                           "numberOfNodes": 3, "evictableNamespaces": {"exclude": ["x"]}})");
  auto a = decodeLowNodeUtilizationArgs(&v);
  REQUIRE(a.has_value());
  CHECK(a->thresholds == Thresholds{{"cpu", 20}, {"memory", 100}, {"pods", 100}});
  CHECK(a->target_thresholds == Thresholds{{"cpu", 70}, {"memory", 100}, {"pods", 100}});
  CHECK(a->number_of_nodes == 3);
  REQUIRE(a->evictable_namespaces);
  CHECK(a->evictable_namespaces->exclude == std::vector<std::string>{"x"});

  const auto dev = parse(R"({"useDeviationThresholds": true, "thresholds": {"cpu": 10},
                             "targetThresholds": {"cpu": 10}})");
  auto d = decodeLowNodeUtilizationArgs(&dev);
  REQUIRE(d.has_value());
  CHECK(d->use_deviation_thresholds);
  CHECK(d->thresholds.at("memory") == 0);
}

TEST_CASE("HighNodeUtilizationArgs: cpu, memory and pods are filled in", "[descheduler]") {
  const auto v = parse(R"({"thresholds": {"cpu": 20, "nvidia.com/gpu": 10}})");
  auto a = decodeHighNodeUtilizationArgs(&v);
  REQUIRE(a.has_value());
  CHECK(a->thresholds ==
        Thresholds{{"cpu", 20}, {"memory", 100}, {"nvidia.com/gpu", 10}, {"pods", 100}});
  CHECK(a->number_of_nodes == 0);
}

TEST_CASE("Node utilization args: refusals name the field", "[descheduler]") {
  const testkit::Refusal low[] = {
      {"null", "thresholds"},
      {R"({"targetThresholds": {"cpu": 70}})", "thresholds"},
      {R"({"thresholds": {"cpu": 20}})", "targetThresholds"},
      {R"({"thresholds": {"cpu": 20}, "targetThresholds": {"memory": 70}})", "thresholds[cpu]"},
      {R"({"thresholds": {"cpu": 20}, "targetThresholds": {"cpu": 70, "memory": 70}})",
       "targetThresholds[memory]"},
      {R"({"thresholds": {"cpu": 80}, "targetThresholds": {"cpu": 70}})", "thresholds[cpu]"},
      {R"({"thresholds": {"cpu": 20}, "targetThresholds": {"cpu": 170}})", "targetThresholds[cpu]"},
      {R"({"thresholds": {"cpu": 2}, "targetThresholds": {"cpu": 7}, "nodeFit": true})", "nodeFit"},
      {R"({"thresholds": {"cpu": 2}, "targetThresholds": {"cpu": 7},
           "useDeviationThresholds": 1})",
       "useDeviationThresholds"},
      {R"({"thresholds": {"cpu": 2}, "targetThresholds": {"cpu": 7},
           "evictableNamespaces": {"include": ["a"], "exclude": ["b"]}})",
       "evictableNamespaces"},
  };
  testkit::checkRefusals(decodeLowNodeUtilizationArgs, low);
  const testkit::Refusal high[] = {
      {R"({})", "thresholds"},
      {R"({"thresholds": {}})", "thresholds"},
      {R"({"thresholds": {"cpu": -5}})", "thresholds[cpu]"},
      {R"({"thresholds": {"cpu": 5}, "numberOfNodes": -1})", "numberOfNodes"},
      {R"({"thresholds": {"cpu": 5}, "targetThresholds": {"cpu": 5}})", "targetThresholds"},
  };
  testkit::checkRefusals(decodeHighNodeUtilizationArgs, high);
}

}  // namespace
}  // namespace koord::roles::descheduler::nodeutilization
