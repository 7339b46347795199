// The koordlet's NodeResourceTopology from a fake sysfs: two sockets of two SMT-2 cores on two
// NUMA nodes, and one socket on a kernel without NUMA. Zones, the cpu-topology detail, shared
// pools without LSE/LSR cpusets, the kubelet's pinned pods and the node reservation, the
// kubelet's reservation order, and how the status is compared with and written over the object
// the API server holds.
#include <boost/json.hpp>

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "catch_expected.h"
#include "koord/apis/node_resource_topology.h"
#include "koord/cgroup/cpu_topology.h"
#include "statesinformer/node_topology.h"
#include "statesinformer/pod_meta.h"
#include "temp_tree.h"

using namespace koord::roles::koordlet;
namespace apis = koord::apis;
namespace cgroup = koord::cgroup;
namespace kube = koord::kube;
namespace json = boost::json;
using Catch::Matchers::Contains;
using koord::testing::TempTree;

namespace {

constexpr std::int64_t kGi = 1024LL * 1024 * 1024;

void cpu(const TempTree& sys, int id, int core, int package) {
  const std::string dir = "devices/system/cpu/cpu" + std::to_string(id) + "/topology/";
  sys.write(dir + "core_id", std::to_string(core) + "\n");
  sys.write(dir + "physical_package_id", std::to_string(package) + "\n");
}

void meminfo(const TempTree& sys, int node, std::int64_t kib) {
  sys.write("devices/system/node/node" + std::to_string(node) + "/meminfo",
            "Node " + std::to_string(node) + " MemTotal:       " + std::to_string(kib) +
                " kB\nNode " + std::to_string(node) + " MemFree:        1024 kB\n");
}

/// Two sockets, one NUMA node each, two cores per socket with two threads: siblings are (0,4)
/// (1,5) on socket 0 / node 0 and (2,6) (3,7) on socket 1 / node 1. core_id restarts per socket.
void twoSocketNode(const TempTree& sys) {
  sys.write("devices/system/cpu/online", "0-7\n");
  for (int id = 0; id < 8; ++id)
    cpu(sys, id, id % 2, (id / 2) % 2);
  sys.write("devices/system/node/node0/cpulist", "0-1,4-5\n");
  sys.write("devices/system/node/node1/cpulist", "2-3,6-7\n");
  sys.write("devices/system/node/online", "0-1\n");
  meminfo(sys, 0, 16 * 1024 * 1024);  // 16 GiB
  meminfo(sys, 1, 8 * 1024 * 1024);   // 8 GiB
}

/// One socket of two SMT-2 cores, and no devices/system/node (a kernel without NUMA).
void oneSocketNoNuma(const TempTree& sys) {
  sys.write("devices/system/cpu/online", "0-3\n");
  for (int id = 0; id < 4; ++id)
    cpu(sys, id, id % 2, 0);
}

cgroup::CpuTopology topologyOf(const TempTree& sys) {
  auto t = cgroup::readCpuTopology(sys.root());
  REQUIRE(t.has_value());
  return std::move(*t);
}

PodMeta pod(std::string name, std::string qos, std::string cpuset) {
  PodMeta p;
  p.namespace_ = "default";
  p.name = name;
  p.uid = "uid-" + name;
  if (!qos.empty())
    p.labels.emplace(std::string(apis::kLabelPodQoS), qos);
  if (!cpuset.empty())
    p.annotations.emplace(std::string(apis::kAnnotationResourceStatus),
                          R"({"cpuset":")" + cpuset + R"("})");
  return p;
}

NodeInfo nodeWith(kube::Labels annotations = {}) {
  NodeInfo n;
  n.name = "node-a";
  n.uid = "node-uid";
  n.annotations = std::move(annotations);
  return n;
}

struct Built {
  NodeTopologyReport report;
  const std::string& annotation(std::string_view key) const {
    return report.status.annotations.at(std::string(key));
  }
  std::vector<apis::CPUSharedPool> pools(std::string_view key) const {
    auto p = apis::parseCPUSharedPools(report.status.annotations, key);
    REQUIRE(p.has_value());
    return *p;
  }
};

struct Fixture {
  TempTree sys{"koord-nrt"};
  cgroup::CpuTopology topology;
  std::vector<NumaMemory> numa;
  apis::CPUBasicInfo basic{.cpu_model = "Test CPU", .hyper_thread_enabled = true};

