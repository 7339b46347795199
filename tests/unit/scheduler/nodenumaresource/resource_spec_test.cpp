// The resource-spec, numa-topology-spec and resource-status annotations: what parses, what is
// refused (and that the error names the field), and the JSON Koordinator writes.
#include <string>
#include <vector>

#include "fixture.h"
#include "koord/apis/input_limits.h"
#include "plugins/nodenumaresource/resource_spec.h"

using nnr::CpuBindPolicy;
using nnr::CpuExclusivePolicy;

TEST_CASE("resource-spec parsing", "[nodenumaresource]") {
  struct Case {
    std::string value;
    nnr::ResourceSpec want;
  };
  const std::vector<Case> ok = {
      {"{}", {}},
      {"null", {}},
      {R"({"preferredCPUBindPolicy":"FullPCPUs"})",
       {CpuBindPolicy::kNone, CpuBindPolicy::kFullPCPUs, CpuExclusivePolicy::kNone}},
      {R"({"requiredCPUBindPolicy":"SpreadByPCPUs","preferredCPUExclusivePolicy":"PCPULevel"})",
       {CpuBindPolicy::kSpreadByPCPUs, CpuBindPolicy::kNone, CpuExclusivePolicy::kPCPULevel}},
      {R"({"preferredCPUBindPolicy":"Default","preferredCPUExclusivePolicy":"None"})",
       {CpuBindPolicy::kNone, CpuBindPolicy::kDefault, CpuExclusivePolicy::kNone}},
      {R"({"preferredCPUBindPolicy":null,"unknownField":[1,2],"preferredCPUExclusivePolicy":"NUMANodeLevel"})",
       {CpuBindPolicy::kNone, CpuBindPolicy::kNone, CpuExclusivePolicy::kNUMANodeLevel}},
      {R"({"preferredCPUBindPolicy":"ConstrainedBurst"})",
       {CpuBindPolicy::kNone, CpuBindPolicy::kConstrainedBurst, CpuExclusivePolicy::kNone}},
  };
  for (const Case& c : ok) {
    INFO(c.value);
    auto got = nnr::parseResourceSpec(c.value);
    REQUIRE(got.has_value());
    CHECK(*got == c.want);
  }

  struct Bad {
    std::string value;
    std::string error_part;
  };
  const std::vector<Bad> bad = {
      {"", "not JSON"},
      {"{", "not JSON"},
      {"[]", "expected object"},
      {R"({"preferredCPUBindPolicy":"fullpcpus"})", "preferredCPUBindPolicy: unknown value"},
      {R"({"requiredCPUBindPolicy":7})", "requiredCPUBindPolicy"},
      {R"({"preferredCPUExclusivePolicy":"CoreLevel"})", "preferredCPUExclusivePolicy"},
      {std::string(koord::apis::kMaxAnnotationValueBytes + 1, ' '), "scheduling.koordinator.sh"},
  };
  for (const Bad& b : bad) {
    INFO(b.value.substr(0, 80));
    auto got = nnr::parseResourceSpec(b.value);
    REQUIRE_FALSE(got.has_value());
    CHECK_THAT(got.error().message, Catch::Contains(b.error_part));
    CHECK_THAT(got.error().message, Catch::Contains("resource-spec"));
  }
}

TEST_CASE("resource-spec from annotations and written back", "[nodenumaresource]") {
  auto none = nnr::podResourceSpec({});
  REQUIRE(none.has_value());
  CHECK(*none == nnr::ResourceSpec{});
  const koord::kube::Annotations annotations = {
      {std::string(nnr::kAnnotationResourceSpec), R"({"requiredCPUBindPolicy":"FullPCPUs"})"}};
  auto spec = nnr::podResourceSpec(annotations);
  REQUIRE(spec.has_value());
  CHECK(spec->required_cpu_bind_policy == CpuBindPolicy::kFullPCPUs);

  CHECK(nnr::formatResourceSpec({}) == "{}");
  CHECK(nnr::formatResourceSpec({CpuBindPolicy::kFullPCPUs, CpuBindPolicy::kFullPCPUs,
                                 CpuExclusivePolicy::kPCPULevel}) ==
        R"({"requiredCPUBindPolicy":"FullPCPUs","preferredCPUBindPolicy":"FullPCPUs",)"
        R"("preferredCPUExclusivePolicy":"PCPULevel"})");
  const nnr::ResourceSpec round{CpuBindPolicy::kNone, CpuBindPolicy::kSpreadByPCPUs,
                                CpuExclusivePolicy::kNUMANodeLevel};
  auto back = nnr::parseResourceSpec(nnr::formatResourceSpec(round));
  REQUIRE(back.has_value());
  CHECK(*back == round);
}

