#include "device_discovery.h"

#include <catch2/catch.hpp>

#include "catch_expected.h"
#include "fake_pci_sysfs.h"
#include "log_lines.h"

using namespace koord::roles::device_daemon;
using koord::apis::XpuDeviceInfo;
using koord::testing::FakePciSysfs;
using koord::testing::LogLines;

namespace {

// NVML as discovery sees it, without a driver: a fixed answer and a count of the calls.
class FakeGpuSource : public GpuInfoSource {
 public:
  explicit FakeGpuSource(koord::kube::Expected<std::vector<GpuDetails>> answer)
      : answer_(std::move(answer)) {}
  koord::kube::Expected<std::vector<GpuDetails>> listGpus() override {
    ++calls;
    return answer_;
  }
  int calls = 0;

 private:
  koord::kube::Expected<std::vector<GpuDetails>> answer_;
};

GpuDetails h100(std::string bus_id, std::string uuid, int minor) {
  return GpuDetails{.bus_id = std::move(bus_id),
                    .name = "NVIDIA H100 80GB HBM3",
                    .uuid = std::move(uuid),
                    .memory_total_bytes = 81559ULL << 20,
                    .minor = minor,
                    .nvlink_peers = {},
                    .error = ""};
}

// Two GPUs, two NPUs, two RDMA NICs and a disk controller.
void mixedNode(const FakePciSysfs& sys) {
  sys.add(koord::testing::nvidiaGpu("0000:3b:00.0"));
  sys.add(koord::testing::nvidiaGpu("0000:86:00.0"));
  sys.add(koord::testing::huaweiNpu("0000:c1:00.0"));
  sys.add(koord::testing::huaweiNpu("0000:c2:00.0"));
  sys.add(koord::testing::mellanoxRdmaNic("0000:5e:00.0"));
  sys.add(koord::testing::mellanoxRdmaNic("0000:5e:00.1"));
  sys.add(koord::testing::intelSataController("0000:00:17.0"));
}

const XpuDeviceInfo& byBus(const std::vector<XpuDeviceInfo>& devices, std::string_view bus) {
  for (const auto& d : devices) {
    if (d.topology && d.topology->bus_id == bus)
      return d;
  }
  FAIL("no device with bus ID " << bus);
  throw std::logic_error("unreachable");
}

}  // namespace

TEST_CASE("discovery without NVML: sysfs alone, minors per vendor in bus order",
          "[devicedaemon][discovery]") {
  FakePciSysfs sys;
  mixedNode(sys);
  auto devices = discoverDevices(sys.root(), nullptr);
  REQUIRE(devices);
  REQUIRE(devices->size() == 6);

  const auto& gpu1 = byBus(*devices, "0000:86:00.0");
  CHECK(gpu1.vendor == "nvidia");
  CHECK(gpu1.model == "0x2330");
  CHECK(gpu1.uuid == "0000:86:00.0");
  CHECK(gpu1.minor == "1");
  CHECK(gpu1.resources == std::map<std::string, std::string>{{"koordinator.sh/gpu-core", "100"}});
  CHECK(gpu1.topology->node_id == "0");
  CHECK(gpu1.topology->socket_id == "-1");  // no CPU topology in this tree
  CHECK(gpu1.topology->pcie_id == "pci0000:00");
  CHECK(gpu1.status->healthy);

  const auto& npu0 = byBus(*devices, "0000:c1:00.0");
  CHECK(npu0.vendor == "huawei");
  CHECK(npu0.minor == "0");  // numbered apart from the GPUs
  CHECK(byBus(*devices, "0000:c2:00.0").minor == "1");

  const auto& nic1 = byBus(*devices, "0000:5e:00.1");
  CHECK(nic1.vendor == "mellanox");
  CHECK(nic1.minor == "1");
  CHECK(nic1.resources == std::map<std::string, std::string>{{"koordinator.sh/rdma", "100"}});
}

TEST_CASE("discovery with NVML: model, UUID, minor and memory of each GPU come from it",
          "[devicedaemon][discovery]") {
  FakePciSysfs sys;
  mixedNode(sys);
  FakeGpuSource nvml(
      std::vector<GpuDetails>{h100("0000:86:00.0", "GPU-b", 0), h100("0000:3b:00.0", "GPU-a", 1)});
  LogLines log;
  auto devices = discoverDevices(sys.root(), &nvml);
  REQUIRE(devices);
  CHECK(nvml.calls == 1);
  const auto& gpu0 = byBus(*devices, "0000:3b:00.0");
  CHECK(gpu0.model == "NVIDIA-H100-80GB-HBM3");
  CHECK(gpu0.uuid == "GPU-a");
  CHECK(gpu0.minor == "1");  // NVML's minor, not the bus order
  CHECK(gpu0.resources.at("koordinator.sh/gpu-memory") == "81559Mi");
  CHECK(gpu0.resources.at("koordinator.sh/gpu-core") == "100");
  CHECK(gpu0.status->healthy);
  CHECK(byBus(*devices, "0000:86:00.0").uuid == "GPU-b");
  CHECK(byBus(*devices, "0000:c1:00.0").model == "0xd801");  // NPUs untouched
  CHECK(log.problems() == 0);
}

