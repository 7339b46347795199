// RDMADeviceInject: rdma_cm and each allocated virtual function's uverbs device, found through a
// temporary sysfs and /dev tree, and what the hook server answers runtime-proxy.
#include "runtimehooks/rdma/rdma_devices.h"

#include <catch2/catch.hpp>
#include <string>

#include "koord/apis/features.h"
#include "koord/core/feature_gate.h"
#include "koordinator/runtime/v1alpha1/api.pb.h"
#include "runtimehooks/hook_table.h"
#include "runtimehooks/hookserver/runtime_hook_service.h"
#include "temp_tree.h"

using namespace koord::roles::koordlet;

namespace {

constexpr std::string_view kAllocated = "scheduling.koordinator.sh/device-allocated";

koord::kube::Annotations allocated(std::string_view value) {
  return {{std::string(kAllocated), std::string(value)}};
}

std::string vfs(std::initializer_list<const char*> bus_ids) {
  std::string list;
  for (const char* b : bus_ids)
    list += std::string(list.empty() ? "" : ",") + R"({"minor":1,"busID":")" + b + "\"}";
  return R"({"rdma":[{"minor":0,"resources":{"koordinator.sh/rdma":"1"},"extension":{"vfs":[)" +
         list + "]}}]}";
}

// Two VFs of one NIC, each with its uverbs device; a third function without one.
struct Host {
  koord::testing::TempTree tree{"koord-rdma"};
  RdmaHostPaths paths{tree.path("sys/bus/pci/devices"), tree.path("dev/infiniband")};
  Host() {
    tree.mkdirs("sys/bus/pci/devices/0000:1f:00.2/infiniband_verbs/uverbs2");
    tree.mkdirs("sys/bus/pci/devices/0000:1f:00.3/infiniband_verbs/uverbs3");
    tree.mkdirs("sys/bus/pci/devices/0000:1f:00.4");
    tree.write("dev/infiniband/rdma_cm", "");
    tree.write("dev/infiniband/uverbs2", "");
    tree.write("dev/infiniband/uverbs3", "");
  }
};

std::vector<std::string> paths(const std::vector<RdmaHostDevice>& devices) {
  std::vector<std::string> out;
  for (const auto& d : devices)
    out.push_back(d.path);
  return out;
}

}  // namespace

TEST_CASE("RDMADeviceInject: rdma_cm and the allocated functions' uverbs devices",
          "[koordlet][rdma]") {
  Host host;
  struct Case {
    const char* name;
    koord::kube::Annotations annotations;
    std::vector<std::string> want;
  };
  const Case cases[] = {
      {"no annotation", {}, {}},
      {"GPUs only", allocated(R"({"gpu":[{"minor":0,"resources":{}}]})"), {}},
      {"one VF",
       allocated(vfs({"0000:1f:00.2"})),
       {"/dev/infiniband/rdma_cm", "/dev/infiniband/uverbs2"}},
      {"two VFs",
       allocated(vfs({"0000:1f:00.2", "0000:1f:00.3"})),
       {"/dev/infiniband/rdma_cm", "/dev/infiniband/uverbs2", "/dev/infiniband/uverbs3"}},
      {"the same VF twice: once",
       allocated(vfs({"0000:1f:00.3", "0000:1f:00.3"})),
       {"/dev/infiniband/rdma_cm", "/dev/infiniband/uverbs3"}},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    auto devices = rdmaContainerDevices(c.annotations, host.paths);
    REQUIRE(devices.has_value());
    CHECK(paths(*devices) == c.want);
  }

  // The first uverbs device by name, as Koordinator reads the directory.
  host.tree.mkdirs("sys/bus/pci/devices/0000:1f:00.2/infiniband_verbs/uverbs10");
  host.tree.write("dev/infiniband/uverbs10", "");
  auto first = rdmaContainerDevices(allocated(vfs({"0000:1f:00.2"})), host.paths);
  REQUIRE(first.has_value());
  CHECK(paths(*first) ==
        std::vector<std::string>{"/dev/infiniband/rdma_cm", "/dev/infiniband/uverbs10"});
}