  explicit Fixture(void (*layout)(const TempTree&), bool hugepages = false) {
    layout(sys);
    topology = topologyOf(sys);
    auto m = readNumaMemory(sys.root(), hugepages);
    REQUIRE(m.has_value());
    numa = std::move(*m);
  }

  Built build(const NodeInfo& node, const std::vector<PodMeta>& pods,
              apis::KubeletCPUManagerPolicy policy = {},
              std::optional<std::string> state = std::nullopt) const {
    return {buildNodeTopology({.topology = topology,
                               .numa = numa,
                               .cpu_basic_info = basic,
                               .node = node,
                               .pods = pods,
                               .kubelet_policy = std::move(policy),
                               .topology_policy = apis::kTopologyPolicyNone,
                               .cpu_manager_state = std::move(state)})};
  }
};

std::string allocatable(const apis::Zone& z, std::string_view resource) {
  const auto* r = z.resource(resource);
  REQUIRE(r != nullptr);
  CHECK(r->capacity == r->allocatable);
  CHECK(r->available == r->allocatable);
  return r->allocatable.toString();
}

}  // namespace

TEST_CASE("node topology: two NUMA nodes give a zone each with their CPUs and memory",
          "[koordlet][nrt]") {
  Fixture f(twoSocketNode);
  REQUIRE(f.numa.size() == 2);
  CHECK(f.numa[0] == NumaMemory{.node_id = 0, .mem_total = 16 * kGi});
  CHECK(f.numa[1] == NumaMemory{.node_id = 1, .mem_total = 8 * kGi});
  auto built = f.build(nodeWith(), {});
  const auto& zones = built.report.status.zones;
  REQUIRE(zones.size() == 2);
  CHECK(zones[0].name == "node-0");
  CHECK(zones[0].type == "Node");
  CHECK(allocatable(zones[0], "cpu") == "4");
  CHECK(allocatable(zones[0], "memory") == "16Gi");
  CHECK(allocatable(zones[0], "hugepages-2Mi") == "0");
  CHECK(allocatable(zones[0], "hugepages-1Gi") == "0");
  CHECK(zones[1].name == "node-1");
  CHECK(allocatable(zones[1], "cpu") == "4");
  CHECK(allocatable(zones[1], "memory") == "8Gi");
  // Koordinator's order of a zone's resources: by name.
  CHECK(zones[0].resources[0].name == "cpu");
  CHECK(zones[0].resources[3].name == "memory");
  CHECK(built.report.status.topology_policies == std::vector<std::string>{"None"});
}

TEST_CASE("node topology: hugepages come out of a zone's memory with HugePageReport",
          "[koordlet][nrt]") {
  TempTree sys("koord-nrt");
  twoSocketNode(sys);
  sys.write("devices/system/node/node0/hugepages/hugepages-2048kB/nr_hugepages", "512\n");
  sys.write("devices/system/node/node0/hugepages/hugepages-1048576kB/nr_hugepages", "2\n");
  auto with = readNumaMemory(sys.root(), true);
  REQUIRE(with.has_value());
  CHECK(with->at(0).hugepages_2mi == 1 * kGi);
  CHECK(with->at(0).hugepages_1gi == 2 * kGi);
  CHECK(with->at(1).hugepages_2mi == 0);
  auto without = readNumaMemory(sys.root(), false);
  REQUIRE(without.has_value());
  CHECK(without->at(0).hugepages_2mi == 0);

  const auto topology = topologyOf(sys);
  const apis::CPUBasicInfo basic;
  const NodeInfo node = nodeWith();
  auto report = buildNodeTopology(
      {.topology = topology, .numa = *with, .cpu_basic_info = basic, .node = node, .pods = {}});
  const auto& z = report.status.zones.at(0);
  CHECK(allocatable(z, "memory") == "13Gi");
  CHECK(allocatable(z, "hugepages-2Mi") == "1Gi");
  CHECK(allocatable(z, "hugepages-1Gi") == "2Gi");
}

