// The GPUDeviceResource and RDMADeviceResource plugins: the Device projection, the node resources
// and labels as Koordinator computes them, when they are written, and the patches.
#include "noderesource/device_resource.h"

#include <boost/json.hpp>

#include <catch2/catch.hpp>

#include "noderesource/node_status_patch.h"

using namespace koord::roles::manager::noderesource;
using koord::kube::Quantity;

namespace {

Quantity q(std::string_view text) {
  return Quantity::parse(text).value();
}

// Two healthy GPUs and one unhealthy, two healthy RDMA NICs and one unhealthy, as the koordlet
// reports them.
constexpr std::string_view kDevice = R"({
  "apiVersion":"scheduling.koordinator.sh/v1alpha1","kind":"Device",
  "metadata":{"name":"node-a","labels":{
    "node.koordinator.sh/gpu-model":"A100-SXM4-80GB",
    "node.koordinator.sh/gpu-driver-version":"535.104.05",
    "node.koordinator.sh/gpu-vendor":"nvidia","other":"x"}},
  "spec":{"devices":[
    {"type":"gpu","id":"GPU-0","minor":0,"health":true,"resources":{
      "koordinator.sh/gpu-core":"100","koordinator.sh/gpu-memory":"80Gi",
      "koordinator.sh/gpu-memory-ratio":"100"},"topology":{"socketID":0,"nodeID":0,"pcieID":"p0"}},
    {"type":"gpu","id":"GPU-1","minor":1,"health":true,"resources":{
      "koordinator.sh/gpu-core":100,"koordinator.sh/gpu-memory":"80Gi",
      "koordinator.sh/gpu-memory-ratio":"100"}},
    {"type":"gpu","id":"GPU-2","minor":2,"health":false,"resources":{
      "koordinator.sh/gpu-core":"100","koordinator.sh/gpu-memory":"80Gi",
      "koordinator.sh/gpu-memory-ratio":"100"}},
    {"type":"rdma","id":"0000:1f:00.0","minor":0,"health":true,"resources":{"koordinator.sh/rdma":"100"},
      "vfGroups":[{"vfs":[{"minor":0,"busID":"0000:1f:00.2"}]}]},
    {"type":"rdma","id":"0000:90:00.0","minor":1,"health":true,"resources":{"koordinator.sh/rdma":"100"}},
    {"type":"rdma","id":"0000:91:00.0","minor":2,"resources":{"koordinator.sh/rdma":"100"}}
  ]}})";

DeviceView device(std::string_view text = kDevice) {
  auto d = decodeDeviceView(boost::json::parse(text));
  REQUIRE(d.has_value());
  return *d;
}

std::string errorOf(std::string_view text) {
  auto d = decodeDeviceView(boost::json::parse(text));
  REQUIRE_FALSE(d.has_value());
  return d.error().message;
}

using Resources = std::map<std::string, std::optional<Quantity>, std::less<>>;

NodeView node(std::initializer_list<std::pair<const char*, const char*>> allocatable = {},
              koord::kube::Labels labels = {}) {
  NodeView n;
  n.name = "node-a";
  n.labels = std::move(labels);
  n.allocatable["cpu"] = q("32");
  for (const auto& [name, value] : allocatable)
    n.allocatable[name] = q(value);
  n.capacity = n.allocatable;
  return n;
}

}  // namespace

TEST_CASE("device view reads types, health, resources and the copied GPU labels",
          "[manager][noderesource][device]") {
  const auto d = device();
  CHECK(d.name == "node-a");
  CHECK(d.error.empty());
  // Only the two labels Koordinator's manager copies; vendor and others are not read.
  CHECK(d.labels == koord::kube::Labels{{"node.koordinator.sh/gpu-model", "A100-SXM4-80GB"},
                                        {"node.koordinator.sh/gpu-driver-version", "535.104.05"}});
  REQUIRE(d.devices.size() == 6);
  CHECK(d.devices[0].type == "gpu");
  CHECK(d.devices[0].health);
  CHECK(d.devices[1].resources.at("koordinator.sh/gpu-core") == q("100"));  // a JSON number
  CHECK_FALSE(d.devices[2].health);
  CHECK_FALSE(d.devices[5].health);  // health absent: false, as Go decodes it
  CHECK(d.devices[3].type == "rdma");

  // No spec, or no devices: a Device without entries, not an error.
  CHECK(device(R"({"metadata":{"name":"n"}})").devices.empty());
  CHECK(device(R"({"metadata":{"name":"n"},"spec":{"devices":null}})").devices.empty());
}

