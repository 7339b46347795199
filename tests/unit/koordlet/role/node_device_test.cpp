// The koordlet's Device report: XPUDeviceInfo reports into spec.devices and GPU labels, the JSON
// that creates and patches the Device, the Node label patch, and report directories on disk (a
// device that leaves, a garbled file, files that are not reports).
#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "catch_expected.h"
#include "statesinformer/node_device.h"
#include "temp_tree.h"

namespace json = boost::json;
using koord::apis::XpuDeviceInfo;
using koord::apis::XpuDeviceStatus;
using koord::apis::XpuDeviceTopology;
using koord::roles::koordlet::buildNodeDevices;
using koord::roles::koordlet::deviceObject;
using koord::roles::koordlet::devicePatch;
using koord::roles::koordlet::deviceSpecJson;
using koord::roles::koordlet::loadNodeDevices;
using koord::roles::koordlet::NodeDeviceOptions;
using koord::roles::koordlet::NodeDevices;
using koord::roles::koordlet::nodeLabelsPatch;
using koord::roles::koordlet::parseNvidiaDriverVersion;

namespace {

XpuDeviceTopology topology(std::string socket, std::string node, std::string pcie,
                           std::string bus) {
  XpuDeviceTopology t;
  t.socket_id = std::move(socket);
  t.node_id = std::move(node);
  t.pcie_id = std::move(pcie);
  t.bus_id = std::move(bus);
  return t;
}

XpuDeviceStatus status(bool healthy) {
  XpuDeviceStatus s;
  s.healthy = healthy;
  return s;
}

XpuDeviceInfo gpu(std::string minor, std::string uuid, std::string bus, bool healthy = true) {
  XpuDeviceInfo d;
  d.vendor = "nvidia";
  d.model = "NVIDIA-H100-80GB-HBM3";
  d.uuid = std::move(uuid);
  d.minor = std::move(minor);
  d.resources = {{"koordinator.sh/gpu-core", "100"}, {"koordinator.sh/gpu-memory", "81559Mi"}};
  d.topology = topology("0", "1", "pci0000:3a", std::move(bus));
  d.status = status(healthy);
  return d;
}

XpuDeviceInfo nic() {
  XpuDeviceInfo d;
  d.vendor = "mellanox";
  d.model = "0x101b";
  d.uuid = "0000:5e:00.0";
  d.minor = "0";
  d.resources = {{"koordinator.sh/rdma", "100"}};
  d.topology = topology("0", "-1", "pci0000:5d", "0000:5e:00.0");
  d.status = status(true);
  return d;
}

const std::string kTwoGpus =
    R"([{"vendor":"nvidia","model":"NVIDIA-A100","uuid":"GPU-a","minor":"0",)"
    R"("resources":{"koordinator.sh/gpu-core":"100","koordinator.sh/gpu-memory":"40Gi"},)"
    R"("topology":{"socketID":"0","nodeID":"0","pcieID":"pci0000:3a","busID":"0000:3b:00.0"},)"
    R"("status":{"healthy":true}},)"
    R"({"vendor":"nvidia","model":"NVIDIA-A100","uuid":"GPU-b","minor":"1",)"
    R"("resources":{"koordinator.sh/gpu-core":"100","koordinator.sh/gpu-memory":"40Gi"},)"
    R"("status":{"healthy":true}}])"
    "\n";

std::vector<std::string> ids(const NodeDevices& d) {
  std::vector<std::string> out;
  for (const auto& e : d.devices)
    out.push_back(e.type + ":" + e.id);
  return out;
}

}  // namespace

TEST_CASE("node device: GPUs take Koordinator's resources, topology and the node's labels",
          "[koordlet][device]") {
  std::vector<XpuDeviceInfo> report = {gpu("1", "GPU-b", "0000:86:00.0", false),
                                       gpu("0", "GPU-a", "0000:3b:00.0")};
  auto built = buildNodeDevices(report, {});
  REQUIRE(built);
  REQUIRE(built->devices.size() == 2);
  // Sorted by minor, whatever the report's order.
  const auto& first = built->devices[0];
  CHECK(first.type == "gpu");
  CHECK(first.id == "GPU-a");
  CHECK(first.minor == 0);
  CHECK(first.health);
  CHECK(first.resources.at("koordinator.sh/gpu-core").toString() == "100");
  CHECK(first.resources.at("koordinator.sh/gpu-memory").value() == 81559LL * 1024 * 1024);
  CHECK(first.resources.at("koordinator.sh/gpu-memory-ratio").toString() == "100");
  REQUIRE(first.topology);
  CHECK(first.topology->socket_id == 0);
  CHECK(first.topology->node_id == 1);
  CHECK(first.topology->pcie_id == "pci0000:3a");
  CHECK(first.topology->bus_id == "0000:3b:00.0");
  CHECK_FALSE(built->devices[1].health);
  CHECK(built->devices[1].minor == 1);
  // The labels come from the report's first accelerator (minor 1 here), as Koordinator takes them.
  CHECK(built->labels.at("node.koordinator.sh/gpu-vendor") == "nvidia");
  CHECK(built->labels.at("node.koordinator.sh/gpu-model") == "NVIDIA-H100-80GB-HBM3");
  CHECK(built->labels.size() == 2);
}