TEST_CASE("node topology: the cpu-topology detail lists every CPU with core, socket and node",
          "[koordlet][nrt]") {
  Fixture f(twoSocketNode);
  auto built = f.build(nodeWith(), {});
  auto detail = apis::parseCPUTopologyAnnotation(built.report.status.annotations);
  REQUIRE(detail.has_value());
  const std::vector<apis::CPUInfo> want = {
      {0, 0, 0, 0}, {1, 1, 0, 0}, {2, 0, 1, 1}, {3, 1, 1, 1},
      {4, 0, 0, 0}, {5, 1, 0, 0}, {6, 0, 1, 1}, {7, 1, 1, 1},
  };
  CHECK(detail->detail == want);
  auto basic = apis::parseCPUBasicInfo(built.report.status.annotations);
  REQUIRE(basic.has_value());
  REQUIRE(basic->has_value());
  CHECK((*basic)->cpu_model == "Test CPU");
  // Nothing of the kubelet is known: Koordinator's values with -disable-query-kubelet-config.
  CHECK(built.annotation(apis::kAnnotationKubeletCPUManagerPolicy) == "{}");
  CHECK(built.annotation(apis::kAnnotationNodeCPUAllocs) == "null");
  CHECK(built.annotation(apis::kAnnotationNodeReservation) == "{}");
  CHECK(built.annotation(apis::kAnnotationNodeSystemQOSResource) == "{}");
  CHECK(built.report.warnings.empty());
  CHECK(built.report.status.annotations.size() == 8);
}

TEST_CASE("node topology: shared pools leave out LSE/LSR cpusets and reserved CPUs",
          "[koordlet][nrt]") {
  Fixture f(twoSocketNode);
  const std::vector<PodMeta> pods = {
      pod("lse", "LSE", "1,5"),      // out of both pools
      pod("lsr", "LSR", "2,6"),      // out of the LS pools, still BE's
      pod("be", "BE", "3"),          // not bound to CPUs: ignored, with a warning
      pod("ls", "LS", ""),           // no cpuset
      pod("broken", "LSR", "zero"),  // a bad list: ignored, with a warning
  };
  const NodeInfo node =
      nodeWith({{std::string(apis::kAnnotationNodeReservation), R"({"reservedCPUs":"0"})"}});
  auto built = f.build(node, pods);
  using Pools = std::vector<apis::CPUSharedPool>;
  CHECK(built.pools(apis::kAnnotationNodeCPUSharedPools) == Pools{{0, 0, "4"}, {1, 1, "3,7"}});
  CHECK(built.pools(apis::kAnnotationNodeBECPUSharedPools) ==
        Pools{{0, 0, "4"}, {1, 1, "2-3,6-7"}});
  CHECK(built.annotation(apis::kAnnotationNodeReservation) == R"({"reservedCPUs":"0"})");
  REQUIRE(built.report.warnings.size() == 2);
  CHECK_THAT(built.report.warnings[0], Contains("default/be") && Contains("resource-status"));
  CHECK_THAT(built.report.warnings[1], Contains("default/broken"));

  SECTION("a pool whose CPUs are all gone stays, without a cpuset") {
    const NodeInfo all_reserved = nodeWith(
        {{std::string(apis::kAnnotationNodeReservation), R"({"reservedCPUs":"0-1,4-5"})"}});
    auto r = f.build(all_reserved, {});
    CHECK(r.annotation(apis::kAnnotationNodeCPUSharedPools) ==
          R"([{"socket":0,"node":0},{"socket":1,"node":1,"cpuset":"2-3,6-7"}])");
  }
  SECTION("resources.cpu reserves whole cores the kubelet's way") {
    const NodeInfo by_count = nodeWith(
        {{std::string(apis::kAnnotationNodeReservation), R"({"resources":{"cpu":"1500m"}})"}});
    auto r = f.build(by_count, {});
    CHECK(r.annotation(apis::kAnnotationNodeReservation) == R"({"reservedCPUs":"0,4"})");
    CHECK(r.pools(apis::kAnnotationNodeCPUSharedPools) == Pools{{0, 0, "1,5"}, {1, 1, "2-3,6-7"}});
  }
  SECTION("an exclusive system QoS cpuset leaves both pools") {
    const NodeInfo sys_qos =
        nodeWith({{std::string(apis::kAnnotationNodeSystemQOSResource), R"({"cpuset":"7"})"}});
    auto r = f.build(sys_qos, {});
    CHECK(r.pools(apis::kAnnotationNodeBECPUSharedPools) ==
          Pools{{0, 0, "0-1,4-5"}, {1, 1, "2-3,6"}});
    CHECK(r.annotation(apis::kAnnotationNodeSystemQOSResource) == R"({"cpuset":"7"})");
    const NodeInfo shared = nodeWith({{std::string(apis::kAnnotationNodeSystemQOSResource),
                                       R"({"cpuset":"7","cpusetExclusive":false})"}});
    CHECK(f.build(shared, {}).pools(apis::kAnnotationNodeCPUSharedPools).at(1).cpuset == "2-3,6-7");
  }
  SECTION("a malformed reservation is read as none, with a warning") {
    const NodeInfo bad =
        nodeWith({{std::string(apis::kAnnotationNodeReservation), R"({"reservedCPUs":5})"}});
    auto r = f.build(bad, {});
    CHECK(r.annotation(apis::kAnnotationNodeReservation) == "{}");
    REQUIRE(r.report.warnings.size() == 1);
    CHECK_THAT(r.report.warnings[0], Contains("node.koordinator.sh/reservation"));
  }
}