TEST_CASE("device view refuses malformed Devices, naming the member",
          "[manager][noderesource][device]") {
  struct Case {
    const char* name;
    std::string json;
    const char* error;
  };
  std::string too_many = R"({"metadata":{"name":"n"},"spec":{"devices":[)";
  for (std::size_t i = 0; i <= kMaxDeviceEntries; ++i)
    too_many += std::string(i ? "," : "") + R"({"type":"gpu"})";
  too_many += "]}}";
  std::string many_resources = R"({"metadata":{"name":"n"},"spec":{"devices":[{"resources":{)";
  for (std::size_t i = 0; i <= kMaxDeviceEntryResources; ++i)
    many_resources += (i ? ",\"r" : "\"r") + std::to_string(i) + "\":\"1\"";
  many_resources += "}}]}}";
  const Case cases[] = {
      {"not an object", "[]", "Device: expected object"},
      {"devices not a list", R"({"spec":{"devices":{}}})", "spec.devices: expected array"},
      {"entry not an object", R"({"spec":{"devices":[1]}})", "spec.devices[0]: expected object"},
      {"health not a bool", R"({"spec":{"devices":[{"type":"gpu","health":"yes"}]}})",
       "spec.devices[0].health"},
      {"bad quantity",
       R"({"spec":{"devices":[{},{"type":"gpu","resources":{"koordinator.sh/gpu-core":"lots"}}]}})",
       "spec.devices[1].resources[koordinator.sh/gpu-core]"},
      {"label not a string", R"({"metadata":{"labels":{"node.koordinator.sh/gpu-model":3}}})",
       "metadata.labels[node.koordinator.sh/gpu-model]"},
      {"too many entries", too_many, "more than 1024"},
      {"too many resources", many_resources, "spec.devices[0].resources: 65 resources"},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    CHECK_THAT(errorOf(c.json), Catch::Contains(c.error));
  }

  // The informer keeps such a Device with the error, so that it is not taken for a missing one.
  auto kept = projectDeviceView(boost::json::parse(
      R"({"metadata":{"name":"node-b"},"spec":{"devices":[{"health":"yes"}]}})"));
  REQUIRE(kept.has_value());
  CHECK(kept->name == "node-b");
  CHECK_THAT(kept->error, Catch::Contains("spec.devices[0].health"));
}

TEST_CASE("GPUDeviceResource sums the healthy GPUs and removes everything without a Device",
          "[manager][noderesource][device]") {
  struct Case {
    const char* name;
    std::optional<std::string> device;  // nullopt: no Device object
    Resources want;
    koord::kube::Labels labels;
  };
  const Case cases[] = {
      {"2 healthy GPUs and 1 unhealthy",
       std::string(kDevice),
       {{"koordinator.sh/gpu", q("200")},
        {"koordinator.sh/gpu-core", q("200")},
        {"koordinator.sh/gpu-memory", q("160Gi")},
        {"koordinator.sh/gpu-memory-ratio", q("200")}},
       {{"node.koordinator.sh/gpu-model", "A100-SXM4-80GB"},
        {"node.koordinator.sh/gpu-driver-version", "535.104.05"}}},
      {"no healthy GPU: koordinator.sh/gpu 0, the others left as they are",
       R"({"metadata":{"name":"n"},"spec":{"devices":[
         {"type":"gpu","health":false,"resources":{"koordinator.sh/gpu-core":"100"}},
         {"type":"rdma","health":true,"resources":{"koordinator.sh/gpu-core":"100"}}]}})",
       {{"koordinator.sh/gpu", q("0")}},
       {}},
      {"a gpu.shared a device reports is written, unknown resources are not",
       R"({"spec":{"devices":[{"type":"gpu","health":true,"resources":{
         "koordinator.sh/gpu-core":"50","koordinator.sh/gpu.shared":"1","example.com/x":"3"}}]}})",
       {{"koordinator.sh/gpu", q("50")},
        {"koordinator.sh/gpu-core", q("50")},
        {"koordinator.sh/gpu.shared", q("1")}},
       {}},
      {"Device removed",
       std::nullopt,
       {{"koordinator.sh/gpu", std::nullopt},
        {"koordinator.sh/gpu-core", std::nullopt},
        {"koordinator.sh/gpu-memory", std::nullopt},
        {"koordinator.sh/gpu-memory-ratio", std::nullopt},
        {"koordinator.sh/gpu.shared", std::nullopt}},
       {}},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    std::optional<DeviceView> d;
    if (c.device)
      d = device(*c.device);
    auto items = calculateGPUDeviceResource(d ? &*d : nullptr);
    CHECK(items.resources == c.want);
    CHECK(items.labels == c.labels);
    CHECK_FALSE(items.message.empty());
  }
  // The sum keeps the devices' format: 160Gi, not a byte count.
  auto d = device();
  CHECK(calculateGPUDeviceResource(&d).resources.at("koordinator.sh/gpu-memory")->toString() ==
        "160Gi");
}