TEST_CASE("numa-topology-spec parsing", "[nodenumaresource]") {
  using T = nnr::NumaTopologyPolicy;
  using X = nnr::NumaExclusive;
  auto none = nnr::podNumaTopologySpec({});
  REQUIRE(none.has_value());
  CHECK(*none == nnr::NumaTopologySpec{});
  auto spec = nnr::parseNumaTopologySpec(
      R"({"numaTopologyPolicy":"SingleNUMANode","singleNUMANodeExclusive":"Preferred"})");
  REQUIRE(spec.has_value());
  CHECK(*spec == nnr::NumaTopologySpec{T::kSingleNUMANode, X::kPreferred});
  for (const char* bad :
       {R"({"numaTopologyPolicy":"single-numa-node"})", R"({"singleNUMANodeExclusive":"Always"})",
        R"({"numaTopologyPolicy":1})", "nope"}) {
    INFO(bad);
    auto got = nnr::parseNumaTopologySpec(bad);
    REQUIRE_FALSE(got.has_value());
    CHECK_THAT(got.error().message, Catch::Contains("numa-topology-spec"));
  }
}

TEST_CASE("resource-status parsing", "[nodenumaresource]") {
  auto got = nnr::parseResourceStatus(
      R"({"cpuset":"0-3,8","numaNodeResources":[{"node":1,"resources":{"cpu":"4","memory":"4Gi"}},{"node":0}]})");
  REQUIRE(got.has_value());
  CHECK(got->cpuset.toString() == "0-3,8");
  REQUIRE(got->numa_node_resources.size() == 2);
  CHECK(got->numa_node_resources[0].node == 1);
  CHECK(got->numa_node_resources[0].resources.at("cpu").milliValue() == 4000);
  CHECK(got->numa_node_resources[0].resources.at("memory").value() == 4LL << 30);
  CHECK(got->numa_node_resources[1].resources.empty());

  auto empty = nnr::parseResourceStatus("{}");
  REQUIRE(empty.has_value());
  CHECK(empty->cpuset.empty());
  auto absent = nnr::podResourceStatus({});
  REQUIRE(absent.has_value());
  CHECK_FALSE(absent->has_value());

  struct Bad {
    std::string value;
    std::string error_part;
  };
  std::string too_many = R"({"numaNodeResources":[)";
  for (int i = 0; i <= nnr::kMaxNumaNodeId + 1; ++i)
    too_many += (i ? "," : "") + std::string(R"({"node":0})");
  too_many += "]}";
  const std::vector<Bad> bad = {
      {R"({"cpuset":"3-1"})", "cpuset"},
      {R"({"cpuset":"0-9000"})", "cpuset"},
      {R"({"cpuset":5})", "cpuset"},
      {R"({"numaNodeResources":{}})", "numaNodeResources"},
      {R"({"numaNodeResources":[{"node":64}]})", "numaNodeResources[0].node"},
      {R"({"numaNodeResources":[{"node":-1}]})", "numaNodeResources[0].node"},
      {R"({"numaNodeResources":[{"node":1.5}]})", "numaNodeResources[0].node"},
      {R"({"numaNodeResources":[{"node":0},{"node":0}]})", "listed twice"},
      {R"({"numaNodeResources":[{"node":0,"resources":{"cpu":"lots"}}]})",
       "numaNodeResources[0].resources"},
      {R"({"numaNodeResources":[7]})", "numaNodeResources[0]"},
      {too_many, "at most"},
      {"", "not JSON"},
  };
  for (const Bad& b : bad) {
    INFO(b.value.substr(0, 80));
    auto r = nnr::parseResourceStatus(b.value);
    REQUIRE_FALSE(r.has_value());
    CHECK_THAT(r.error().message, Catch::Contains(b.error_part));
    CHECK_THAT(r.error().message, Catch::Contains("resource-status"));
  }
}

TEST_CASE("resource-status written as Koordinator writes it", "[nodenumaresource]") {
  CHECK(nnr::formatResourceStatus({}) == "{}");
  nnr::PodAllocation a;
  a.cpus = cpus("0-3");
  nnr::NumaResources r0;
  r0.set(nnr::NumaResource::kCpu, 4000);
  r0.set(nnr::NumaResource::kMemory, 4LL << 30);
  a.numa_resources = {{0, r0}};
  const std::string text = nnr::formatResourceStatus(nnr::resourceStatusOf(a));
  CHECK(
      text ==
      R"({"cpuset":"0-3","numaNodeResources":[{"node":0,"resources":{"cpu":"4","memory":"4Gi"}}]})");

  // Read back into the allocation the pod informer records.
  auto status = nnr::parseResourceStatus(text);
  REQUIRE(status.has_value());
  auto back = nnr::podAllocationFromStatus(
      "uid-1", "ns", "pod", *status,
      {CpuBindPolicy::kNone, CpuBindPolicy::kFullPCPUs, CpuExclusivePolicy::kPCPULevel});
  REQUIRE(back.has_value());
  CHECK(back->uid == "uid-1");
  CHECK(back->cpus == a.cpus);
  CHECK(back->numa_resources == a.numa_resources);
  CHECK(back->exclusive == CpuExclusivePolicy::kPCPULevel);
  CHECK_FALSE(nnr::podAllocationFromStatus("u", "ns", "p", {}, {}).has_value());
}
