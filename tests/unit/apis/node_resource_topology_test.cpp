// The NodeResourceTopology projection and Koordinator's CPU annotations: an object as
// Koordinator's koordlet writes it decodes field by field and encodes back to the same object,
// each annotation reads Koordinator's JSON and is written back as Go marshals it, and malformed
// or oversized input is refused with a message naming the annotation and the member.
#include "koord/apis/node_resource_topology.h"

#include <boost/json.hpp>

#include <catch2/catch.hpp>

#include <string>

#include <fmt/format.h>

#include "catch_expected.h"
#include "koord/apis/input_limits.h"

using namespace koord::apis;
namespace kube = koord::kube;
namespace json = boost::json;
using Catch::Matchers::Contains;

namespace {

kube::Expected<NodeResourceTopology> decode(std::string_view text) {
  return decodeNodeResourceTopology(json::parse(text));
}

kube::Quantity q(std::string_view text) {
  return kube::Quantity::parse(text).value();
}

std::string errorOf(const kube::Expected<NodeResourceTopology>& r) {
  REQUIRE_FALSE(r.has_value());
  return r.error().message;
}

template <typename T>
std::string errorOf(const kube::Expected<T>& r) {
  REQUIRE_FALSE(r.has_value());
  return r.error().message;
}

kube::Labels one(std::string_view key, std::string_view value) {
  return {{std::string(key), std::string(value)}};
}

// What Koordinator's koordlet leaves on a two-socket node (trimmed to two CPUs per node).
const char* const kKoordinatorObject = R"({
  "apiVersion": "topology.node.k8s.io/v1alpha1", "kind": "NodeResourceTopology",
  "metadata": {
    "name": "node-a", "uid": "nrt-uid", "resourceVersion": "42",
    "creationTimestamp": "2024-05-01T10:00:00Z",
    "labels": {"app.kubernetes.io/managed-by": "Koordinator"},
    "annotations": {
      "kubelet.koordinator.sh/cpu-manager-policy": "{\"policy\":\"static\",\"options\":{\"full-pcpus-only\":\"true\"},\"reservedCPUs\":\"0\"}",
      "node.koordinator.sh/cpu-topology": "{\"detail\":[{\"id\":0,\"core\":0,\"socket\":0,\"node\":0},{\"id\":1,\"core\":0,\"socket\":0,\"node\":0},{\"id\":2,\"core\":1,\"socket\":1,\"node\":1},{\"id\":3,\"core\":1,\"socket\":1,\"node\":1}]}",
      "node.koordinator.sh/cpu-shared-pools": "[{\"socket\":0,\"node\":0,\"cpuset\":\"0-1\"},{\"socket\":1,\"node\":1,\"cpuset\":\"3\"}]",
      "node.koordinator.sh/be-cpu-shared-pools": "[{\"socket\":0,\"node\":0,\"cpuset\":\"0-1\"},{\"socket\":1,\"node\":1,\"cpuset\":\"2-3\"}]",
      "node.koordinator.sh/pod-cpu-allocs": "[{\"namespace\":\"default\",\"name\":\"guaranteed\",\"uid\":\"u-1\",\"cpuset\":\"2\",\"managedByKubelet\":true}]",
      "node.koordinator.sh/cpu-basic-info": "{\"cpuModel\":\"Intel(R) Xeon(R) Platinum\",\"hyperThreadEnabled\":true,\"vendorID\":\"GenuineIntel\"}"
    }
  },
  "topologyPolicies": ["None"],
  "zones": [
    {"name": "node-0", "type": "Node", "resources": [
      {"name": "cpu", "capacity": "2", "allocatable": "2", "available": "2"},
      {"name": "hugepages-1Gi", "capacity": "0", "allocatable": "0", "available": "0"},
      {"name": "hugepages-2Mi", "capacity": "0", "allocatable": "0", "available": "0"},
      {"name": "memory", "capacity": "16318372Ki", "allocatable": "16318372Ki", "available": "16318372Ki"}]},
    {"name": "node-1", "type": "Node", "parent": "socket-1",
     "costs": [{"name": "node-0", "value": 21}],
     "attributes": [{"name": "vendor", "value": "x"}],
     "resources": [
      {"name": "cpu", "capacity": 2, "allocatable": 2, "available": 1},
      {"name": "memory", "capacity": "16Gi", "allocatable": "16Gi", "available": "8Gi"}]}
  ]
})";

}  // namespace