TEST_CASE("node topology: pods the kubelet's static policy pinned are reported and pooled out",
          "[koordlet][nrt]") {
  Fixture f(twoSocketNode);
  PodMeta guaranteed = pod("guaranteed", "", "");
  PodMeta ls = pod("ls", "LS", "");
  const std::vector<PodMeta> pods = {guaranteed, ls};
  const std::string state = R"({"policyName":"static","defaultCpuSet":"0-1,4-5",
    "entries":{"uid-guaranteed":{"app":"3","side":"7"},"uid-ls":{"app":"2"},
               "uid-gone":{"app":"6"},"uid-bad":{"app":"x-y"}},"checksum":1})";
  apis::KubeletCPUManagerPolicy policy{.policy = "static", .reserved_cpus = "0"};
  auto built = f.build(nodeWith(), pods, policy, state);
  auto allocs = apis::parsePodCPUAllocs(built.report.status.annotations);
  REQUIRE(allocs.has_value());
  const std::vector<apis::PodCPUAlloc> want = {
      {"", "", "uid-gone", "6", true},
      {"default", "guaranteed", "uid-guaranteed", "3,7", true},
  };
  CHECK(*allocs == want);
  CHECK(built.pools(apis::kAnnotationNodeCPUSharedPools).at(1).cpuset == "2");
  CHECK(built.pools(apis::kAnnotationNodeBECPUSharedPools).at(1).cpuset == "2");
  // The kubelet's reserved CPUs stay in the pools, as in Koordinator.
  CHECK(built.pools(apis::kAnnotationNodeCPUSharedPools).at(0).cpuset == "0-1,4-5");
  CHECK(built.annotation(apis::kAnnotationKubeletCPUManagerPolicy) ==
        R"({"policy":"static","reservedCPUs":"0"})");
  REQUIRE(built.report.warnings.size() == 1);
  CHECK_THAT(built.report.warnings[0], Contains("uid-bad"));

  SECTION("the checkpoint is read for the static policy only") {
    auto none = f.build(nodeWith(), pods, {.policy = "none"}, state);
    CHECK(none.annotation(apis::kAnnotationNodeCPUAllocs) == "null");
  }
  SECTION("an unreadable checkpoint is a warning, not a report without pools") {
    auto bad = f.build(nodeWith(), pods, policy, "{");
    CHECK(bad.annotation(apis::kAnnotationNodeCPUAllocs) == "null");
    REQUIRE(bad.report.warnings.size() == 1);
    CHECK_THAT(bad.report.warnings[0], Contains("cpu_manager_state") && Contains("not JSON"));
  }
}

