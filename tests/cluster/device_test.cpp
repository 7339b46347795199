// The koordlet's Device report on the real apiserver: from a device-daemon report in its
// -xpu-device-infos-dir it creates the node's Device (owned by the Node) and GPU labels on the
// Node, follows the report when a device leaves, keeps the last good Device while the report is
// garbled, and the Device goes with its Node. The Node is API-only: no kubelet is needed.
#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "cluster_api.h"
#include "cluster_env.h"
#include "koord/apis/xpu_device_info.h"
#include "manifests.h"
#include "subprocess.h"
#include "temp_tree.h"

using namespace std::chrono_literals;
namespace json = boost::json;
using koord::apis::XpuDeviceInfo;
using koord::kube::ResourceRef;
using koord::testing::eventually;
using koord::testing::KubeApi;
using koord::testing::named;
using koord::testing::ok;
using koord::testing::str;
using namespace koord::testing::resources;

namespace {

XpuDeviceInfo device(std::string vendor, std::string uuid, std::string minor, std::string bus,
                     std::map<std::string, std::string> resources) {
  XpuDeviceInfo d;
  d.vendor = std::move(vendor);
  d.model = d.vendor == "nvidia" ? "NVIDIA-A100-SXM4-80GB" : "0x101b";
  d.uuid = std::move(uuid);
  d.minor = std::move(minor);
  d.resources = std::move(resources);
  koord::apis::XpuDeviceTopology t;
  t.socket_id = "0";
  t.node_id = "0";
  t.pcie_id = "pci0000:3a";
  t.bus_id = std::move(bus);
  d.topology = std::move(t);
  koord::apis::XpuDeviceStatus s;
  s.healthy = true;
  d.status = std::move(s);
  return d;
}

XpuDeviceInfo gpu(std::string uuid, std::string minor, std::string bus) {
  return device("nvidia", std::move(uuid), std::move(minor), std::move(bus),
                {{"koordinator.sh/gpu-core", "100"}, {"koordinator.sh/gpu-memory", "81920Mi"}});
}

// As the device-daemon writes: a temp file renamed over the report.
void writeReport(const std::filesystem::path& file, const std::string& content) {
  auto tmp = file;
  tmp += ".tmp.test01";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << content;
  }
  std::filesystem::rename(tmp, file);
}

// "type/id/minor" of each spec.devices entry, in the Device's order.
std::vector<std::string> deviceIds(const json::value& d) {
  std::vector<std::string> out;
  const auto* spec = d.as_object().if_contains("spec");
  if (spec == nullptr || !spec->as_object().contains("devices"))
    return out;
  for (const auto& e : spec->at("devices").as_array()) {
    out.push_back(std::string(e.at("type").as_string()) + "/" +
                  std::string(e.at("id").as_string()) + "/" +
                  std::to_string(e.at("minor").to_number<int>()));
  }
  return out;
}

std::size_t count(const std::string& haystack, const std::string& needle) {
  std::size_t n = 0;
  for (auto at = haystack.find(needle); at != std::string::npos; at = haystack.find(needle, at + 1))
    ++n;
  return n;
}

}  // namespace