TEST_CASE("RDMADeviceResource offers 100 per healthy RDMA device",
          "[manager][noderesource][device]") {
  struct Case {
    const char* name;
    std::optional<std::string> device;
    std::optional<Quantity> want;
  };
  const Case cases[] = {
      {"2 healthy of 3", std::string(kDevice), q("200")},
      {"none healthy: removed",
       R"({"spec":{"devices":[{"type":"rdma","health":false},{"type":"gpu","health":true}]}})",
       std::nullopt},
      {"Device removed", std::nullopt, std::nullopt},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    std::optional<DeviceView> d;
    if (c.device)
      d = device(*c.device);
    auto items = calculateRDMADeviceResource(d ? &*d : nullptr);
    CHECK(items.resources == Resources{{"koordinator.sh/rdma", c.want}});
    CHECK(items.labels.empty());
  }
}

TEST_CASE("device resources are written when they move past resourceDiffThreshold",
          "[manager][noderesource][device]") {
  const koord::apis::ColocationStrategy strategy;  // resourceDiffThreshold 0.1
  const auto d = device();
  const koord::kube::Labels gpu_labels = {{"node.koordinator.sh/gpu-model", "A100-SXM4-80GB"},
                                          {"node.koordinator.sh/gpu-driver-version", "535.104.05"}};
  const std::initializer_list<std::pair<const char*, const char*>> written = {
      {"koordinator.sh/gpu", "200"},          {"koordinator.sh/gpu-core", "200"},
      {"koordinator.sh/gpu-memory", "160Gi"}, {"koordinator.sh/gpu-memory-ratio", "200"},
      {"koordinator.sh/rdma", "200"},
  };
  struct Case {
    const char* name;
    NodeView node;
    const DeviceView* device;
    NodeResourcePlugins plugins;
    bool need_status;
    std::size_t resources;  // how many resources the write carries
    koord::kube::Labels changed_labels;
  };
  const Case cases[] = {
      {"a node without device resources", node({}, {}), &d, {}, true, 5, gpu_labels},
      {"already written", node(written, gpu_labels), &d, {}, false, 5, {}},
      {"gpu-memory within 10 %",
       node({{"koordinator.sh/gpu", "200"},
             {"koordinator.sh/gpu-core", "200"},
             {"koordinator.sh/gpu-memory", "150Gi"},
             {"koordinator.sh/gpu-memory-ratio", "200"},
             {"koordinator.sh/rdma", "200"}},
            gpu_labels),
       &d,
       {},
       false,
       5,
       {}},
      {"a GPU lost: 300 -> 200 is past 10 %",
       node({{"koordinator.sh/gpu", "300"},
             {"koordinator.sh/gpu-core", "300"},
             {"koordinator.sh/gpu-memory", "240Gi"},
             {"koordinator.sh/gpu-memory-ratio", "300"},
             {"koordinator.sh/rdma", "200"}},
            gpu_labels),
       &d,
       {},
       true,
       5,
       {}},
      {"only the driver label moved",
       node(written, {{"node.koordinator.sh/gpu-model", "A100-SXM4-80GB"},
                      {"node.koordinator.sh/gpu-driver-version", "470"}}),
       &d,
       {},
       false,
       5,
       {{"node.koordinator.sh/gpu-driver-version", "535.104.05"}}},
      {"Device removed: the resources go", node(written, gpu_labels), nullptr, {}, true, 6, {}},
      {"Device removed from a node without them: nothing to write",
       node({}, gpu_labels),
       nullptr,
       {},
       false,
       6,
       {}},
      {"both plugins off", node({}, {}), &d, {false, false}, false, 0, {}},
      {"RDMA only", node({}, {}), &d, {false, true}, true, 1, {}},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    auto sync = syncDeviceResources(c.node, c.device, c.plugins, strategy);
    CHECK(sync.need_status == c.need_status);
    CHECK(sync.resources.size() == c.resources);
    CHECK(sync.changed_labels == c.changed_labels);
    if (c.need_status)
      CHECK_THAT(sync.status_reason, Catch::Contains("diff is big than threshold"));
  }

  // A Device that could not be read leaves the node alone, even one with nothing on it.
  DeviceView broken;
  broken.name = "node-a";
  broken.error = "spec.devices[0].health: expected boolean";
  auto sync = syncDeviceResources(node(written, {}), &broken, {}, strategy);
  CHECK_FALSE(sync.need_status);
  CHECK(sync.resources.empty());
  CHECK(sync.changed_labels.empty());
  CHECK_THAT(sync.message, Catch::Contains("expected boolean"));
}

