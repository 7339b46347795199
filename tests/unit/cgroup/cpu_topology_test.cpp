#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <catch2/catch.hpp>

#include "koord/cgroup/cpu_topology.h"

using Catch::Matchers::Contains;
using koord::cgroup::CpuInfo;
using koord::cgroup::readCpuTopology;

namespace fs = std::filesystem;

namespace {

// A fake /sys under a fresh temporary directory, removed afterwards.
class FakeSysfs {
 public:
  FakeSysfs() {
    std::string tmpl = (fs::temp_directory_path() / "koord-sysfs-XXXXXX").string();
    REQUIRE(mkdtemp(tmpl.data()) != nullptr);
    root_ = tmpl;
  }
  ~FakeSysfs() {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }
  FakeSysfs(const FakeSysfs&) = delete;
  FakeSysfs& operator=(const FakeSysfs&) = delete;

  const fs::path& root() const { return root_; }

  void write(const fs::path& rel, std::string_view content) const {
    const fs::path p = root_ / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << content;
  }
  void remove(const fs::path& rel) const { fs::remove(root_ / rel); }

  void cpu(int id, std::string_view core, std::string_view package) const {
    const fs::path dir = fs::path("devices/system/cpu") / ("cpu" + std::to_string(id)) / "topology";
    write(dir / "core_id", core);
    write(dir / "physical_package_id", package);
  }

  /// Two sockets, one NUMA node each, two cores per socket with two threads: siblings are
  /// (0,4) (1,5) on socket 0 and (2,6) (3,7) on socket 1, the usual Intel numbering. core_id
  /// restarts per socket.
  void twoSocketNode() const {
    write("devices/system/cpu/online", "0-7\n");
    for (int id = 0; id < 8; ++id)
      cpu(id, std::to_string(id % 2) + "\n", std::to_string((id / 2) % 2) + "\n");
    write("devices/system/node/node0/cpulist", "0-1,4-5\n");
    write("devices/system/node/node1/cpulist", "2-3,6-7\n");
    // Files beside the node directories that must not be taken for nodes.
    write("devices/system/node/online", "0-1\n");
    write("devices/system/node/possible", "0-1\n");
  }

 private:
  fs::path root_;
};

std::string errorOf(const FakeSysfs& sys) {
  auto got = readCpuTopology(sys.root());
  REQUIRE_FALSE(got.has_value());
  return got.error().message;
}

}  // namespace

TEST_CASE("cpu topology: a two-socket, two-node, hyper-threaded node") {
  FakeSysfs sys;
  sys.twoSocketNode();
  auto topo = readCpuTopology(sys.root());
  REQUIRE(topo.has_value());
  REQUIRE(topo->cpus.size() == 8);
  CHECK(topo->cpus[0] == CpuInfo{.cpu_id = 0, .core_id = 0, .socket_id = 0, .node_id = 0});
  CHECK(topo->cpus[2] == CpuInfo{.cpu_id = 2, .core_id = 0, .socket_id = 1, .node_id = 1});
  CHECK(topo->cpus[5] == CpuInfo{.cpu_id = 5, .core_id = 1, .socket_id = 0, .node_id = 0});
  CHECK(topo->cpus[7] == CpuInfo{.cpu_id = 7, .core_id = 1, .socket_id = 1, .node_id = 1});
  REQUIRE(topo->find(6) != nullptr);
  CHECK(topo->find(6)->node_id == 1);
  CHECK(topo->find(8) == nullptr);
  CHECK(topo->find(-1) == nullptr);
}

TEST_CASE("cpu topology: offline CPUs are left out") {
  FakeSysfs sys;
  sys.twoSocketNode();
  sys.write("devices/system/cpu/online", "0-2,4-7\n");
  // An offline CPU's topology directory is gone.
  sys.remove("devices/system/cpu/cpu3/topology/core_id");
  auto topo = readCpuTopology(sys.root());
  REQUIRE(topo.has_value());
  CHECK(topo->cpus.size() == 7);
  CHECK(topo->find(3) == nullptr);
  CHECK(topo->find(4) != nullptr);
}

TEST_CASE("cpu topology: without NUMA every CPU is on node 0, and package -1 is socket 0") {
  FakeSysfs sys;
  sys.write("devices/system/cpu/online", "0-1");
  sys.cpu(0, "0", "-1");
  sys.cpu(1, "1", "-1");
  auto topo = readCpuTopology(sys.root());
  REQUIRE(topo.has_value());
  REQUIRE(topo->cpus.size() == 2);
  CHECK(topo->cpus[1] == CpuInfo{.cpu_id = 1, .core_id = 1, .socket_id = 0, .node_id = 0});
}

TEST_CASE("cpu topology: a memory-only NUMA node with an empty cpulist is fine") {
  FakeSysfs sys;
  sys.twoSocketNode();
  sys.write("devices/system/node/node2/cpulist", "\n");
  auto topo = readCpuTopology(sys.root());
  REQUIRE(topo.has_value());
  REQUIRE(topo->find(3) != nullptr);
  CHECK(topo->find(3)->node_id == 1);
}

TEST_CASE("cpu topology: malformed files are errors naming the file") {
  FakeSysfs sys;
  sys.twoSocketNode();

  SECTION("garbled core_id") {
    sys.write("devices/system/cpu/cpu3/topology/core_id", "1x\n");
    CHECK_THAT(errorOf(sys), Contains("cpu3/topology/core_id"));
  }
  SECTION("truncated (empty) physical_package_id") {
    sys.write("devices/system/cpu/cpu5/topology/physical_package_id", "");
    CHECK_THAT(errorOf(sys), Contains("cpu5/topology/physical_package_id") && Contains("empty"));
  }
  SECTION("negative core_id") {
    sys.write("devices/system/cpu/cpu1/topology/core_id", "-1\n");
    CHECK_THAT(errorOf(sys), Contains("cpu1/topology/core_id"));
  }
  SECTION("missing topology file of an online CPU") {
    sys.remove("devices/system/cpu/cpu6/topology/physical_package_id");
    CHECK_THAT(errorOf(sys), Contains("cpu6/topology/physical_package_id"));
  }
  SECTION("truncated online list") {
    sys.write("devices/system/cpu/online", "0-");
    CHECK_THAT(errorOf(sys), Contains("devices/system/cpu/online"));
  }
  SECTION("empty online list") {
    sys.write("devices/system/cpu/online", "\n");
    CHECK_THAT(errorOf(sys), Contains("devices/system/cpu/online"));
  }
  SECTION("garbled node cpulist") {
    sys.write("devices/system/node/node1/cpulist", "2-3,6-\x01");
    CHECK_THAT(errorOf(sys), Contains("node1/cpulist"));
  }
  SECTION("a CPU on two nodes") {
    sys.write("devices/system/node/node1/cpulist", "1-3,6-7\n");
    CHECK_THAT(errorOf(sys), Contains("node1/cpulist") && Contains("cpu 1"));
  }
}

TEST_CASE("cpu topology: a missing sysfs root is an error") {
  FakeSysfs sys;
  auto got = readCpuTopology(sys.root() / "absent");
  REQUIRE_FALSE(got.has_value());
  CHECK_THAT(got.error().message, Contains("online"));
}