TEST_CASE("node device: RDMA NICs only under RDMADevices, without GPU labels",
          "[koordlet][device]") {
  std::vector<XpuDeviceInfo> report = {nic(), gpu("0", "GPU-a", "0000:3b:00.0")};
  auto without = buildNodeDevices(report, {});
  REQUIRE(without);
  CHECK(ids(*without) == std::vector<std::string>{"gpu:GPU-a"});

  auto with =
      buildNodeDevices(report, NodeDeviceOptions{.rdma = true, .nvidia_driver_version_file = {}});
  REQUIRE(with);
  CHECK(ids(*with) == std::vector<std::string>{"gpu:GPU-a", "rdma:0000:5e:00.0"});
  const auto& rdma = with->devices[1];
  CHECK(rdma.resources.size() == 1);
  CHECK(rdma.resources.at("koordinator.sh/rdma").toString() == "100");
  CHECK(rdma.topology->node_id == -1);
  // The NIC comes first in the report, but a NIC is no GPU: the labels name the GPU.
  CHECK(with->labels.at("node.koordinator.sh/gpu-vendor") == "nvidia");

  auto nic_only = buildNodeDevices(
      std::vector{nic()}, NodeDeviceOptions{.rdma = true, .nvidia_driver_version_file = {}});
  REQUIRE(nic_only);
  CHECK(nic_only->labels.empty());
}

TEST_CASE("node device: other vendors' accelerators are gpus, short names and gaps",
          "[koordlet][device]") {
  XpuDeviceInfo npu;
  npu.vendor = "huawei";
  npu.model = "0xd801";
  npu.uuid = "0000:c1:00.0";
  npu.minor = "3";
  npu.resources = {{"gpu-core", "100"}, {"gpu-memory", "32Gi"}};  // an older daemon's names
  // No topology and no status: health defaults to true, topology stays out.
  auto built = buildNodeDevices(std::vector{npu}, {});
  REQUIRE(built);
  REQUIRE(built->devices.size() == 1);
  const auto& d = built->devices[0];
  CHECK(d.type == "gpu");
  CHECK(d.health);
  CHECK_FALSE(d.topology);
  CHECK(d.resources.count("koordinator.sh/gpu-core") == 1);
  CHECK(d.resources.at("koordinator.sh/gpu-memory").toString() == "32Gi");
  CHECK(d.resources.count("gpu-core") == 0);
  CHECK(built->labels.at("node.koordinator.sh/gpu-vendor") == "huawei");

  npu.topology = topology("", "", "pci0000:c0", "");
  built = buildNodeDevices(std::vector{npu}, {});
  REQUIRE(built);
  CHECK(built->devices[0].topology->socket_id == -1);
  CHECK(built->devices[0].topology->node_id == -1);
}

TEST_CASE("node device: a member that does not convert fails the report, naming the device",
          "[koordlet][device]") {
  auto bad_minor = gpu("zero", "GPU-a", "0000:3b:00.0");
  auto r = buildNodeDevices(std::vector{gpu("0", "GPU-x", "0000:01:00.0"), bad_minor}, {});
  REQUIRE_FALSE(r);
  CHECK(r.error().message.find("[1].minor") != std::string::npos);

  auto bad_quantity = gpu("0", "GPU-a", "0000:3b:00.0");
  bad_quantity.resources["koordinator.sh/gpu-memory"] = "lots";
  r = buildNodeDevices(std::vector{bad_quantity}, {});
  REQUIRE_FALSE(r);
  CHECK(r.error().message.find("[0].resources[koordinator.sh/gpu-memory]") != std::string::npos);

  auto bad_node = gpu("0", "GPU-a", "0000:3b:00.0");
  bad_node.topology->node_id = "1.5";
  r = buildNodeDevices(std::vector{bad_node}, {});
  REQUIRE_FALSE(r);
  CHECK(r.error().message.find("[0].topology.nodeID") != std::string::npos);
}