TEST_CASE("node resource topology: Koordinator's object decodes field by field", "[apis][nrt]") {
  auto r = decode(kKoordinatorObject);
  REQUIRE(r.has_value());
  CHECK(r->name == "node-a");
  CHECK(r->uid == "nrt-uid");
  CHECK(r->resource_version == "42");
  CHECK(r->labels.at("app.kubernetes.io/managed-by") == "Koordinator");
  CHECK(r->annotations.size() == 6);
  CHECK(r->topology_policies == std::vector<std::string>{"None"});
  REQUIRE(r->zones.size() == 2);
  const Zone* n0 = r->zone("node-0");
  REQUIRE(n0 != nullptr);
  CHECK(n0->type == "Node");
  REQUIRE(n0->resource("cpu") != nullptr);
  CHECK(n0->resource("cpu")->allocatable == q("2"));
  CHECK(n0->resource("memory")->allocatable == q("16318372Ki"));
  CHECK(n0->resource("gpu") == nullptr);
  const Zone* n1 = r->zone("node-1");
  REQUIRE(n1 != nullptr);
  CHECK(n1->parent == "socket-1");
  CHECK(n1->costs == std::vector<ZoneCost>{{"node-0", 21}});
  CHECK(n1->attributes == std::vector<ZoneAttribute>{{"vendor", "x"}});
  CHECK(n1->resource("cpu")->capacity == q("2"));  // a JSON number
  CHECK(n1->resource("cpu")->available == q("1"));
  CHECK(n1->resource("memory")->available == q("8Gi"));
  CHECK(r->zone("node-2") == nullptr);
}

TEST_CASE("node resource topology: encode then decode gives the same object", "[apis][nrt]") {
  auto first = decode(kKoordinatorObject);
  REQUIRE(first.has_value());
  const json::value encoded = encodeNodeResourceTopology(*first);
  CHECK(encoded.at("apiVersion") == "topology.node.k8s.io/v1alpha1");
  CHECK(encoded.at("kind") == "NodeResourceTopology");
  // The zone without costs writes none.
  CHECK(encoded.at("zones").at(0).as_object().if_contains("costs") == nullptr);
  CHECK(encoded.at("zones").at(1).at("resources").at(1).at("capacity") == "16Gi");
  auto second = decodeNodeResourceTopology(encoded);
  REQUIRE(second.has_value());
  CHECK(second->name == first->name);
  CHECK(second->uid == first->uid);
  CHECK(second->resource_version == first->resource_version);
  CHECK(second->labels == first->labels);
  CHECK(second->annotations == first->annotations);
  CHECK(second->topology_policies == first->topology_policies);
  CHECK(second->zones == first->zones);

  // The CRD requires both lists: an empty object still writes them.
  NodeResourceTopology bare;
  bare.name = "node-b";
  const json::value empty = encodeNodeResourceTopology(bare);
  CHECK(empty.at("topologyPolicies").as_array().empty());
  CHECK(empty.at("zones").as_array().empty());
  CHECK(empty.at("metadata").as_object().size() == 1);
}

TEST_CASE("node resource topology: a bare object takes the zero values", "[apis][nrt]") {
  auto r = decode(R"({"metadata": {"name": "n"}, "zones": null,
                      "topologyPolicies": [null, "None"], "unknown": 1})");
  REQUIRE(r.has_value());
  CHECK(r->zones.empty());
  CHECK(r->topology_policies == std::vector<std::string>{"", "None"});
  auto zone = decode(R"({"metadata": {"name": "n"},
                         "zones": [{"name": "node-0", "resources": [{"name": "cpu"}]}]})");
  REQUIRE(zone.has_value());
  CHECK(zone->zones.at(0).resources.at(0).allocatable.isZero());
}