TEST_CASE("node topology: the kubelet's checkpoint is bounded and checked", "[koordlet][nrt]") {
  std::vector<std::string> warnings;
  CHECK_FALSE(kubeletPodCPUAllocs("", {}, warnings).has_value());
  CHECK_FALSE(kubeletPodCPUAllocs("[]", {}, warnings).has_value());
  CHECK_FALSE(kubeletPodCPUAllocs(R"({"entries":{"u":"0-1"}})", {}, warnings).has_value());
  CHECK_FALSE(kubeletPodCPUAllocs(std::string(kMaxCPUManagerStateBytes + 1, ' '), {}, warnings)
                  .has_value());
  auto empty = kubeletPodCPUAllocs(R"({"policyName":"none","entries":null})", {}, warnings);
  REQUIRE(empty.has_value());
  CHECK(empty->empty());
  CHECK(warnings.empty());
}

TEST_CASE("node topology: one socket on a kernel without NUMA", "[koordlet][nrt]") {
  Fixture f(oneSocketNoNuma);
  CHECK(f.numa.empty());
  const std::vector<PodMeta> pods = {pod("lsr", "LSR", "1")};
  auto built = f.build(nodeWith(), pods);
  // No NUMA node to describe: no zones, but the CPU annotations all the same.
  CHECK(built.report.status.zones.empty());
  auto detail = apis::parseCPUTopologyAnnotation(built.report.status.annotations);
  REQUIRE(detail.has_value());
  const std::vector<apis::CPUInfo> want = {{0, 0, 0, 0}, {1, 1, 0, 0}, {2, 0, 0, 0}, {3, 1, 0, 0}};
  CHECK(detail->detail == want);
  CHECK(built.annotation(apis::kAnnotationNodeCPUSharedPools) ==
        R"([{"socket":0,"node":0,"cpuset":"0,2-3"}])");
  CHECK(built.annotation(apis::kAnnotationNodeBECPUSharedPools) ==
        R"([{"socket":0,"node":0,"cpuset":"0-3"}])");
}

TEST_CASE("node topology: NUMA memory files that do not read are errors naming them",
          "[koordlet][nrt]") {
  TempTree sys("koord-nrt");
  twoSocketNode(sys);
  SECTION("a node without meminfo") {
    sys.mkdirs("devices/system/node/node2");
    auto r = readNumaMemory(sys.root(), false);
    REQUIRE_FALSE(r.has_value());
    CHECK_THAT(r.error().message, Contains("node2/meminfo"));
  }
  SECTION("a meminfo without MemTotal") {
    sys.write("devices/system/node/node1/meminfo", "Node 1 MemFree: 5 kB\n");
    auto r = readNumaMemory(sys.root(), false);
    REQUIRE_FALSE(r.has_value());
    CHECK_THAT(r.error().message, Contains("node1/meminfo") && Contains("no MemTotal"));
  }
  SECTION("a MemTotal that is not a size") {
    sys.write("devices/system/node/node1/meminfo", "Node 1 MemTotal: lots kB\n");
    auto r = readNumaMemory(sys.root(), false);
    REQUIRE_FALSE(r.has_value());
    CHECK_THAT(r.error().message, Contains("MemTotal"));
  }
  SECTION("a MemTotal past int64 once in bytes") {
    sys.write("devices/system/node/node1/meminfo", "Node 1 MemTotal: 9223372036854775807 kB\n");
    CHECK_FALSE(readNumaMemory(sys.root(), false).has_value());
  }
  SECTION("a garbled hugepage count") {
    sys.write("devices/system/node/node0/hugepages/hugepages-2048kB/nr_hugepages", "-1\n");
    CHECK(readNumaMemory(sys.root(), false).has_value());  // not read without the gate
    auto r = readNumaMemory(sys.root(), true);
    REQUIRE_FALSE(r.has_value());
    CHECK_THAT(r.error().message, Contains("nr_hugepages"));
  }
  SECTION("entries that are not node directories are skipped") {
    sys.write("devices/system/node/possible", "0-1\n");
    sys.mkdirs("devices/system/node/nodeX");
    auto r = readNumaMemory(sys.root(), false);
    REQUIRE(r.has_value());
    CHECK(r->size() == 2);
  }
}