TEST_CASE("node device: a model that is no label value is left off the labels, and said",
          "[koordlet][device]") {
  auto d = gpu("0", "GPU-a", "0000:3b:00.0");
  d.model = "NVIDIA H100 80GB";  // spaces: not a label value
  auto built = buildNodeDevices(std::vector{d}, {});
  REQUIRE(built);
  CHECK(built->devices.size() == 1);
  CHECK(built->labels.count("node.koordinator.sh/gpu-model") == 0);
  CHECK(built->labels.at("node.koordinator.sh/gpu-vendor") == "nvidia");
  REQUIRE(built->skipped.size() == 1);
  CHECK(built->skipped[0].find("node.koordinator.sh/gpu-model") != std::string::npos);
}

TEST_CASE("node device: the Device's JSON, its owner and the merge patches", "[koordlet][device]") {
  auto built = buildNodeDevices(std::vector{gpu("0", "GPU-a", "0000:3b:00.0"), nic()},
                                NodeDeviceOptions{.rdma = true, .nvidia_driver_version_file = {}});
  REQUIRE(built);
  auto spec = deviceSpecJson(*built);
  CHECK(json::serialize(spec[0]) ==
        R"({"type":"gpu","id":"GPU-a","minor":0,"health":true,"resources":{)"
        R"("koordinator.sh/gpu-core":"100","koordinator.sh/gpu-memory":"81559Mi",)"
        R"("koordinator.sh/gpu-memory-ratio":"100"},"topology":{"socketID":0,"nodeID":1,)"
        R"("pcieID":"pci0000:3a","busID":"0000:3b:00.0"}})");
  CHECK(spec[1].at("type") == "rdma");

  auto object = deviceObject(*built, "node-1", "uid-1");
  CHECK(object.at("apiVersion") == "scheduling.koordinator.sh/v1alpha1");
  CHECK(object.at("kind") == "Device");
  const auto& meta = object.at("metadata").as_object();
  CHECK(meta.at("name") == "node-1");
  CHECK(meta.at("labels").at("node.koordinator.sh/gpu-model") == "NVIDIA-H100-80GB-HBM3");
  const auto& owner = meta.at("ownerReferences").at(0).as_object();
  CHECK(owner.at("kind") == "Node");
  CHECK(owner.at("uid") == "uid-1");
  CHECK(owner.at("controller") == true);
  CHECK(object.at("spec").at("devices") == spec);

  // Without GPUs the patch removes the labels it owns, and empties the device list.
  auto patch = devicePatch(NodeDevices{});
  CHECK(patch.at("metadata").at("labels").at("node.koordinator.sh/gpu-vendor").is_null());
  CHECK(patch.at("metadata").at("labels").at("node.koordinator.sh/gpu-driver-version").is_null());
  CHECK(patch.at("spec").at("devices").as_array().empty());
  patch = devicePatch(*built);
  CHECK(patch.at("metadata").at("labels").at("node.koordinator.sh/gpu-vendor") == "nvidia");
  CHECK(patch.at("spec").at("devices") == spec);

  koord::kube::Labels node_labels{{"node.koordinator.sh/gpu-vendor", "nvidia"}};
  auto node_patch = nodeLabelsPatch(*built, node_labels);
  REQUIRE(node_patch);
  CHECK(json::serialize(*node_patch) ==
        R"({"metadata":{"labels":{"node.koordinator.sh/gpu-model":"NVIDIA-H100-80GB-HBM3"}}})");
  node_labels["node.koordinator.sh/gpu-model"] = "NVIDIA-H100-80GB-HBM3";
  CHECK_FALSE(nodeLabelsPatch(*built, node_labels));
  // A node whose GPUs left keeps its labels, as Koordinator's manager leaves them.
  CHECK_FALSE(nodeLabelsPatch(NodeDevices{}, node_labels));
}