TEST_CASE("node resource topology: malformed objects are refused by path", "[apis][nrt]") {
  struct Case {
    const char* json;
    const char* error;
  };
  const Case cases[] = {
      {R"([])", "NodeResourceTopology: expected object"},
      {R"({"metadata": {"name": "n"}, "zones": {}})", "zones: expected array"},
      {R"({"metadata": {"name": "n"}, "zones": [5]})", "zones[0]: expected object"},
      {R"({"metadata": {"name": "n"}, "zones": [{"name": 1}]})", "zones[0].name"},
      {R"({"metadata": {"name": "n"}, "zones": [{"resources": [{"name": "cpu",
          "allocatable": "two"}]}]})",
       "zones[0].resources[0].allocatable"},
      {R"({"metadata": {"name": "n"}, "zones": [{"costs": [{"name": "x", "value": 1.5}]}]})",
       "zones[0].costs[0].value"},
      {R"({"metadata": {"name": "n"}, "topologyPolicies": [1]})", "topologyPolicies[0]"},
      {R"({"metadata": {"name": 5}})", "metadata.name"},
  };
  for (const auto& c : cases) {
    INFO(c.json);
    CHECK_THAT(errorOf(decode(c.json)), Contains(c.error));
  }
}

TEST_CASE("node resource topology: lists over their bounds are refused", "[apis][nrt]") {
  json::array zones;
  for (std::size_t i = 0; i <= kMaxNRTZones; ++i)
    zones.push_back(json::object{{"name", nodeZoneName(static_cast<int>(i))}});
  json::object o{{"metadata", json::object{{"name", "n"}}}, {"zones", zones}};
  CHECK_THAT(errorOf(decodeNodeResourceTopology(o)),
             Contains("zones") && Contains(fmt::format("the {} allowed", kMaxNRTZones)));

  json::array resources;
  for (std::size_t i = 0; i <= kMaxNRTZoneResources; ++i)
    resources.push_back(json::object{{"name", fmt::format("r{}", i)}});
  o["zones"] = json::array{json::object{{"name", "node-0"}, {"resources", resources}}};
  CHECK_THAT(errorOf(decodeNodeResourceTopology(o)), Contains("zones[0].resources"));

  json::array policies(kMaxNRTTopologyPolicies + 1, json::value("None"));
  o.erase("zones");
  o["topologyPolicies"] = policies;
  CHECK_THAT(errorOf(decodeNodeResourceTopology(o)), Contains("topologyPolicies"));
}

TEST_CASE("node resource topology: zone names", "[apis][nrt]") {
  CHECK(nodeZoneName(0) == "node-0");
  CHECK(nodeZoneName(12) == "node-12");
  CHECK(numaNodeOfZone("node-3") == std::optional<int>(3));
  CHECK(numaNodeOfZone("node-12") == std::optional<int>(12));
  for (const char* bad : {"node-", "node--1", "node-+1", "node-1a", "socket-0", "node-99999999999"})
    CHECK_FALSE(numaNodeOfZone(bad).has_value());
}

TEST_CASE("cpu annotations: Koordinator's values read and write back the same", "[apis][nrt]") {
  auto nrt = decode(kKoordinatorObject);
  REQUIRE(nrt.has_value());
  const auto& a = nrt->annotations;

  auto topology = parseCPUTopologyAnnotation(a);
  REQUIRE(topology.has_value());
  REQUIRE(topology->detail.size() == 4);
  CHECK(topology->detail[2] == CPUInfo{.id = 2, .core = 1, .socket = 1, .node = 1});
  CHECK(formatCPUTopology(*topology) == a.at(std::string(kAnnotationNodeCPUTopology)));

  auto pools = parseCPUSharedPools(a);
  REQUIRE(pools.has_value());
  CHECK(*pools == std::vector<CPUSharedPool>{{0, 0, "0-1"}, {1, 1, "3"}});
  CHECK(formatCPUSharedPools(*pools) == a.at(std::string(kAnnotationNodeCPUSharedPools)));
  auto be_pools = parseCPUSharedPools(a, kAnnotationNodeBECPUSharedPools);
  REQUIRE(be_pools.has_value());
  CHECK(be_pools->at(1).cpuset == "2-3");

  auto allocs = parsePodCPUAllocs(a);
  REQUIRE(allocs.has_value());
  REQUIRE(allocs->size() == 1);
  CHECK(allocs->at(0) == PodCPUAlloc{"default", "guaranteed", "u-1", "2", true});
  CHECK(formatPodCPUAllocs(*allocs) == a.at(std::string(kAnnotationNodeCPUAllocs)));

  auto policy = parseKubeletCPUManagerPolicy(a);
  REQUIRE(policy.has_value());
  CHECK(policy->policy == "static");
  CHECK(policy->options.at("full-pcpus-only") == "true");
  CHECK(policy->reserved_cpus == "0");
  CHECK(formatKubeletCPUManagerPolicy(*policy) ==
        a.at(std::string(kAnnotationKubeletCPUManagerPolicy)));

  auto basic = parseCPUBasicInfo(a);
  REQUIRE(basic.has_value());
  REQUIRE(basic->has_value());
  CHECK((*basic)->cpu_model == "Intel(R) Xeon(R) Platinum");
  CHECK((*basic)->hyper_thread_enabled);
  CHECK_FALSE((*basic)->turbo_enabled);
  CHECK(formatCPUBasicInfo(**basic) == a.at(std::string(kAnnotationCPUBasicInfo)));
}