TEST_CASE("device resources ride in the batch status patch; labels in a metadata patch",
          "[manager][noderesource][device]") {
  const koord::apis::ColocationStrategy strategy;
  auto d = device();
  auto sync = syncDeviceResources(node(), &d, {}, strategy);
  auto patch = buildNodeStatusPatch(BatchValues{q("1000"), std::nullopt});
  addDeviceResourcesToPatch(patch, sync);
  const auto want = boost::json::parse(R"({"status":{
    "capacity":{"kubernetes.io/batch-cpu":"1k","kubernetes.io/batch-memory":null,
      "koordinator.sh/gpu":"200","koordinator.sh/gpu-core":"200",
      "koordinator.sh/gpu-memory":"160Gi","koordinator.sh/gpu-memory-ratio":"200",
      "koordinator.sh/rdma":"200"},
    "allocatable":{"kubernetes.io/batch-cpu":"1k","kubernetes.io/batch-memory":null,
      "koordinator.sh/gpu":"200","koordinator.sh/gpu-core":"200",
      "koordinator.sh/gpu-memory":"160Gi","koordinator.sh/gpu-memory-ratio":"200",
      "koordinator.sh/rdma":"200"}}})");
  CHECK(patch == want);

  // Removed resources are nulls, which a merge patch deletes.
  auto gone = syncDeviceResources(node(), nullptr, {false, true}, strategy);
  auto removal = buildNodeStatusPatch(BatchValues{});
  addDeviceResourcesToPatch(removal, gone);
  CHECK(removal.at("status").at("allocatable").at("koordinator.sh/rdma").is_null());
  CHECK(removal.at("status").at("capacity").at("koordinator.sh/rdma").is_null());

  CHECK(buildNodeLabelsPatch({{"node.koordinator.sh/gpu-model", "H100"}}) ==
        boost::json::parse(R"({"metadata":{"labels":{"node.koordinator.sh/gpu-model":"H100"}}})"));
}

TEST_CASE("device plugins are turned on and off by --noderesource-plugins as in Koordinator",
          "[manager][noderesource][device]") {
  struct Case {
    std::vector<std::string> flag;
    bool gpu;
    bool rdma;
  };
  const Case cases[] = {
      {{"MidResource", "BatchResource", "CPUNormalization", "ResourceAmplification",
        "GPUDeviceResource", "RDMADeviceResource"},
       true,
       true},
      {{"BatchResource"}, false, false},
      {{"*"}, true, true},
      {{"*", "-GPUDeviceResource"}, false, true},
      {{"-RDMADeviceResource", "*"}, true, false},
      {{"GPUDeviceResource", "-GPUDeviceResource"}, true, false},  // the first one wins
      {{"-GPUDeviceResourceX", "*"}, true, true},
      {{}, false, false},
  };
  for (const auto& c : cases) {
    INFO(c.flag.size());
    auto p = enabledNodeResourcePlugins(c.flag);
    CHECK(p.gpu == c.gpu);
    CHECK(p.rdma == c.rdma);
  }
}
