#include <boost/json.hpp>

#include <catch2/catch.hpp>

#include "catch_expected.h"
#include "framework/node_info.h"

using namespace koord::roles::scheduler;
namespace json = boost::json;
namespace kube = koord::kube;

namespace {

constexpr std::int64_t kKi = 1024;
constexpr std::int64_t kGi = 1024 * 1024 * 1024;

kube::Expected<Node> decode(std::string_view text) {
  return decodeNode(json::parse(text));
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