TEST_CASE("cpu annotations: absent, null and empty values are Go's zero values", "[apis][nrt]") {
  const kube::Labels none;
  CHECK(parseCPUTopologyAnnotation(none).value().detail.empty());
  CHECK(parseCPUSharedPools(none).value().empty());
  CHECK(parsePodCPUAllocs(none).value().empty());
  CHECK(parseKubeletCPUManagerPolicy(none).value() == KubeletCPUManagerPolicy{});
  CHECK_FALSE(parseCPUBasicInfo(none).value().has_value());

  CHECK(parseCPUSharedPools(one(kAnnotationNodeCPUSharedPools, "null")).value().empty());
  CHECK(parsePodCPUAllocs(one(kAnnotationNodeCPUAllocs, "null")).value().empty());
  CHECK(parseCPUTopologyAnnotation(one(kAnnotationNodeCPUTopology, "{}")).value().detail.empty());
  CHECK(parseKubeletCPUManagerPolicy(one(kAnnotationKubeletCPUManagerPolicy, "{}")).value() ==
        KubeletCPUManagerPolicy{});
  // A null item is the zero pool; unknown members are ignored.
  auto pools = parseCPUSharedPools(
      one(kAnnotationNodeCPUSharedPools, R"([null, {"node": 1, "extra": [1]}])"));
  REQUIRE(pools.has_value());
  CHECK(*pools == std::vector<CPUSharedPool>{{0, 0, ""}, {0, 1, ""}});

  // What the koordlet writes for nothing: Go's marshalling of nil lists and empty structs.
  CHECK(formatCPUTopology({}) == "{}");
  CHECK(formatCPUSharedPools({}) == "null");
  CHECK(formatPodCPUAllocs({}) == "null");
  CHECK(formatKubeletCPUManagerPolicy({}) == "{}");
  CHECK(formatCPUBasicInfo({}) == "{}");
  // omitempty members: a pool without CPUs, a pod not managed by the kubelet.
  const CPUSharedPool empty_pool{1, 1, ""};
  CHECK(formatCPUSharedPools({&empty_pool, 1}) == R"([{"socket":1,"node":1}])");
  const PodCPUAlloc alloc{"", "p", "", "1", false};
  CHECK(formatPodCPUAllocs({&alloc, 1}) == R"([{"name":"p","cpuset":"1"}])");
}

