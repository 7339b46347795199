#include <boost/json.hpp>

#include <optional>
#include <string>

#include <catch2/catch.hpp>

#include "catch_expected.h"
#include "framework/node_info.h"
#include "log_lines.h"

using namespace koord::roles::scheduler;
namespace json = boost::json;
namespace kube = koord::kube;

namespace {

constexpr std::int64_t kKi = 1024;
constexpr std::int64_t kGi = 1024 * 1024 * 1024;

kube::Expected<Node> decode(std::string_view text) {
  return decodeNode(json::parse(text));
}

// A node with 16 CPUs, 64 GiB and batch resources, and `reservation` as its
// node.koordinator.sh/reservation annotation when given.
kube::Expected<Node> reservedNode(std::string_view name, std::optional<std::string> reservation) {
  json::object meta{{"name", name}};
  if (reservation)
    meta["annotations"] = json::object{{"node.koordinator.sh/reservation", *reservation}};
  const json::object resources{{"cpu", "16"},
                               {"memory", "64Gi"},
                               {"pods", "110"},
                               {"kubernetes.io/batch-cpu", "8000"},
                               {"kubernetes.io/batch-memory", "16Gi"}};
  return decodeNode(
      json::object{{"metadata", meta},
                   {"status", json::object{{"allocatable", resources}, {"capacity", resources}}}});
}

}  // namespace

TEST_CASE("a co-location node with taints and batch resources") {
  auto node = decode(R"({
    "apiVersion": "v1", "kind": "Node",
    "metadata": {
      "name": "node-1", "uid": "7a1d2c3b-0000-4000-8000-000000000001",
      "labels": {"kubernetes.io/hostname": "node-1", "topology.kubernetes.io/zone": "a"},
      "annotations": {
        "node.alpha.kubernetes.io/ttl": "0",
        "node.koordinator.sh/raw-allocatable": "{\"cpu\":\"16\"}",
        "scheduling.koordinator.sh/usage-thresholds": "{\"usageThresholds\":{\"cpu\":65}}",
        "volumes.kubernetes.io/controller-managed-attach-detach": "true"
      }
    },
    "spec": {
      "podCIDR": "10.244.1.0/24", "unschedulable": true,
      "taints": [
        {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule",
         "timeAdded": "2024-05-01T10:00:00Z"},
        {"key": "dedicated", "value": "batch", "effect": "PreferNoSchedule"}
      ]
    },
    "status": {
      "capacity": {"cpu": "16", "memory": "65843576Ki", "ephemeral-storage": "100Gi",
                   "pods": "110", "hugepages-2Mi": "0", "kubernetes.io/batch-cpu": "9000",
                   "kubernetes.io/batch-memory": "20Gi"},
      "allocatable": {"cpu": "15800m", "memory": "65741176Ki", "ephemeral-storage": "92Gi",
                      "pods": "110", "kubernetes.io/batch-cpu": "8500",
                      "kubernetes.io/batch-memory": "18Gi"}
    }
  })");
  REQUIRE(node);
  CHECK(node->name == "node-1");
  CHECK(node->uid == "7a1d2c3b-0000-4000-8000-000000000001");
  CHECK(node->labels ==
        kube::Labels{{"kubernetes.io/hostname", "node-1"}, {"topology.kubernetes.io/zone", "a"}});
  CHECK(node->annotations ==
        kube::Labels{
            {"node.koordinator.sh/raw-allocatable", "{\"cpu\":\"16\"}"},
            {"scheduling.koordinator.sh/usage-thresholds", "{\"usageThresholds\":{\"cpu\":65}}"}});
  CHECK(node->unschedulable);
  REQUIRE(node->taints.size() == 2);
  CHECK(node->taints[0] ==
        kube::Taint{"node.kubernetes.io/unschedulable", "", kube::TaintEffect::kNoSchedule});
  CHECK(node->taints[1] == kube::Taint{"dedicated", "batch", kube::TaintEffect::kPreferNoSchedule});

  CHECK(node->allocatable.milli_cpu == 15800);
  CHECK(node->allocatable.memory == 65741176 * kKi);
  CHECK(node->allocatable.ephemeral_storage == 92 * kGi);
  CHECK(node->allocatable.allowed_pod_number == 110);
  CHECK(node->allocatable.scalarValue("kubernetes.io/batch-cpu") == 8500);
  CHECK(node->allocatable.scalarValue("kubernetes.io/batch-memory") == 18 * kGi);
  CHECK(node->capacity.milli_cpu == 16000);
  CHECK(node->capacity.scalarValue("kubernetes.io/batch-cpu") == 9000);
  CHECK(node->capacity.get("kubernetes.io/batch-memory") == 20 * kGi);
  CHECK(node->capacity.scalarValue("hugepages-2Mi") == 0);
}