TEST_CASE("RDMADeviceInject: what cannot be resolved is an error", "[koordlet][rdma]") {
  Host host;
  struct Case {
    const char* name;
    std::string annotation;
    const char* error;
  };
  std::string too_many = R"({"rdma":[{"minor":0,"extension":{"vfs":[)";
  for (int i = 0; i < 300; ++i) {
    const std::string bus = "0000:2f:" + std::to_string(10 + i / 8) + "." + std::to_string(i % 8);
    host.tree.mkdirs("sys/bus/pci/devices/" + bus + "/infiniband_verbs/uverbs" +
                     std::to_string(100 + i));
    host.tree.write("dev/infiniband/uverbs" + std::to_string(100 + i), "");
    too_many += std::string(i ? "," : "") + R"({"busID":")" + bus + "\"}";
  }
  too_many += "]}}]}";
  const Case cases[] = {
      {"malformed", R"({"rdma":[{"minor":true}]})", "rdma[0].minor"},
      {"a whole device: no PCI address to find it by",
       R"({"rdma":[{"minor":4,"resources":{"koordinator.sh/rdma":"100"}}]})",
       "rdma[0] (minor 4): no virtual functions"},
      {"a busID that walks out of sysfs", vfs({"../../../../etc"}), "not a PCI address"},
      {"a function without a uverbs device", vfs({"0000:1f:00.4"}), "rdma[0].vfs[0]"},
      {"a function sysfs does not know", vfs({"0000:ff:00.1"}), "rdma[0].vfs[0]"},
      {"too many functions", too_many, "more than 256 devices"},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    auto devices = rdmaContainerDevices(allocated(c.annotation), host.paths);
    REQUIRE_FALSE(devices.has_value());
    CHECK_THAT(devices.error().message, Catch::Contains(c.error));
  }

  // A node without rdma_cm, or without the function's device node.
  std::filesystem::remove(host.tree.path("dev/infiniband/uverbs2"));
  auto no_node = rdmaContainerDevices(allocated(vfs({"0000:1f:00.2"})), host.paths);
  REQUIRE_FALSE(no_node.has_value());
  CHECK_THAT(no_node.error().message, Catch::Contains("uverbs2: no such device"));
  std::filesystem::remove(host.tree.path("dev/infiniband/rdma_cm"));
  auto no_cm = rdmaContainerDevices(allocated(vfs({"0000:1f:00.3"})), host.paths);
  REQUIRE_FALSE(no_cm.has_value());
  CHECK_THAT(no_cm.error().message, Catch::Contains("rdma_cm: no such device"));
}

TEST_CASE("RDMADeviceInject: the hook server leaves the container alone when nothing resolves",
          "[koordlet][rdma]") {
  koord::FeatureGate gates(koord::apis::koordletFeatures());
  CHECK_FALSE(gates.enabled("RDMADeviceInject"));
  gates.set({{"RDMADeviceInject", true}});
  const auto registry = enabledHooks(koordletRuntimeHooks(), gates);
  auto request = [](std::optional<std::string> annotation) {
    hookapi::ContainerResourceHookRequest req;
    req.mutable_pod_meta()->set_name("rdma-pod");
    req.mutable_container_meta()->set_name("main");
    if (annotation)
      (*req.mutable_pod_annotations())[std::string(kAllocated)] = *annotation;
    return req;
  };
  // No such function on this machine's sysfs, a malformed annotation, no annotation: nothing.
  for (const auto& annotation : {std::optional<std::string>(vfs({"0000:ff:1f.7"})),
                                 std::optional<std::string>("{"), std::optional<std::string>()}) {
    auto resp =
        containerHookAnswer(HookStage::kPreCreateContainer, request(annotation), registry, nullptr);
    CHECK(resp.container_devices().empty());
    CHECK(resp.container_envs().empty());
  }
}
