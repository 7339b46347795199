// NodeCpuTopology: Koordinator's counts over the reported CPUs, the dense indices, and the
// reports it refuses.
#include <string>
#include <vector>

#include "fixture.h"

using koord::cgroup::CpuInfo;

TEST_CASE("topology counts as Koordinator's CPUTopologyBuilder", "[nodenumaresource]") {
  struct Case {
    int sockets, nodes, cores, threads;
    int want_cpus, want_cores, want_nodes, want_sockets, per_core, per_node, per_socket;
  };
  const std::vector<Case> cases = {
      {1, 1, 4, 2, 8, 4, 1, 1, 2, 8, 8},       {1, 1, 8, 1, 8, 8, 1, 1, 1, 8, 8},
      {2, 1, 26, 2, 104, 52, 2, 2, 2, 52, 52}, {2, 2, 4, 2, 32, 16, 4, 2, 2, 8, 16},
      {4, 2, 2, 1, 16, 16, 8, 4, 1, 2, 4},
  };
  for (const Case& c : cases) {
    INFO(c.sockets << "x" << c.nodes << "x" << c.cores << "x" << c.threads);
    const nnr::NodeCpuTopology t = topologyOf(c.sockets, c.nodes, c.cores, c.threads);
    CHECK(t.valid());
    CHECK(t.numCpus() == c.want_cpus);
    CHECK(t.numCores() == c.want_cores);
    CHECK(t.numNodes() == c.want_nodes);
    CHECK(t.numSockets() == c.want_sockets);
    CHECK(t.cpusPerCore() == c.per_core);
    CHECK(t.cpusPerNode() == c.per_node);
    CHECK(t.cpusPerSocket() == c.per_socket);
    CHECK(t.cpus().size() == c.want_cpus);
  }
}

TEST_CASE("topology indexes cores by socket and per-socket core id", "[nodenumaresource]") {
  // sysfs numbers cores per socket: both sockets have a core 0; siblings are n and n+4.
  const std::vector<CpuInfo> infos = {
      {0, 0, 0, 0}, {1, 1, 0, 0}, {2, 0, 1, 1}, {3, 1, 1, 1},
      {4, 0, 0, 0}, {5, 1, 0, 0}, {6, 0, 1, 1}, {7, 1, 1, 1},
  };
  auto t = nnr::NodeCpuTopology::build(infos);
  REQUIRE(t.has_value());
  CHECK(t->numCores() == 4);
  CHECK(t->cpusPerCore() == 2);
  CHECK(t->find(4)->core == t->find(0)->core);
  CHECK(t->find(2)->core != t->find(0)->core);
  CHECK(std::vector<int>(t->cpusOfCore(t->find(6)->core).begin(),
                         t->cpusOfCore(t->find(6)->core).end()) == std::vector<int>{2, 6});
  CHECK(t->cpusInNode(1).toString() == "2-3,6-7");
  CHECK(t->cpusInNodes(0b11).toString() == "0-7");
  CHECK(t->cpusInNode(5).empty());
  CHECK(t->socketOfNode(1) == 1);
  CHECK(t->socketOfNode(3) == -1);
  CHECK(t->numaNodeMask() == 0b11);
  CHECK(t->find(8) == nullptr);
}

TEST_CASE("topology refuses inconsistent or unbounded reports", "[nodenumaresource]") {
  struct Case {
    std::string name;
    std::vector<CpuInfo> cpus;
    std::string error_part;
  };
  const std::vector<Case> cases = {
      {"duplicate cpu", {{0, 0, 0, 0}, {0, 1, 0, 0}}, "listed twice"},
      {"cpu id too large", {{8192, 0, 0, 0}}, "outside"},
      {"negative cpu id", {{-1, 0, 0, 0}}, "outside"},
      {"NUMA node past the mask", {{0, 0, 0, 64}}, "NUMA node 64"},
      {"negative socket", {{0, 0, -1, 0}}, "socket -1"},
      {"negative core", {{0, -2, 0, 0}}, "negative core"},
      {"core on two NUMA nodes", {{0, 0, 0, 0}, {1, 0, 0, 1}}, "NUMA nodes 0 and 1"},
      {"NUMA node on two sockets", {{0, 0, 0, 0}, {1, 1, 1, 0}}, "sockets 0 and 1"},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    auto t = nnr::NodeCpuTopology::build(c.cpus);
    REQUIRE_FALSE(t.has_value());
    CHECK_THAT(t.error().message, Catch::Contains(c.error_part));
  }
  auto empty = nnr::NodeCpuTopology::build({});
  REQUIRE(empty.has_value());
  CHECK_FALSE(empty->valid());
  CHECK(empty->cpusPerCore() == 0);
}