TEST_CASE("koordlet: the Device object follows the device-daemon's report", "[device]") {
  KubeApi api(koord::testing::tokenConfig());
  koord::testing::applyCrds(*api);
  auto env = koord::testing::readClusterEnv();
  const std::string node = koord::testing::uniqueName("koord-e2e-device");

  auto created = ok(api->createSync(kNodes, json::object{{"apiVersion", "v1"},
                                                         {"kind", "Node"},
                                                         {"metadata", {{"name", node}}}}),
                    "node");
  const std::string node_uid = str(created, {"metadata", "uid"});
  struct Cleanup {
    koord::kube::RestClient& api;
    std::string node;
    ~Cleanup() {
      (void)api.removeSync(named(kNodes, node));
      (void)api.removeSync(named(kDevices, node));
    }
  } cleanup{*api, node};

  koord::testing::TempTree tree("koord-device-e2e");
  tree.mkdirs("cgroup/cpu/kubepods");
  tree.mkdirs("infos");
  const auto report = tree.path("infos/ic-device");
  std::vector<XpuDeviceInfo> devices = {
      gpu("GPU-aaaa", "0", "0000:3b:00.0"), gpu("GPU-bbbb", "1", "0000:86:00.0"),
      device("mellanox", "0000:5e:00.0", "0", "0000:5e:00.0", {{"koordinator.sh/rdma", "100"}})};
  writeReport(report, koord::apis::formatXpuDeviceInfos(devices));

  // No kubelet answers on the read-only port: pods come from the API server. Only the device
  // gates on, so nothing touches the fake cgroup tree.
  koord::testing::Subprocess koordlet(
      {koord::testing::koordBinary(), "koordlet",
       "-kubeconfig=" + koord::testing::needEnv(env, "KOORD_KUBECONFIG"),
       "-cgroup-root-dir=" + tree.path("cgroup").string(), "-cgroup-driver=cgroupfs",
       "-kubelet-insecure-tls",
       "-kubelet-read-only-port=" + std::to_string(koord::testing::freeLoopbackPort()),
       "-addr=127.0.0.1:" + std::to_string(koord::testing::freeLoopbackPort()),
       "-enable-node-metric-report=false", "-node-topology-sync-interval=1s",
       "-xpu-device-infos-dir=" + tree.path("infos").string(),
       "-feature-gates=Accelerators=true,RDMADevices=true,BECPUSuppress=false,"
       "BatchResource=false,CPUSetAllocator=false",
       "-tsdb-path=" + tree.path("metric-data").string(),
       "-prediction-checkpoint-filepath=" + tree.path("prediction-checkpoints").string(), "-v=4"},
      {{"NODE_NAME", node}, {"agent_mode", "hostMode"}});
  // The koordlet's log is the first thing to read when a step does not happen.
  auto require = [&](bool held, const char* step) {
    if (!held)
      FAIL(step << "\nkoordlet stderr:\n" << koordlet.stderrSoFar());
  };

  // 1. Created from the report, owned by the Node, with the GPU labels on it and on the Node.
  json::value dev;
  require(eventually(60s,
                     [&] {
                       auto d = api->getSync(named(kDevices, node));
                       if (!d)
                         return false;
                       dev = *d;
                       return deviceIds(dev).size() == 3;
                     }),
          "the Device with 3 devices");
  CHECK(deviceIds(dev) ==
        std::vector<std::string>{"gpu/GPU-aaaa/0", "gpu/GPU-bbbb/1", "rdma/0000:5e:00.0/0"});
  const auto& first = dev.at("spec").at("devices").at(0);
  CHECK(first.at("health") == true);
  CHECK(first.at("resources").at("koordinator.sh/gpu-core") == "100");
  CHECK(first.at("resources").at("koordinator.sh/gpu-memory") == "80Gi");
  CHECK(first.at("resources").at("koordinator.sh/gpu-memory-ratio") == "100");
  CHECK(first.at("topology").at("busID") == "0000:3b:00.0");
  CHECK(first.at("topology").at("pcieID") == "pci0000:3a");
  CHECK(first.at("topology").at("nodeID") == 0);
  CHECK(str(dev, {"metadata", "labels", "node.koordinator.sh/gpu-model"}) ==
        "NVIDIA-A100-SXM4-80GB");
  const auto& owner = dev.at("metadata").at("ownerReferences").at(0);
  CHECK(owner.at("kind") == "Node");
  CHECK(owner.at("uid").as_string() == node_uid);
  require(eventually(30s,
                     [&] {
                       auto n = api->getSync(named(kNodes, node));
                       return n &&
                              str(*n, {"metadata", "labels", "node.koordinator.sh/gpu-vendor"}) ==
                                  "nvidia" &&
                              str(*n, {"metadata", "labels", "node.koordinator.sh/gpu-model"}) ==
                                  "NVIDIA-A100-SXM4-80GB";
                     }),
          "the GPU labels on the Node");

  // 2. GPU-bbbb leaves the report: it leaves the Device.
  devices.erase(devices.begin() + 1);
  writeReport(report, koord::apis::formatXpuDeviceInfos(devices));
  require(eventually(30s,
                     [&] {
                       auto d = api->getSync(named(kDevices, node));
                       return d && deviceIds(*d) == std::vector<std::string>{"gpu/GPU-aaaa/0",
                                                                             "rdma/0000:5e:00.0/0"};
                     }),
          "GPU-bbbb gone from the Device");

  // 3. A garbled report changes nothing on the apiserver and is logged once with its file name,
  //    however many rounds it lasts.
  auto before = ok(api->getSync(named(kDevices, node)), "device");
  writeReport(report, R"([{"vendor":"nvidia","model":"NVIDIA-A1)");
  require(
      eventually(20s,
                 [&] { return koordlet.stderrSoFar().find(report.string()) != std::string::npos; }),
      "the garbled report logged");
  std::this_thread::sleep_for(4s);  // four more sync rounds
  auto during = ok(api->getSync(named(kDevices, node)), "device");
  CHECK(deviceIds(during) == std::vector<std::string>{"gpu/GPU-aaaa/0", "rdma/0000:5e:00.0/0"});
  CHECK(str(during, {"metadata", "resourceVersion"}) ==
        str(before, {"metadata", "resourceVersion"}));
  CHECK(count(koordlet.stderrSoFar(), report.string()) == 1);

  // 4. A good report again, with a new GPU: the Device follows.
  devices.push_back(gpu("GPU-cccc", "2", "0000:af:00.0"));
  writeReport(report, koord::apis::formatXpuDeviceInfos(devices));
  require(eventually(30s,
                     [&] {
                       auto d = api->getSync(named(kDevices, node));
                       return d && deviceIds(*d) == std::vector<std::string>{"gpu/GPU-aaaa/0",
                                                                             "gpu/GPU-cccc/2",
                                                                             "rdma/0000:5e:00.0/0"};
                     }),
          "GPU-cccc added to the Device");

  // 5. The koordlet stops; deleting the Node takes its Device with it (the garbage collector
  //    follows the owner reference).
  koordlet.signal(SIGTERM);
  auto exit = koordlet.wait(30s);
  CHECK_FALSE(exit.timed_out);
  ok(api->removeSync(named(kNodes, node)), "delete node");
  CHECK(eventually(60s, [&] {
    auto d = api->getSync(named(kDevices, node));
    return !d && koord::kube::isNotFound(d.error());
  }));
}
