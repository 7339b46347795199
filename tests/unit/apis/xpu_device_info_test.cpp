#include "koord/apis/xpu_device_info.h"

#include <catch2/catch.hpp>

#include "catch_expected.h"

using namespace koord::apis;

namespace {

XpuDeviceInfo gpu() {
  XpuDeviceInfo d;
  d.vendor = "nvidia";
  d.model = "NVIDIA-H100-80GB-HBM3";
  d.uuid = "GPU-2f6f3c1a";
  d.minor = "0";
  d.resources = {{"koordinator.sh/gpu-memory", "81559Mi"}, {"koordinator.sh/gpu-core", "100"}};
  d.topology = XpuDeviceTopology{.p2p_links = {},
                                 .must_honor_partition = false,
                                 .socket_id = "0",
                                 .node_id = "-1",
                                 .pcie_id = "pci0000:3a",
                                 .bus_id = "0000:3b:00.0"};
  d.status = XpuDeviceStatus{.healthy = true, .err_code = "", .err_message = ""};
  return d;
}

}  // namespace

TEST_CASE("device report: Koordinator's field names, order and omitempty", "[apis][xpu]") {
  std::vector<XpuDeviceInfo> devices{gpu()};
  CHECK(formatXpuDeviceInfos(devices) ==
        R"([{"vendor":"nvidia","model":"NVIDIA-H100-80GB-HBM3","uuid":"GPU-2f6f3c1a","minor":"0",)"
        R"("resources":{"koordinator.sh/gpu-core":"100","koordinator.sh/gpu-memory":"81559Mi"},)"
        R"("topology":{"socketID":"0","nodeID":"-1","pcieID":"pci0000:3a","busID":"0000:3b:00.0"},)"
        R"("status":{"healthy":true}}])"
        "\n");

  XpuDeviceInfo bare;
  bare.vendor = "huawei";
  std::vector<XpuDeviceInfo> one{bare};
  // No resources, topology or status: left out; the four plain strings are always written.
  CHECK(formatXpuDeviceInfos(one) ==
        "[{\"vendor\":\"huawei\",\"model\":\"\",\"uuid\":\"\",\"minor\":\"\"}]\n");
  CHECK(formatXpuDeviceInfos({}) == "[]\n");
}

TEST_CASE("device report: what is written reads back the same", "[apis][xpu]") {
  XpuDeviceInfo npu = gpu();
  npu.vendor = "huawei";
  npu.topology->p2p_links = {{"1", "HCCS"}, {"2", "HCCS"}};
  npu.topology->must_honor_partition = true;
  npu.status = XpuDeviceStatus{.healthy = false, .err_code = "chip error", .err_message = "faults"};
  std::vector<XpuDeviceInfo> devices{gpu(), npu};
  auto back = parseXpuDeviceInfos(formatXpuDeviceInfos(devices));
  REQUIRE(back);
  CHECK(*back == devices);
}

TEST_CASE("device report: Koordinator's own indented output and nulls read", "[apis][xpu]") {
  // As Koordinator's device-daemon writes it (json.MarshalIndent), with a null topology.
  auto r = parseXpuDeviceInfos(R"([
  {
    "vendor": "cambricon",
    "model": "MLU370-X8",
    "uuid": "U5-1",
    "minor": "3",
    "resources": {"koordinator.sh/gpu-core": "100"},
    "topology": null,
    "status": {"healthy": true}
  }
])");
  REQUIRE(r);
  REQUIRE(r->size() == 1);
  CHECK((*r)[0].minor == "3");
  CHECK_FALSE((*r)[0].topology.has_value());
  CHECK((*r)[0].status->healthy);
  auto none = parseXpuDeviceInfos("null");
  REQUIRE(none);
  CHECK(none->empty());
}

TEST_CASE("device report: a member of the wrong type is named", "[apis][xpu]") {
  auto bad_bus = parseXpuDeviceInfos(R"([{"vendor":"nvidia"},{"topology":{"busID":3}}])");
  REQUIRE_FALSE(bad_bus);
  CHECK(bad_bus.error().message == "[1].topology.busID: expected string, got number");
  auto bad_minor = parseXpuDeviceInfos(R"([{"minor":0}])");
  REQUIRE_FALSE(bad_minor);
  CHECK(bad_minor.error().message == "[0].minor: expected string, got number");
  auto bad_health = parseXpuDeviceInfos(R"([{"status":{"healthy":"yes"}}])");
  REQUIRE_FALSE(bad_health);
  CHECK(bad_health.error().message == "[0].status.healthy: expected boolean, got string");
  auto bad_resource = parseXpuDeviceInfos(R"([{"resources":{"koordinator.sh/gpu-core":100}}])");
  REQUIRE_FALSE(bad_resource);
  CHECK(bad_resource.error().message ==
        "[0].resources.koordinator.sh/gpu-core: expected string, got number");
  CHECK_FALSE(parseXpuDeviceInfos("{}"));
  CHECK_FALSE(parseXpuDeviceInfos("[{\"vendor\":"));
}