TEST_CASE("node topology: cpu-basic-info from /proc/cpuinfo and sysfs", "[koordlet][nrt]") {
  TempTree root("koord-nrt");
  oneSocketNoNuma(root);
  const auto topology = topologyOf(root);
  // Without the files: unknown model and vendor, SMT from the topology (cores of two threads).
  auto bare = readCPUBasicInfo(root.path("proc"), root.root(), root.path("sysfs"), topology);
  CHECK(bare == apis::CPUBasicInfo{
                    .cpu_model = "unknown", .hyper_thread_enabled = true, .vendor_id = "unknown"});
  root.write("proc/cpuinfo",
             "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) Gold\n\n"
             "processor\t: 1\nvendor_id\t: Other\nmodel name\t: Other\n");
  root.write("devices/system/cpu/smt/active", "0\n");
  root.write("devices/system/cpu/intel_pstate/no_turbo", "0\n");
  root.write("sysfs/resctrl/info/L3/cbm_mask", "7ff\n");
  auto info = readCPUBasicInfo(root.path("proc"), root.root(), root.path("sysfs"), topology);
  CHECK(info == apis::CPUBasicInfo{.cpu_model = "Intel(R) Xeon(R) Gold",
                                   .hyper_thread_enabled = false,
                                   .turbo_enabled = true,
                                   .cat_l3_cbm_mask = "7ff",
                                   .vendor_id = "GenuineIntel"});
}

TEST_CASE("node topology: CPUs taken the way the kubelet reserves them", "[koordlet][nrt]") {
  Fixture f(twoSocketNode);
  const std::vector<int> all = {0, 1, 2, 3, 4, 5, 6, 7};
  struct Case {
    std::vector<int> available;
    int count;
    std::vector<int> want;
  };
  const Case cases[] = {
      {all, 0, {}},                              // nothing asked
      {all, 9, {}},                              // more than there are
      {all, 1, {0}},                             // a single thread of the first core
      {all, 2, {0, 4}},                          // a whole core: the kubelet's own example
      {all, 3, {0, 1, 4}},                       // a core, then a thread beside it
      {all, 4, {0, 1, 4, 5}},                    // a whole socket
      {all, 6, {0, 1, 2, 4, 5, 6}},              // a socket, then a core of the other
      {all, 8, all},                             // everything
      {{1, 2, 3, 4, 5, 6, 7}, 2, {1, 5}},        // the free core of the emptier socket first
      {{1, 2, 3, 4, 5, 6, 7}, 4, {2, 3, 6, 7}},  // the one whole socket
      {{0, 9, 10}, 2, {}},                       // CPUs the topology lacks do not count
  };
  for (const auto& c : cases) {
    INFO("count " << c.count << " of " << c.available.size());
    CHECK(takeByTopology(f.topology, c.available, c.count) == c.want);
  }
}