TEST_CASE("discovery with NVML: NVLink peers become Koordinator's p2pLinks",
          "[devicedaemon][discovery]") {
  FakePciSysfs sys;
  sys.add(koord::testing::nvidiaGpu("0000:3b:00.0"));
  sys.add(koord::testing::nvidiaGpu("0000:86:00.0"));
  auto a = h100("0000:3b:00.0", "GPU-a", 0);
  auto b = h100("0000:86:00.0", "GPU-b", 1);
  a.nvlink_peers = {1};
  b.nvlink_peers = {0};
  FakeGpuSource nvml(std::vector<GpuDetails>{a, b});
  auto devices = discoverDevices(sys.root(), &nvml);
  REQUIRE(devices);
  REQUIRE(devices->size() == 2);
  REQUIRE(devices->at(0).topology->p2p_links.size() == 1);
  CHECK(devices->at(0).topology->p2p_links[0].peer_minor == "1");
  CHECK(devices->at(0).topology->p2p_links[0].type == "NVLink");
  CHECK(devices->at(1).topology->p2p_links[0].peer_minor == "0");
}

TEST_CASE("discovery with NVML: a GPU the driver does not see, or cannot describe, is unhealthy",
          "[devicedaemon][discovery]") {
  FakePciSysfs sys;
  mixedNode(sys);
  GpuDetails lost = h100("0000:86:00.0", "GPU-b", 0);
  lost.memory_total_bytes = 0;
  lost.error = "nvmlDeviceGetMemoryInfo: GPU is lost (NVML error 15)";
  FakeGpuSource nvml(std::vector<GpuDetails>{lost});
  auto devices = discoverDevices(sys.root(), &nvml);
  REQUIRE(devices);

  const auto& unseen = byBus(*devices, "0000:3b:00.0");
  CHECK_FALSE(unseen.status->healthy);
  CHECK_THAT(unseen.status->err_message, Catch::Contains("not among the GPUs the driver sees"));
  CHECK(unseen.uuid == "0000:3b:00.0");

  const auto& sick = byBus(*devices, "0000:86:00.0");
  CHECK_FALSE(sick.status->healthy);
  CHECK(sick.status->err_message == "NVML: nvmlDeviceGetMemoryInfo: GPU is lost (NVML error 15)");
  CHECK(sick.uuid == "GPU-b");  // what NVML did answer is kept
  CHECK(sick.resources.count("koordinator.sh/gpu-memory") == 0);
}

TEST_CASE("discovery with NVML down: GPUs from sysfs, healthy, one warning",
          "[devicedaemon][discovery]") {
  FakePciSysfs sys;
  mixedNode(sys);
  FakeGpuSource nvml(koord::kube::makeKubeError("nvmlInit_v2: Driver Not Loaded (NVML error 9)"));
  LogLines log;
  auto devices = discoverDevices(sys.root(), &nvml);
  REQUIRE(devices);
  CHECK(devices->size() == 6);
  const auto& gpu0 = byBus(*devices, "0000:3b:00.0");
  CHECK(gpu0.model == "0x2330");
  CHECK(gpu0.status->healthy);
  CHECK(log.problems() == 1);
  CHECK(log.count("Driver Not Loaded") == 1);
}

TEST_CASE("discovery: NVML's GPUs that sysfs does not show are reported from NVML alone",
          "[devicedaemon][discovery]") {
  // A container or sandbox whose /sys hides the PCI bus while the driver sees the GPU.
  FakePciSysfs sys;
  sys.add(koord::testing::huaweiNpu("0000:c1:00.0"));
  FakeGpuSource nvml(std::vector<GpuDetails>{h100("0000:3b:00.0", "GPU-a", 3)});
  LogLines log;
  auto devices = discoverDevices(sys.root(), &nvml);
  REQUIRE(devices);
  CHECK(nvml.calls == 1);
  REQUIRE(devices->size() == 2);
  CHECK(devices->at(0).vendor == "huawei");
  const auto& gpu = devices->at(1);
  CHECK(gpu.vendor == "nvidia");
  CHECK(gpu.uuid == "GPU-a");
  CHECK(gpu.minor == "3");
  CHECK(gpu.model == "NVIDIA-H100-80GB-HBM3");
  CHECK(gpu.topology->bus_id == "0000:3b:00.0");
  CHECK(gpu.topology->node_id == "-1");  // sysfs would have said; NVML is not asked
  CHECK(gpu.status->healthy);
  CHECK(log.count("reported from NVML alone") == 1);
}

TEST_CASE("discovery: NVML down on a node whose sysfs shows no NVIDIA GPU is no warning",
          "[devicedaemon][discovery]") {
  FakePciSysfs sys;
  sys.add(koord::testing::huaweiNpu("0000:c1:00.0"));
  FakeGpuSource nvml(koord::kube::makeKubeError("nvmlInit_v2: Driver Not Loaded (NVML error 9)"));
  LogLines log;
  auto devices = discoverDevices(sys.root(), &nvml);
  REQUIRE(devices);
  CHECK(devices->size() == 1);
  CHECK(log.count("reported from sysfs only") == 0);
  CHECK(log.count("sysfs shows none") == 1);
}

TEST_CASE("discovery: a GPU NVML cannot even name a bus for is warned about",
          "[devicedaemon][discovery]") {
  FakePciSysfs sys;
  sys.add(koord::testing::nvidiaGpu("0000:3b:00.0"));
  GpuDetails nameless;
  nameless.error = "nvmlDeviceGetHandleByIndex_v2(0): GPU is lost (NVML error 15)";
  FakeGpuSource nvml(std::vector<GpuDetails>{nameless});
  LogLines log;
  auto devices = discoverDevices(sys.root(), &nvml);
  REQUIRE(devices);
  CHECK(log.count("nvmlDeviceGetHandleByIndex_v2(0)") == 1);
  CHECK_FALSE(devices->front().status->healthy);
}
