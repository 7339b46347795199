#include "koord/apis/device_allocation.h"

#include "koord/apis/input_limits.h"

#include <catch2/catch.hpp>

#include <string>

#include "catch_expected.h"

using namespace koord::apis;
using koord::kube::Quantity;

namespace {

Quantity q(std::string_view text) {
  return Quantity::parse(text).value();
}

// The example in Koordinator's apis/extension/device_share.go, as it is written there.
constexpr std::string_view kKoordinatorSample = R"({
  "gpu": [
    {
      "minor": 0,
      "resources": {
        "koordinator.sh/gpu-core": 100,
        "koordinator.sh/gpu-memory-ratio": 100,
        "koordinator.sh/gpu-memory": "16Gi"
      }
    },
    {
      "minor": 1,
      "resources": {
        "koordinator.sh/gpu-core": 100,
        "koordinator.sh/gpu-memory-ratio": 100,
        "koordinator.sh/gpu-memory": "16Gi"
      }
    }
  ]
})";

}  // namespace

TEST_CASE("device-allocated: Koordinator's sample reads and writes back as Go marshals it",
          "[apis][device]") {
  auto parsed = parseDeviceAllocations(kKoordinatorSample);
  REQUIRE(parsed.has_value());
  REQUIRE(parsed->size() == 1);
  const auto& gpus = parsed->at("gpu");
  REQUIRE(gpus.size() == 2);
  CHECK(gpus[0].minor == 0);
  CHECK(gpus[1].minor == 1);
  CHECK(gpus[1].resources.at("koordinator.sh/gpu-core") == q("100"));
  CHECK(gpus[1].resources.at("koordinator.sh/gpu-memory") == q("16Gi"));
  CHECK(gpus[0].vfs.empty());

  const std::string formatted = formatDeviceAllocations(*parsed);
  CHECK(formatted ==
        R"({"gpu":[{"minor":0,"resources":{"koordinator.sh/gpu-core":"100",)"
        R"("koordinator.sh/gpu-memory":"16Gi","koordinator.sh/gpu-memory-ratio":"100"}},)"
        R"({"minor":1,"resources":{"koordinator.sh/gpu-core":"100",)"
        R"("koordinator.sh/gpu-memory":"16Gi","koordinator.sh/gpu-memory-ratio":"100"}}]})");
  auto back = parseDeviceAllocations(formatted);
  REQUIRE(back.has_value());
  CHECK(*back == *parsed);
}

TEST_CASE("device-allocated: types sorted, VFs under extension with omitempty", "[apis][device]") {
  DeviceAllocations a;
  a["rdma"] = {DeviceAllocation{.minor = 2,
                                .resources = {{"koordinator.sh/rdma", q("1")}},
                                .vfs = {VirtualFunction{.minor = 0, .bus_id = "0000:1f:00.2"},
                                        VirtualFunction{.minor = 3, .bus_id = ""}},
                                .gpu_shared_resource_template = {}}};
  a["gpu"] = {DeviceAllocation{.minor = 0,
                               .resources = {{"koordinator.sh/gpu-core", q("50")}},
                               .vfs = {},
                               .gpu_shared_resource_template = {}}};
  const std::string formatted = formatDeviceAllocations(a);
  CHECK(formatted == R"({"gpu":[{"minor":0,"resources":{"koordinator.sh/gpu-core":"50"}}],)"
                     R"("rdma":[{"minor":2,"resources":{"koordinator.sh/rdma":"1"},)"
                     R"("extension":{"vfs":[{"busID":"0000:1f:00.2"},{"minor":3}]}}]})");
  auto back = parseDeviceAllocations(formatted);
  REQUIRE(back.has_value());
  CHECK(*back == a);
  CHECK(formatDeviceAllocations({}) == "{}");
}

TEST_CASE("device-allocated: nulls read as absent", "[apis][device]") {
  auto parsed = parseDeviceAllocations(
      R"({"gpu":[{"minor":null,"resources":null,"extension":null}],"fpga":null})");
  REQUIRE(parsed.has_value());
  CHECK(parsed->at("gpu").at(0) == DeviceAllocation{});
  CHECK(parsed->at("fpga").empty());
  auto null_value = parseDeviceAllocations("null");
  REQUIRE(null_value.has_value());
  CHECK(null_value->empty());
}

