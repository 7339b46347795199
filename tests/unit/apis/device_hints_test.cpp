#include "koord/apis/device_hints.h"

#include <catch2/catch.hpp>

#include <string>

#include "catch_expected.h"

using namespace koord::apis;

TEST_CASE("device hints: device-allocate-hint as Koordinator writes it", "[apis][devicehints]") {
  // Koordinator's RDMA example: VFs of the NICs' "general" groups, one NIC per request unit.
  auto hints = parseDeviceAllocateHints(R"({
    "rdma": {"vfSelector": {"matchLabels": {"type": "general"}},
             "allocateStrategy": "RequestsAsCount", "exclusivePolicy": "DeviceLevel"},
    "gpu": {"selector": {"matchExpressions": [{"key": "model", "operator": "In",
                                               "values": ["A100"]}]},
            "allocateStrategy": "ApplyForAll"},
    "fpga": null
  })");
  REQUIRE(hints.has_value());
  REQUIRE(hints->size() == 2);
  const DeviceHint& rdma = hints->at("rdma");
  REQUIRE(rdma.vf_selector.has_value());
  CHECK(rdma.vf_selector->match_labels == koord::kube::Labels{{"type", "general"}});
  CHECK_FALSE(rdma.selector.has_value());
  CHECK(rdma.allocate_strategy == DeviceAllocateStrategy::kRequestsAsCount);
  CHECK(rdma.exclusive_policy == DeviceExclusivePolicy::kDeviceLevel);
  const DeviceHint& gpu = hints->at("gpu");
  REQUIRE(gpu.selector.has_value());
  CHECK(gpu.selector->match_expressions.size() == 1);
  CHECK(gpu.allocate_strategy == DeviceAllocateStrategy::kApplyForAll);
  CHECK(gpu.exclusive_policy == DeviceExclusivePolicy::kUnset);

  CHECK(parseDeviceAllocateHints("null")->empty());
  CHECK(parseDeviceAllocateHints("{}")->empty());
}

TEST_CASE("device hints: device-joint-allocate", "[apis][devicehints]") {
  auto joint =
      parseDeviceJointAllocate(R"({"deviceTypes": ["gpu", "rdma"], "requiredScope": "SamePCIe"})");
  REQUIRE(joint.has_value());
  CHECK(joint->device_types == std::vector<std::string>{"gpu", "rdma"});
  CHECK(joint->same_pcie);
  auto loose = parseDeviceJointAllocate(R"({"deviceTypes": ["gpu", "rdma"]})");
  REQUIRE(loose.has_value());
  CHECK_FALSE(loose->same_pcie);

  koord::kube::Labels annotations;
  CHECK_FALSE(podDeviceJointAllocate(annotations)->has_value());
  annotations.emplace(kAnnotationDeviceJointAllocate, R"({"deviceTypes":["rdma"]})");
  CHECK(podDeviceJointAllocate(annotations)->value().device_types ==
        std::vector<std::string>{"rdma"});
}

TEST_CASE("device hints: what is refused, named", "[apis][devicehints]") {
  struct Case {
    std::string text;
    std::string error;
  };
  const Case hint_cases[] = {
      {"[1]", "expected object"},
      {"{\"rdma\": 1}", "rdma: expected object"},
      {"{\"rdma\": {\"allocateStrategy\": \"All\"}}",
       "rdma.allocateStrategy: \"All\" is not one of \"ApplyForAll\", \"RequestsAsCount\""},
      {"{\"rdma\": {\"exclusivePolicy\": \"NodeLevel\"}}", "rdma.exclusivePolicy"},
      {"{\"rdma\": {\"selector\": {\"matchLabels\": {\"bad key!\": \"x\"}}}}", "rdma.selector"},
      {"{\"rdma\": {\"vfSelector\": {\"matchExpressions\": [{\"key\": \"a\", \"operator\": "
       "\"Exists\", \"values\": [\"x\"]}]}}}",
       "rdma.vfSelector"},
      {"{\"rdma\": ", "not JSON"},
      {std::string(kMaxDeviceHintBytes + 1, ' '), "more than the 16384 allowed"},
  };
  for (const Case& c : hint_cases) {
    INFO(c.text.substr(0, 80));
    auto parsed = parseDeviceAllocateHints(c.text);
    REQUIRE_FALSE(parsed.has_value());
    CHECK_THAT(parsed.error().message, Catch::Contains(c.error));
  }
  std::string many = "{";
  for (std::size_t i = 0; i <= kMaxDeviceHintTypes; ++i)
    many += (i == 0 ? "" : ",") + std::string("\"t") + std::to_string(i) + "\":{}";
  many += "}";
  CHECK_THAT(parseDeviceAllocateHints(many).error().message,
             Catch::Contains("17 device types, more than the 16 allowed"));
  // Nesting past any real hint is refused before it is walked.
  CHECK_THAT(parseDeviceAllocateHints(std::string(64, '[') + std::string(64, ']')).error().message,
             Catch::Contains("not JSON"));

  const Case joint_cases[] = {
      {"{\"deviceTypes\": \"gpu\"}", "deviceTypes: expected array"},
      {"{\"deviceTypes\": [1]}", "deviceTypes[0]: expected string"},
      {"{\"requiredScope\": \"SameNUMA\"}",
       "requiredScope: \"SameNUMA\" is not one of \"SamePCIe\""},
  };
  for (const Case& c : joint_cases) {
    INFO(c.text);
    auto parsed = parseDeviceJointAllocate(c.text);
    REQUIRE_FALSE(parsed.has_value());
    CHECK_THAT(parsed.error().message, Catch::Contains(c.error));
  }
}