TEST_CASE("cpu annotations: malformed values are refused with the key and member", "[apis][nrt]") {
  struct Case {
    std::string_view key;
    std::string value;
    const char* error;
  };
  const Case cases[] = {
      {kAnnotationNodeCPUTopology, "{", "not JSON"},
      {kAnnotationNodeCPUTopology, "[]", "expected object"},
      {kAnnotationNodeCPUTopology, R"({"detail": {}})", "detail: expected array"},
      {kAnnotationNodeCPUTopology, R"({"detail": [{"id": "0"}]})", "detail[0].id"},
      {kAnnotationNodeCPUTopology, R"({"detail": [{"id": 0.5}]})", "detail[0].id"},
      {kAnnotationNodeCPUTopology, R"({"detail": [{"id": 1, "core": 4294967296}]})",
       "detail[0].core"},
      {kAnnotationNodeCPUTopology, R"({"detail": [{"id": -1}]})", "negative"},
      {kAnnotationNodeCPUTopology, R"({"detail": [{"id": 8192}]})", "largest CPU id"},
      {kAnnotationNodeCPUTopology, R"({"detail": [1]})", "detail[0]: expected object"},
      {kAnnotationNodeCPUSharedPools, R"({"socket": 0})", "expected array"},
      {kAnnotationNodeCPUSharedPools, R"([{"cpuset": 1}])", "[0].cpuset"},
      {kAnnotationNodeCPUSharedPools, R"([{"node": "1"}])", "[0].node"},
      {kAnnotationNodeCPUAllocs, R"([{"managedByKubelet": "true"}])", "[0].managedByKubelet"},
      {kAnnotationNodeCPUAllocs, R"([{"uid": 7}])", "[0].uid"},
      {kAnnotationKubeletCPUManagerPolicy, R"({"policy": 1})", "policy"},
      {kAnnotationKubeletCPUManagerPolicy, R"({"options": []})", "options: expected object"},
      {kAnnotationKubeletCPUManagerPolicy, R"({"options": {"a": 1}})", "options.a"},
      {kAnnotationKubeletCPUManagerPolicy, R"({"reservedCPUs": false})", "reservedCPUs"},
      {kAnnotationCPUBasicInfo, R"({"hyperThreadEnabled": "yes"})", "hyperThreadEnabled"},
      {kAnnotationCPUBasicInfo, R"("x")", "expected object"},
  };
  for (const auto& c : cases) {
    INFO(c.key << " = " << c.value);
    const kube::Labels a = one(c.key, c.value);
    std::string message;
    if (c.key == kAnnotationNodeCPUTopology) {
      message = errorOf(parseCPUTopologyAnnotation(a));
    } else if (c.key == kAnnotationNodeCPUSharedPools) {
      message = errorOf(parseCPUSharedPools(a));
    } else if (c.key == kAnnotationNodeCPUAllocs) {
      message = errorOf(parsePodCPUAllocs(a));
    } else if (c.key == kAnnotationKubeletCPUManagerPolicy) {
      message = errorOf(parseKubeletCPUManagerPolicy(a));
    } else {
      message = errorOf(parseCPUBasicInfo(a));
    }
    CHECK_THAT(message, Contains(std::string(c.key)) && Contains(c.error));
  }
}

TEST_CASE("cpu annotations: oversized values are refused before they are parsed", "[apis][nrt]") {
  // Longer than an annotation may be.
  const std::string huge(kMaxAnnotationValueBytes + 1, ' ');
  CHECK_THAT(errorOf(parseCPUTopologyAnnotation(one(kAnnotationNodeCPUTopology, huge))),
             Contains(std::string(kAnnotationNodeCPUTopology)));
  CHECK_THAT(errorOf(parseCPUSharedPools(one(kAnnotationNodeCPUSharedPools, huge))),
             Contains(std::string(kAnnotationNodeCPUSharedPools)));
  CHECK_FALSE(parsePodCPUAllocs(one(kAnnotationNodeCPUAllocs, huge)).has_value());
  CHECK_FALSE(
      parseKubeletCPUManagerPolicy(one(kAnnotationKubeletCPUManagerPolicy, huge)).has_value());
  CHECK_FALSE(parseCPUBasicInfo(one(kAnnotationCPUBasicInfo, huge)).has_value());

  // More items than a node has CPUs, within the size limit.
  std::string many = "[";
  for (std::size_t i = 0; i <= kMaxNRTAnnotationItems; ++i)
    many += i == 0 ? "{}" : ",{}";
  many += "]";
  REQUIRE(many.size() <= kMaxAnnotationValueBytes);
  CHECK_THAT(errorOf(parseCPUSharedPools(one(kAnnotationNodeCPUSharedPools, many))),
             Contains(fmt::format("the {} allowed", kMaxNRTAnnotationItems)));

  // A cpuset longer than any CPU list.
  const std::string long_cpuset =
      fmt::format(R"([{{"cpuset": "{}"}}])", std::string(64 * 1024 + 1, '1'));
  CHECK_THAT(errorOf(parseCPUSharedPools(one(kAnnotationNodeCPUSharedPools, long_cpuset))),
             Contains("[0].cpuset") && Contains("bytes"));

  json::object options;
  for (std::size_t i = 0; i <= kMaxKubeletCPUManagerOptions; ++i)
    options[fmt::format("o{}", i)] = "true";
  CHECK_THAT(errorOf(parseKubeletCPUManagerPolicy(
                 one(kAnnotationKubeletCPUManagerPolicy,
                     json::serialize(json::object{{"options", options}})))),
             Contains("options") && Contains("entries"));
}