TEST_CASE("device-allocated: malformed values are refused naming the member", "[apis][device]") {
  struct Case {
    std::string json;
    std::string error;
  };
  const std::vector<Case> cases{
      {"", "not JSON"},
      {"{\"gpu\":[", "not JSON"},
      {"[]", "expected object, got array"},
      {R"({"gpu":{}})", "gpu: expected array, got object"},
      {R"({"gpu":[null]})", "gpu[0]: expected object, got null"},
      {R"({"gpu":[{"minor":"0"}]})", "gpu[0].minor: expected integer, got string"},
      {R"({"gpu":[{"minor":1.5}]})", "gpu[0].minor"},
      {R"({"gpu":[{"minor":4294967296}]})", "overflows int32"},
      {R"({"gpu":[{"resources":{"koordinator.sh/gpu-core":"lots"}}]})",
       "gpu[0].resources[koordinator.sh/gpu-core]"},
      {R"({"gpu":[{"resources":[]}]})", "gpu[0].resources: expected object, got array"},
      {R"({"rdma":[{"extension":{"vfs":[{"busID":7}]}}]})",
       "rdma[0].extension.vfs[0].busID: expected string, got number"},
      {R"({"rdma":[{"extension":{"vfs":{}}}]})", "rdma[0].extension.vfs: expected array"},
      {R"({"gpu":[{"extension":[[[[[[[[[[1]]]]]]]]]]}]})", "not JSON"},
  };
  for (const Case& c : cases) {
    INFO(c.json);
    auto parsed = parseDeviceAllocations(c.json);
    REQUIRE_FALSE(parsed.has_value());
    CHECK_THAT(parsed.error().message, Catch::Contains(c.error));
  }
}

TEST_CASE("device-allocated: oversized values are refused", "[apis][device]") {
  SECTION("longer than an annotation may be") {
    std::string big = R"({"gpu":[{"minor":0,"resources":{}}],"x":")";
    big.append(kMaxAnnotationValueBytes, 'a');
    big += "\"}";
    auto parsed = parseDeviceAllocations(big);
    REQUIRE_FALSE(parsed.has_value());
    CHECK_THAT(parsed.error().message, Catch::Contains(std::string(kAnnotationDeviceAllocated)));
  }
  SECTION("too many allocations of one type") {
    std::string many = R"({"gpu":[)";
    for (std::size_t i = 0; i <= kMaxDeviceAllocationsPerType; ++i)
      many += i == 0 ? "{}" : ",{}";
    many += "]}";
    auto parsed = parseDeviceAllocations(many);
    REQUIRE_FALSE(parsed.has_value());
    CHECK_THAT(parsed.error().message, Catch::Contains("more than the"));
  }
  SECTION("too many device types") {
    std::string many = "{";
    for (std::size_t i = 0; i <= kMaxDeviceAllocationTypes; ++i)
      many += (i == 0 ? "" : ",") + ("\"t" + std::to_string(i) + "\":[]");
    many += "}";
    auto parsed = parseDeviceAllocations(many);
    REQUIRE_FALSE(parsed.has_value());
    CHECK_THAT(parsed.error().message, Catch::Contains("device types"));
  }
}

TEST_CASE("device-allocated: a pod's annotation", "[apis][device]") {
  koord::kube::Labels annotations{{"other", "x"}};
  auto none = podDeviceAllocations(annotations);
  REQUIRE(none.has_value());
  CHECK_FALSE(none->has_value());

  annotations.emplace(std::string(kAnnotationDeviceAllocated),
                      R"({"fpga":[{"minor":3,"resources":{"koordinator.sh/fpga":"100"}}]})");
  auto one = podDeviceAllocations(annotations);
  REQUIRE(one.has_value());
  REQUIRE(one->has_value());
  CHECK((**one).at("fpga").at(0).minor == 3);

  annotations[std::string(kAnnotationDeviceAllocated)] = R"({"gpu":[{"minor":"x"}]})";
  auto bad = podDeviceAllocations(annotations);
  REQUIRE_FALSE(bad.has_value());
  CHECK(bad.error().message ==
        "scheduling.koordinator.sh/device-allocated: gpu[0].minor: expected integer, got string");
}