TEST_CASE("a bare node decodes to zeros") {
  auto node = decode(R"({"metadata": {"name": "n"}})");
  REQUIRE(node);
  CHECK(node->name == "n");
  CHECK_FALSE(node->unschedulable);
  CHECK(node->taints.empty());
  CHECK(node->allocatable == Resource{});
  CHECK(node->annotations.empty());
}

TEST_CASE("bad nodes are refused with the field's path") {
  struct Case {
    const char* name;
    const char* node;
    const char* error;
  };
  const Case cases[] = {
      {"not an object", R"("node")", "Node: expected object"},
      {"metadata not an object", R"({"metadata": []})", "metadata: expected object"},
      {"unschedulable not a boolean", R"({"spec": {"unschedulable": "yes"}})",
       "spec.unschedulable: expected boolean"},
      {"unknown taint effect", R"({"spec": {"taints": [{"key": "a", "effect": "Sometimes"}]}})",
       "spec.taints[0].effect: unsupported value \"Sometimes\""},
      {"empty taint effect", R"({"spec": {"taints": [{"key": "a"}]}})",
       "spec.taints[0].effect: unsupported value \"\""},
      {"bad allocatable quantity", R"({"status": {"allocatable": {"cpu": "x"}}})",
       "status.allocatable[cpu]: "},
      {"negative capacity", R"({"status": {"capacity": {"memory": "-1"}}})",
       "status.capacity[memory]: must be greater than or equal to 0"},
      {"bad resource name", R"({"status": {"allocatable": {"a/b/c": "1"}}})",
       "status.allocatable[a/b/c]: invalid resource name"},
      {"kept annotation not a string",
       R"({"metadata": {"annotations": {"node.koordinator.sh/raw-allocatable": 1}}})",
       "metadata.annotations[node.koordinator.sh/raw-allocatable]: expected string"},
  };
  for (const auto& c : cases) {
    SECTION(c.name) {
      auto node = decode(c.node);
      REQUIRE_FALSE(node);
      CHECK_THAT(node.error().message, Catch::StartsWith(c.error));
    }
  }
}

TEST_CASE("the node reservation trims allocatable as Koordinator does") {
  struct Case {
    const char* name;
    std::optional<std::string> reservation;
    std::int64_t milli_cpu;
    std::int64_t memory;
  };
  const Case cases[] = {
      {"no annotation", std::nullopt, 16000, 64 * kGi},
      {"an empty annotation", "", 16000, 64 * kGi},
      {"resources only", R"({"resources": {"cpu": "2", "memory": "4Gi"}})", 14000, 60 * kGi},
      {"reservedCPUs replace resources' cpu",
       R"({"resources": {"cpu": "1", "memory": "1Gi"}, "reservedCPUs": "0-3"})", 12000, 63 * kGi},
      {"the Default policy trims", R"({"reservedCPUs": "0,2", "applyPolicy": "Default"})", 14000,
       64 * kGi},
      {"ReservedCPUsOnly leaves allocatable to the kubelet",
       R"({"resources": {"memory": "4Gi"}, "reservedCPUs": "0-3",
           "applyPolicy": "ReservedCPUsOnly"})",
       16000, 64 * kGi},
      {"batch resources keep their values",
       R"({"resources": {"cpu": "1", "kubernetes.io/batch-cpu": "1000",
                         "kubernetes.io/batch-memory": "1Gi"}})",
       15000, 64 * kGi},
      {"never below zero", R"({"resources": {"cpu": "64", "memory": "1Ti"}})", 0, 0},
      {"a resource the node does not report is not added",
       R"({"resources": {"nvidia.com/gpu": "1", "memory": "1Gi"}})", 16000, 63 * kGi},
  };
  for (const Case& c : cases) {
    SECTION(c.name) {
      auto node = reservedNode("trim-node", c.reservation);
      REQUIRE(node);
      CHECK(node->allocatable.milli_cpu == c.milli_cpu);
      CHECK(node->allocatable.memory == c.memory);
      CHECK(node->allocatable.allowed_pod_number == 110);
      CHECK(node->allocatable.scalarValue("kubernetes.io/batch-cpu") == 8000);
      CHECK(node->allocatable.scalarValue("kubernetes.io/batch-memory") == 16 * kGi);
      CHECK(node->allocatable.scalarValue("nvidia.com/gpu") == 0);
      // Capacity is what the node has; only allocatable loses the reservation.
      CHECK(node->capacity.milli_cpu == 16000);
      CHECK(node->capacity.memory == 64 * kGi);
    }
  }
}