TEST_CASE("node topology: the kubelet's topology manager as topologyPolicies", "[koordlet][nrt]") {
  struct Case {
    const char* policy;
    const char* scope;
    std::string_view want;
  };
  const Case cases[] = {
      {"single-numa-node", "container", apis::kTopologyPolicySingleNUMANodeContainerLevel},
      {"single-numa-node", "pod", apis::kTopologyPolicySingleNUMANodePodLevel},
      {"restricted", "container", apis::kTopologyPolicyRestrictedContainerLevel},
      {"restricted", "pod", apis::kTopologyPolicyRestrictedPodLevel},
      {"best-effort", "container", apis::kTopologyPolicyBestEffortContainerLevel},
      {"best-effort", "pod", apis::kTopologyPolicyBestEffortPodLevel},
      {"none", "pod", apis::kTopologyPolicyNone},
      {"", "container", apis::kTopologyPolicyNone},
      {"restricted", "", apis::kTopologyPolicyNone},
      {"restricted", "node", apis::kTopologyPolicyNone},
  };
  for (const auto& c : cases) {
    INFO(c.policy << " / " << c.scope);
    CHECK(topologyPolicyOf(c.policy, c.scope) == c.want);
  }
}

TEST_CASE("node topology: what differs from the object held, and the writes", "[koordlet][nrt]") {
  Fixture f(twoSocketNode);
  const NodeTopologyStatus desired = f.build(nodeWith(), {pod("lse", "LSE", "1,5")}).report.status;

  // The object as created, read back.
  const json::value created = nodeTopologyObject(desired, "node-a", "node-uid");
  const auto& meta = created.at("metadata");
  CHECK(meta.at("name") == "node-a");
  CHECK(meta.at("labels").at("app.kubernetes.io/managed-by") == "Koordinator");
  const auto& owner = meta.at("ownerReferences").at(0);
  CHECK(owner.at("kind") == "Node");
  CHECK(owner.at("uid") == "node-uid");
  CHECK(owner.at("controller") == true);
  CHECK(owner.at("blockOwnerDeletion") == true);
  auto held = apis::decodeNodeResourceTopology(created);
  REQUIRE(held.has_value());
  held->resource_version = "7";
  CHECK(nodeTopologyDifference(*held, desired).empty());

  SECTION("annotations compare as JSON") {
    auto same = *held;
    same.annotations[std::string(apis::kAnnotationNodeCPUSharedPools)] =
        R"([ {"cpuset": "0,4", "node": 0, "socket": 0}, {"socket":1,"node":1,"cpuset":"2-3,6-7"} ])";
    CHECK(nodeTopologyDifference(same, desired).empty());
    auto other = *held;
    other.annotations[std::string(apis::kAnnotationNodeCPUSharedPools)] = "null";
    CHECK_THAT(nodeTopologyDifference(other, desired), Contains("cpu-shared-pools"));
    auto dropped = *held;
    dropped.annotations.erase(std::string(apis::kAnnotationNodeReservation));
    CHECK_THAT(nodeTopologyDifference(dropped, desired), Contains("reservation"));
    // Others' annotations are theirs.
    auto foreign = *held;
    foreign.annotations["example.com/x"] = "y";
    CHECK(nodeTopologyDifference(foreign, desired).empty());
    auto bare = *held;
    bare.annotations.clear();
    CHECK(nodeTopologyDifference(bare, desired) == "metadata changed");
  }
  SECTION("policies and zones") {
    auto policy = *held;
    policy.topology_policies = {"SingleNUMANodePodLevel"};
    CHECK_THAT(nodeTopologyDifference(policy, desired), Contains("topologyPolicies"));
    auto memory = *held;
    memory.zones[1].resources[3].allocatable = kube::Quantity::parse("4Gi").value();
    CHECK_THAT(nodeTopologyDifference(memory, desired), Contains("node-1") && Contains("memory"));
    // Another agent's resource in a zone is no difference.
    auto gpu = *held;
    gpu.zones[0].resources.push_back({"nvidia.com/gpu", kube::Quantity::fromInt(1),
                                      kube::Quantity::fromInt(1), kube::Quantity::fromInt(1)});
    CHECK(nodeTopologyDifference(gpu, desired).empty());
    auto extra = *held;
    extra.zones.push_back({.name = "node-9", .type = "Node"});
    CHECK_THAT(nodeTopologyDifference(extra, desired), Contains("number"));
  }
  SECTION("the patch keeps others' zone resources, drops unknown zones, checks the version") {
    auto current = *held;
    current.zones[0].resources.push_back({"nvidia.com/gpu", kube::Quantity::fromInt(2),
                                          kube::Quantity::fromInt(2), kube::Quantity::fromInt(1)});
    current.zones.push_back({.name = "node-9", .type = "Node"});
    current.zones[1].resources[0].allocatable = kube::Quantity::fromInt(99);
    const json::value patch = nodeTopologyPatch(current, desired);
    CHECK(patch.at("metadata").at("resourceVersion") == "7");
    CHECK(
        patch.at("metadata").at("annotations").at(std::string(apis::kAnnotationNodeCPUTopology)) ==
        json::value(desired.annotations.at(std::string(apis::kAnnotationNodeCPUTopology))));
    CHECK(patch.at("topologyPolicies").at(0) == "None");
    const auto& zones = patch.at("zones").as_array();
    REQUIRE(zones.size() == 2);
    CHECK(zones[0].at("name") == "node-0");
    const auto& resources = zones[0].at("resources").as_array();
    REQUIRE(resources.size() == 5);
    CHECK(resources[4].at("name") == "nvidia.com/gpu");
    CHECK(resources[4].at("available") == "2");  // rebuilt from allocatable, as Koordinator does
    CHECK(zones[1].at("resources").at(0).at("allocatable") == "4");  // ours again
    // Applied, the object is what the koordlet computes.
    auto merged = mergedZones(current.zones, desired.zones);
    auto after = current;
    after.zones = merged;
    CHECK(nodeTopologyDifference(after, desired).empty());
  }
}