TEST_CASE("node device: report directories, a device that leaves and a garbled file",
          "[koordlet][device]") {
  koord::testing::TempTree tree("koord-xpu");
  CHECK(loadNodeDevices(tree.path("absent"), {}).value().devices.empty());

  tree.write("infos/ic-device", kTwoGpus);
  // A write in progress and a hidden file are not reports.
  tree.write("infos/ic-device.tmp.Ab12Cd", "[{\"vendor\"");
  tree.write("infos/.hidden", "garbage");
  auto two = loadNodeDevices(tree.path("infos"), {});
  REQUIRE(two);
  CHECK(ids(*two) == std::vector<std::string>{"gpu:GPU-a", "gpu:GPU-b"});
  CHECK(two->labels.at("node.koordinator.sh/gpu-model") == "NVIDIA-A100");

  // The next report lacks GPU-b: so does the Device.
  tree.write("infos/ic-device", kTwoGpus.substr(0, kTwoGpus.find(",{\"vendor\"")) + "]\n");
  auto one = loadNodeDevices(tree.path("infos"), {});
  REQUIRE(one);
  CHECK(ids(*one) == std::vector<std::string>{"gpu:GPU-a"});

  // A second file of another daemon adds its devices.
  tree.write("infos/npu-device",
             R"([{"vendor":"huawei","model":"Ascend-910","uuid":"npu-0","minor":"0"}])");
  auto both = loadNodeDevices(tree.path("infos"), {});
  REQUIRE(both);
  CHECK(ids(*both) == std::vector<std::string>{"gpu:GPU-a", "gpu:npu-0"});

  // Truncated JSON: an error naming the file, not fewer devices.
  tree.write("infos/npu-device", R"([{"vendor":"huawei","model":"Asc)");
  auto garbled = loadNodeDevices(tree.path("infos"), {});
  REQUIRE_FALSE(garbled);
  CHECK(garbled.error().message.find(tree.path("infos/npu-device").string()) != std::string::npos);

  // Valid JSON whose minor is no number: the same, with the device's place in its own file.
  tree.write("infos/npu-device",
             R"([{"vendor":"huawei","model":"Ascend-910","uuid":"npu-0","minor":"x"}])");
  auto bad_minor = loadNodeDevices(tree.path("infos"), {});
  REQUIRE_FALSE(bad_minor);
  CHECK(bad_minor.error().message.find("npu-device: [0].minor") != std::string::npos);

  // Wrong member types are refused by the reader, naming the file too.
  tree.write("infos/npu-device", R"([{"vendor":"huawei","minor":3}])");
  auto wrong_type = loadNodeDevices(tree.path("infos"), {});
  REQUIRE_FALSE(wrong_type);
  CHECK(wrong_type.error().message.find("npu-device") != std::string::npos);
}

TEST_CASE("node device: NVIDIA's driver version from the kernel module's version file",
          "[koordlet][device]") {
  CHECK(parseNvidiaDriverVersion(
            "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  Tue Oct 28 2025\n"
            "GCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n") == "580.159.04");
  CHECK(parseNvidiaDriverVersion("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  "
                                 "535.104.05  Release Build  (dvs-builder@U16)\n") == "535.104.05");
  CHECK_FALSE(parseNvidiaDriverVersion(""));
  CHECK_FALSE(parseNvidiaDriverVersion("GCC version: 12.2.0\n"));
  CHECK_FALSE(parseNvidiaDriverVersion("NVRM version: NVIDIA UNIX x86_64 Kernel Module\n"));
  CHECK_FALSE(parseNvidiaDriverVersion("NVRM version: garbage 1.2\n"));

  koord::testing::TempTree tree("koord-xpu");
  tree.write("infos/ic-device", kTwoGpus);
  NodeDeviceOptions options;
  options.nvidia_driver_version_file = tree.path("proc/driver/nvidia/version");

  // No driver file (a /proc without NVIDIA's module): no label, and said once per load.
  auto without = loadNodeDevices(tree.path("infos"), options);
  REQUIRE(without);
  CHECK(without->labels.count("node.koordinator.sh/gpu-driver-version") == 0);
  REQUIRE(without->skipped.size() == 1);
  CHECK(without->skipped[0].find("gpu-driver-version") != std::string::npos);

  tree.write("proc/driver/nvidia/version",
             "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  Tue Oct 28 2025\n");
  auto with = loadNodeDevices(tree.path("infos"), options);
  REQUIRE(with);
  CHECK(with->labels.at("node.koordinator.sh/gpu-driver-version") == "580.159.04");
  CHECK(with->skipped.empty());
  auto patch = devicePatch(*with);
  CHECK(patch.at("metadata").at("labels").at("node.koordinator.sh/gpu-driver-version") ==
        "580.159.04");

  // A garbled file: no label, said.
  tree.write("proc/driver/nvidia/version", "NVRM version: \n");
  auto garbled = loadNodeDevices(tree.path("infos"), options);
  REQUIRE(garbled);
  CHECK(garbled->labels.count("node.koordinator.sh/gpu-driver-version") == 0);
  CHECK(garbled->skipped.size() == 1);

  // Another vendor's accelerators: the NVIDIA file is not read.
  tree.write("infos/ic-device",
             R"([{"vendor":"huawei","model":"Ascend-910","uuid":"npu-0","minor":"0"}])");
  auto npu = loadNodeDevices(tree.path("infos"), options);
  REQUIRE(npu);
  CHECK(npu->labels.count("node.koordinator.sh/gpu-driver-version") == 0);
  CHECK(npu->skipped.empty());
}