TEST_CASE("a malformed node reservation is ignored and logged once") {
  struct Case {
    const char* name;
    const char* reservation;
  };
  const Case cases[] = {
      {"not JSON", R"({"resources":)"},
      {"bad cpu list", R"({"reservedCPUs": "3-1"})"},
      {"bad policy", R"({"resources": {"cpu": "2"}, "applyPolicy": "Never"})"},
      {"negative amount", R"({"resources": {"cpu": "-2"}})"},
  };
  for (const Case& c : cases) {
    SECTION(c.name) {
      koord::testing::LogLines log;
      const std::string name = std::string("malformed-") + c.name;
      for (int i = 0; i < 3; ++i) {
        auto node = reservedNode(name, c.reservation);
        REQUIRE(node);
        CHECK(node->allocatable.milli_cpu == 16000);
        CHECK(node->allocatable.memory == 64 * kGi);
      }
      CHECK(log.count("node " + name + ": ignoring a malformed node reservation") == 1);
      CHECK(log.problems() == 1);
      // A new value is a new warning.
      REQUIRE(reservedNode(name, R"({"reservedCPUs": "x"})"));
      CHECK(log.problems() == 2);
    }
  }
}

TEST_CASE("status.images decode with their names interned and their sizes") {
  auto node = decode(R"({
    "metadata": {"name": "imaged"},
    "status": {"images": [
      {"names": ["registry.k8s.io/pause@sha256:7031c1b2", "registry.k8s.io/pause:3.9"],
       "sizeBytes": 321520},
      {"names": ["docker.io/library/nginx:1.25", "registry.k8s.io/pause:3.9"], "sizeBytes": 70000000},
      {"sizeBytes": 5}
    ]}
  })");
  REQUIRE(node);
  const NodeImages& images = node->images;
  CHECK(images.imageCount() == 3);
  CHECK(images.names().size() == 3);  // pause:3.9 once, with the first image that lists it
  const auto* pause = images.find("registry.k8s.io/pause:3.9");
  REQUIRE(pause != nullptr);
  CHECK(images.sizeBytes(*pause) == 321520);
  CHECK(imageName(pause->id) == "registry.k8s.io/pause:3.9");
  const auto* nginx = images.find("docker.io/library/nginx:1.25");
  REQUIRE(nginx != nullptr);
  CHECK(images.sizeBytes(*nginx) == 70000000);
  CHECK(images.find("docker.io/library/nginx") == nullptr);

  // A second node with the same names shares their interned copies.
  auto twin = decode(R"({"metadata": {"name": "twin"}, "status": {"images": [
    {"names": ["registry.k8s.io/pause:3.9"], "sizeBytes": 1}]}})");
  REQUIRE(twin);
  REQUIRE(twin->images.find("registry.k8s.io/pause:3.9") != nullptr);
  CHECK(twin->images.find("registry.k8s.io/pause:3.9")->id == pause->id);

  auto bare = decode(R"({"metadata": {"name": "bare"}, "status": {}})");
  REQUIRE(bare);
  CHECK(bare->images.empty());
  CHECK(bare->images.imageCount() == 0);
}

TEST_CASE("bad status.images are refused whole, interning nothing") {
  auto withImages = [](json::array images) {
    return decodeNode(json::object{{"metadata", json::object{{"name", "n"}}},
                                   {"status", json::object{{"images", std::move(images)}}}});
  };
  auto image = [](std::size_t names, std::int64_t size) {
    json::array list;
    for (std::size_t i = 0; i < names; ++i)
      list.push_back(json::string("refused/image:" + std::to_string(i)));
    return json::object{{"names", std::move(list)}, {"sizeBytes", size}};
  };
  const std::size_t interned = internedImageNames();

  SECTION("more images than the bound") {
    json::array images;
    for (std::size_t i = 0; i <= kMaxNodeImages; ++i)
      images.push_back(image(1, 1));
    auto node = withImages(std::move(images));
    REQUIRE_FALSE(node);
    CHECK(node.error().message == "status.images: 4097 images, more than the scheduler's 4096");
  }
  SECTION("more names than the bound") {
    auto node = withImages(json::array{image(1, 1), image(kMaxImageNames + 1, 1)});
    REQUIRE_FALSE(node);
    CHECK(node.error().message ==
          "status.images[1].names: 257 names, more than the scheduler's 256");
  }
  SECTION("a negative size") {
    auto node = withImages(json::array{image(2, 1), image(1, -1)});
    REQUIRE_FALSE(node);
    CHECK(node.error().message == "status.images[1].sizeBytes: must be greater than or equal to 0");
  }
  SECTION("a name that is not a string") {
    auto node = withImages(json::array{json::object{{"names", json::array{1}}}});
    REQUIRE_FALSE(node);
    CHECK_THAT(node.error().message,
               Catch::StartsWith("status.images[0].names[0]: expected string"));
  }
  SECTION("images not a list") {
    auto node = decodeNode(json::parse(R"({"status": {"images": {}}})"));
    REQUIRE_FALSE(node);
    CHECK_THAT(node.error().message, Catch::StartsWith("status.images: expected"));
  }
  CHECK(internedImageNames() == interned);
}