TEST_CASE("node topology: a pod keeps only its resource-status annotation", "[koordlet][nrt]") {
  auto decoded = decodePodMeta(json::parse(R"({
    "metadata": {"namespace": "default", "name": "lsr", "uid": "u1",
                 "labels": {"koordinator.sh/qosClass": "LSR"},
                 "annotations": {"scheduling.koordinator.sh/resource-status": "{\"cpuset\":\"2-3\"}",
                                 "kubectl.kubernetes.io/last-applied-configuration": "{}"}},
    "status": {"phase": "Running"}})"));
  REQUIRE(decoded.has_value());
  REQUIRE(decoded->annotations.size() == 1);
  CHECK(decoded->annotations.at(std::string(apis::kAnnotationResourceStatus)) ==
        R"({"cpuset":"2-3"})");
  auto bare = decodePodMeta(json::parse(R"({"metadata": {"namespace": "d", "name": "p", "uid": "u2",
                                   "annotations": {"scheduling.koordinator.sh/resource-status": 5}}})"));
  REQUIRE(bare.has_value());
  CHECK(bare->annotations.empty());
}

TEST_CASE("node topology: a bounded read takes what the file holds, not its bound, up front") {
  TempTree t{"koord-bounded-read"};
  const std::string body(40'000, 'x');  // more than one read chunk
  t.write("f", body);
  // A bound far beyond memory: the buffer grows with the file, so this is an ordinary read
  // (sizing the buffer to the bound, as before, threw or touched the whole bound).
  auto huge = readFileBounded(t.path("f"), std::size_t{1} << 40);
  REQUIRE(huge);
  REQUIRE(huge->has_value());
  CHECK(**huge == body);
  auto exact = readFileBounded(t.path("f"), body.size());
  REQUIRE(exact);
  CHECK(exact->value().size() == body.size());
  auto over = readFileBounded(t.path("f"), body.size() - 1);
  REQUIRE_FALSE(over);
  CHECK_THAT(over.error().message, Contains("larger than 39999 bytes"));
  auto missing = readFileBounded(t.path("absent"), 10);
  REQUIRE(missing);
  CHECK_FALSE(missing->has_value());
}
