// takeCpus tables: Koordinator's published expectations (cpu_accumulator_test.go, cited per
// table) and our own cases on 1, 2 and 4 sockets, with and without SMT, for each bind policy,
// exclusive policy and NUMA allocate strategy.
#include <optional>
#include <string>
#include <vector>

#include "fixture.h"
#include "plugins/nodenumaresource/cpu_accumulator.h"
#include "plugins/nodenumaresource/node_allocation.h"

using nnr::CpuBindPolicy;
using nnr::CpuExclusivePolicy;
using nnr::NumaAllocateStrategy;

namespace {

constexpr auto kFull = CpuBindPolicy::kFullPCPUs;
constexpr auto kSpread = CpuBindPolicy::kSpreadByPCPUs;
constexpr auto kMost = NumaAllocateStrategy::kMostAllocated;
constexpr auto kLeast = NumaAllocateStrategy::kLeastAllocated;
constexpr auto kEvenly = NumaAllocateStrategy::kDistributeEvenly;
constexpr auto kNoExcl = CpuExclusivePolicy::kNone;
constexpr auto kPCPU = CpuExclusivePolicy::kPCPULevel;
constexpr auto kNUMA = CpuExclusivePolicy::kNUMANodeLevel;

struct Shape {
  int sockets, nodes_per_socket, cores_per_node, cpus_per_core;
};

struct TakeCase {
  std::string name;
  Shape shape;
  std::string allocated;  // held by other pods
  int num_cpus;
  CpuBindPolicy bind;
  NumaAllocateStrategy strategy;
  std::optional<std::string> want;  // nullopt: refused
  CpuExclusivePolicy exclusive = kNoExcl;
  CpuExclusivePolicy allocated_exclusive = kNoExcl;
};

void runTable(const std::vector<TakeCase>& cases) {
  for (const TakeCase& c : cases) {
    INFO(c.name);
    const nnr::NodeCpuTopology t = topologyOf(c.shape.sockets, c.shape.nodes_per_socket,
                                              c.shape.cores_per_node, c.shape.cpus_per_core);
    const nnr::CpuSet held = cpus(c.allocated);
    std::vector<nnr::AllocatedCpu> allocated(static_cast<std::size_t>(t.numCpus()));
    held.forEach([&](int id) {
      allocated[static_cast<std::size_t>(id)] = nnr::AllocatedCpu{1, c.allocated_exclusive};
    });
    nnr::TakeCpusRequest req{c.num_cpus, c.bind, c.exclusive, c.strategy};
    auto got = nnr::takeCpus(t, 1, t.cpus() - held, allocated, req);
    if (!c.want) {
      REQUIRE_FALSE(got.has_value());
      continue;
    }
    REQUIRE(got.has_value());
    CHECK(got->toString() == cpus(*c.want).toString());
  }
}

}  // namespace

// TestTakeFullPCPUs (MostAllocated).
TEST_CASE("takeCpus FullPCPUs MostAllocated: Koordinator's table", "[nodenumaresource]") {
  runTable({
      {"allocate on non-NUMA node", {1, 1, 4, 2}, "", 2, kFull, kMost, "0-1"},
      {"with allocated cpus", {1, 1, 4, 2}, "0-1", 2, kFull, kMost, "2-3"},
      {"allocate whole socket", {2, 1, 4, 2}, "", 8, kFull, kMost, "0-7"},
      {"allocate across socket", {2, 1, 4, 2}, "", 12, kFull, kMost, "0-11"},
      {"allocate whole socket with partially-allocated socket",
       {2, 1, 4, 2},
       "0-1",
       8,
       kFull,
       kMost,
       "8-15"},
      {"allocate in the smallest idle socket", {2, 2, 4, 2}, "0-5,16-23", 6, kFull, kMost, "24-29"},
      {"allocate the most of CPUs on the same socket",
       {2, 2, 4, 2},
       "0-5,16-23",
       12,
       kFull,
       kMost,
       "6-15,24-25"},
      {"allocate from first socket", {2, 2, 4, 2}, "0-3,8-11", 4, kFull, kMost, "4-7"},
      {"allocate with less spread cpus",
       {2, 2, 2, 2},
       "0,2,4,8,12",
       4,
       kFull,
       kMost,
       "10-11,14-15"},
      {"allocate with the most spread cpus",
       {2, 2, 2, 2},
       "0,2,4,8,10,12",
       6,
       kFull,
       kMost,
       "5-7,13-15"},
      {"allocate with the most spread cpus on the smallest idle cpus socket",
       {2, 2, 2, 2},
       "0,2,4,8,9,10,12",
       6,
       kFull,
       kMost,
       "6-7,11,13-15"},
  });
}

// TestTakeFullPCPUsWithNUMALeastAllocated.
TEST_CASE("takeCpus FullPCPUs LeastAllocated: Koordinator's table", "[nodenumaresource]") {
  runTable({
      {"allocate on non-NUMA node", {1, 1, 4, 2}, "", 2, kFull, kLeast, "0-1"},
      {"with allocated cpus", {1, 1, 4, 2}, "0-1", 2, kFull, kLeast, "2-3"},
      {"allocate whole socket", {2, 1, 4, 2}, "", 8, kFull, kLeast, "0-7"},
      {"allocate across socket", {2, 1, 4, 2}, "", 12, kFull, kLeast, "0-11"},
      {"allocate whole socket with partially-allocated socket",
       {2, 1, 4, 2},
       "0-1",
       8,
       kFull,
       kLeast,
       "8-15"},
      {"allocate in the most idle socket", {2, 2, 4, 2}, "0-5,16-23", 6, kFull, kLeast, "8-13"},
      {"allocate the most of CPUs on the same socket",
       {2, 2, 4, 2},
       "0-5,16-23",
       12,
       kFull,
       kLeast,
       "6-15,24-25"},
      {"allocate from second socket", {2, 2, 4, 2}, "0-3,8-11", 4, kFull, kLeast, "16-19"},
      {"allocate with less spread cpus",
       {2, 2, 2, 2},
       "0,2,4,8,12",
       4,
       kFull,
       kLeast,
       "10-11,14-15"},
      {"allocate with the less spread cpus 2",
       {2, 2, 2, 2},
       "0,2,4,8,10,12",
       6,
       kFull,
       kLeast,
       "1,3,6-7,14-15"},
      {"allocate with the most spread cpus on the most idle cpus socket 3",
       {2, 2, 4, 2},
       "0,2,4,8,9,10,12",
       6,
       kFull,
       kLeast,
       "16-21"},
  });
}

// TestTakeSpreadByPCPUs and TestTakeSpreadByPCPUsWithNUMALeastAllocated.
TEST_CASE("takeCpus SpreadByPCPUs: Koordinator's tables", "[nodenumaresource]") {
  runTable({
      {"most: allocate on non-NUMA node", {1, 1, 4, 2}, "", 4, kSpread, kMost, "0,2,4,6"},
      {"most: allocate satisfied the partially-allocated socket",
       {2, 1, 4, 2},
       "0,2",
       4,
       kSpread,
       kMost,
       "1,3,4,6"},
      {"most: allocate cpus on full-free socket",
       {2, 1, 4, 2},
       "0-3",
       4,
       kSpread,
       kMost,
       "8,10,12,14"},
      {"most: allocate most of CPUs in the same socket and overlapped-cores",
       {2, 1, 4, 2},
       "0,2",
       6,
       kSpread,
       kMost,
       "1,3-7"},
      {"least: allocate on non-NUMA node", {1, 1, 4, 2}, "", 4, kSpread, kLeast, "0,2,4,6"},
      {"least: allocate satisfied the partially-allocated socket",
       {2, 1, 4, 2},
       "0,2",
       4,
       kSpread,
       kLeast,
       "8,10,12,14"},
      {"least: allocate cpus on full-free socket",
       {2, 1, 4, 2},
       "0-3",
       4,
       kSpread,
       kLeast,
       "8,10,12,14"},
      {"least: allocate most of CPUs in the same socket and overlapped-cores",
       {2, 1, 4, 2},
       "0,2",
       6,
       kSpread,
       kLeast,
       "8-12,14"},
  });
}

// TestTakeCPUsWithExclusivePolicy: the other pods' CPUs carry PCPULevel unless said otherwise;
// the pod binds SpreadByPCPUs with PCPULevel unless said otherwise.
TEST_CASE("takeCpus exclusive policies: Koordinator's table", "[nodenumaresource]") {
  runTable({
      {"allocate cpus on full-free socket with PCPULevel",
       {2, 1, 4, 2},
       "0,2",
       4,
       kSpread,
       kMost,
       "8,10,12,14",
       kPCPU,
       kPCPU},
      {"allocate overlapped cpus with PCPULevel",
       {2, 1, 4, 2},
       "",
       10,
       kSpread,
       kMost,
       "0-4,6,8,10,12,14",
       kPCPU,
       kPCPU},
      {"allocate cpus on large-size partially-allocated socket with PCPULevel",
       {2, 1, 8, 2},
       "0,2",
       4,
       kSpread,
       kMost,
       "4,6,8,10",
       kPCPU,
       kPCPU},
      {"allocate cpus with none exclusive policy",
       {2, 1, 8, 2},
       "0,2",
       4,
       kSpread,
       kMost,
       "1,3,4,6",
       kNoExcl,
       kPCPU},
      {"allocate cpus on full-free socket with NUMANodeLevel",
       {2, 1, 4, 2},
       "0,2",
       4,
       kSpread,
       kMost,
       "8,10,12,14",
       kNUMA,
       kNUMA},
      {"allocate cpus on partially-allocated socket without NUMANodeLevel",
       {2, 1, 4, 2},
       "0,2",
       4,
       kSpread,
       kMost,
       "1,3,4,6",
       kNoExcl,
       kNUMA},
      {"allocate cpus on full-free socket with NUMANodeLevel with PCPUs",
       {2, 1, 4, 2},
       "0,2",
       4,
       kFull,
       kMost,
       "8-11",
       kNUMA,
       kNUMA},
      {"allocate cpus on partially-allocated socket without NUMANodeLevel with PCPUs",
       {2, 1, 4, 2},
       "0,2",
       4,
       kFull,
       kMost,
       "4-7",
       kNoExcl,
       kNUMA},
  });
}

TEST_CASE("takeCpus on one socket, with and without SMT", "[nodenumaresource]") {
  runTable({
      {"no SMT: FullPCPUs takes the first free cores", {1, 1, 8, 1}, "0", 3, kFull, kMost, "1-3"},
      {"no SMT: SpreadByPCPUs takes cores as FullPCPUs does",
       {1, 1, 8, 1},
       "0",
       3,
       kSpread,
       kMost,
       "1-3"},
      {"SMT: FullPCPUs of an odd count ends on half a core",
       {1, 1, 4, 2},
       "",
       3,
       kFull,
       kMost,
       "0-2"},
      {"SMT: SpreadByPCPUs one thread per core first",
       {1, 1, 4, 2},
       "",
       3,
       kSpread,
       kLeast,
       "0,2,4"},
      {"SMT: SpreadByPCPUs past the cores takes second threads",
       {1, 1, 4, 2},
       "",
       6,
       kSpread,
       kMost,
       "0-4,6"},
      {"SMT: PCPULevel falls back to shared cores when every core is held",
       {1, 1, 2, 2},
       "0,2",
       2,
       kSpread,
       kMost,
       "1,3",
       kPCPU,
       kPCPU},
      {"SMT: a request of nothing takes nothing", {1, 1, 4, 2}, "", 0, kFull, kMost, ""},
      {"SMT: more than is free is refused", {1, 1, 4, 2}, "0-6", 2, kFull, kMost, std::nullopt},
      {"no SMT: all that is free", {1, 1, 8, 1}, "0-3", 4, kSpread, kLeast, "4-7"},
  });
}

TEST_CASE("takeCpus on two sockets without SMT", "[nodenumaresource]") {
  runTable({
      {"FullPCPUs over a socket: the first whole, the rest core by core",
       {2, 1, 4, 1},
       "",
       6,
       kFull,
       kMost,
       "0-5"},
      {"MostAllocated packs into the fuller socket", {2, 1, 4, 1}, "0", 2, kFull, kMost, "1-2"},
      {"LeastAllocated starts on the emptier socket", {2, 1, 4, 1}, "0", 2, kFull, kLeast, "4-5"},
      {"DistributeEvenly orders as LeastAllocated", {2, 1, 4, 1}, "0", 2, kSpread, kEvenly, "4-5"},
  });
}

TEST_CASE("takeCpus on four sockets with SMT", "[nodenumaresource]") {
  // Sockets 0..3 each one NUMA node of two cores: CPUs 4s..4s+3.
  const Shape four{4, 1, 2, 2};
  runTable({
      {"FullPCPUs MostAllocated: the fullest node with a whole core", four, "0-1,8", 2, kFull,
       kMost, "2-3"},
      {"FullPCPUs LeastAllocated: the freest node", four, "0-1,8", 2, kFull, kLeast, "4-5"},
      {"FullPCPUs DistributeEvenly: as LeastAllocated", four, "0-1,8", 2, kFull, kEvenly, "4-5"},
      {"SpreadByPCPUs MostAllocated: the fullest node with two cores", four, "0-1,8", 2, kSpread,
       kMost, "9-10"},
      {"SpreadByPCPUs LeastAllocated: the freest node", four, "0-1,8", 2, kSpread, kLeast, "4,6"},
      {"FullPCPUs across sockets: whole sockets first", four, "", 10, kFull, kMost, "0-9"},
      {"NUMANodeLevel avoids the node a NUMANodeLevel pod holds", four, "0", 2, kSpread, kMost,
       "4,6", kNUMA, kNUMA},
      {"without an exclusive policy the held node is fine", four, "0", 2, kSpread, kMost, "1-2",
       kNoExcl, kNUMA},
      {"PCPULevel skips nodes whose free cores are held", four, "0,4", 2, kSpread, kMost, "8,10",
       kPCPU, kPCPU},
      {"PCPULevel shares held cores when no node has enough free ones", four, "0,4,8,12", 2,
       kSpread, kMost, "1-2", kPCPU, kPCPU},
  });
}

// TestTakePreferredCPUs.
TEST_CASE("takePreferredCpus takes the preferred CPUs first", "[nodenumaresource]") {
  const nnr::NodeCpuTopology t = topologyOf(2, 1, 16, 2);
  const nnr::TakeCpusRequest spread2{2, kSpread, kNoExcl, kMost};
  auto plain = nnr::takeCpus(t, 1, t.cpus(), {}, spread2);
  REQUIRE(plain.has_value());
  CHECK(plain->toString() == "0,2");
  auto preferred = nnr::takePreferredCpus(t, 1, t.cpus(), cpus("0,2"), {}, spread2);
  REQUIRE(preferred.has_value());
  CHECK(preferred->toString() == "0,2");
  auto rest = nnr::takePreferredCpus(t, 1, t.cpus() - *preferred, {}, {}, spread2);
  REQUIRE(rest.has_value());
  CHECK(rest->toString() == "1,3");
  auto odd = nnr::takePreferredCpus(t, 1, t.cpus(), cpus("11,13,15,17"), {}, spread2);
  REQUIRE(odd.has_value());
  CHECK(odd->toString() == "11,13");
  // Fewer preferred CPUs than asked: the rest from the others.
  auto mixed = nnr::takePreferredCpus(t, 1, t.cpus(), cpus("30"), {},
                                      nnr::TakeCpusRequest{3, kSpread, kNoExcl, kMost});
  REQUIRE(mixed.has_value());
  CHECK(mixed->size() == 3);
  CHECK(mixed->contains(30));
}

// TestTakeCPUsWithMaxRefCount and TestTakeCPUsSortByRefCount: CPUs shared by two pods.
TEST_CASE("takeCpus with shared CPUs prefers the least shared", "[nodenumaresource]") {
  struct Step {
    int num_cpus;
    CpuBindPolicy bind;
    std::string want;
  };
  struct Sequence {
    std::string name;
    Shape shape;
    std::vector<Step> steps;
    std::string left_after;
  };
  const std::vector<Sequence> sequences = {
      {"TestTakeCPUsWithMaxRefCount",
       {1, 1, 4, 2},
       {{4, kFull, "0-3"}, {5, kFull, "0,4-7"}, {4, kFull, "2-5"}},
       "1,6-7"},
      {"TestTakeCPUsSortByRefCount",
       {1, 1, 16, 2},
       {{16, kSpread, "0,2,4,6,8,10,12,14,16,18,20,22,24,26,28,30"},
        {16, kFull, "0-15"},
        {16, kSpread, "1,3,5,7,9,11,13,15,17,19,21,23,25,27,29,31"},
        {16, kFull, "16-31"}},
       ""},
  };
  for (const Sequence& s : sequences) {
    INFO(s.name);
    const nnr::NodeCpuTopology t = topologyOf(s.shape.sockets, s.shape.nodes_per_socket,
                                              s.shape.cores_per_node, s.shape.cpus_per_core);
    nnr::NodeAllocation node;
    int pod = 0;
    for (const Step& step : s.steps) {
      const nnr::CpuSet available = node.availableCpus(t, 2, {});
      auto got = nnr::takeCpus(t, 2, available, node.allocatedCpus(),
                               nnr::TakeCpusRequest{step.num_cpus, step.bind, kNoExcl, kMost});
      REQUIRE(got.has_value());
      CHECK(got->toString() == cpus(step.want).toString());
      nnr::PodAllocation a;
      a.uid = "pod-" + std::to_string(pod++);
      a.cpus = *got;
      a.exclusive = kPCPU;
      REQUIRE(node.add(t, std::move(a)));
    }
    CHECK(node.availableCpus(t, 2, {}).toString() == s.left_after);
  }
}

TEST_CASE("required bind policies: usable CPUs and the check of a result", "[nodenumaresource]") {
  const nnr::NodeCpuTopology t = topologyOf(1, 1, 4, 2);
  const nnr::CpuSet available = cpus("1,2-3,4,6-7");
  struct Case {
    CpuBindPolicy policy;
    std::string usable;
  };
  for (const Case& c : std::vector<Case>{
           {kFull, "2-3,6-7"}, {kSpread, "1-2,4,6"}, {CpuBindPolicy::kNone, "1-4,6-7"}}) {
    INFO(nnr::toString(c.policy));
    CHECK(nnr::cpusUsableByRequiredPolicy(t, available, c.policy).toString() == c.usable);
    CHECK(nnr::countCpusUsableByRequiredPolicy(t, available, c.policy) == cpus(c.usable).size());
  }
  CHECK(nnr::satisfiesRequiredPolicy(t, cpus("0-3"), kFull));
  CHECK_FALSE(nnr::satisfiesRequiredPolicy(t, cpus("0-2"), kFull));
  CHECK(nnr::satisfiesRequiredPolicy(t, cpus("0,2,4"), kSpread));
  CHECK_FALSE(nnr::satisfiesRequiredPolicy(t, cpus("0-1"), kSpread));
  CHECK(nnr::satisfiesRequiredPolicy(t, cpus("0-1"), CpuBindPolicy::kNone));
}

TEST_CASE("counting usable CPUs matches building them, uniform cores or not",
          "[nodenumaresource]") {
  std::vector<nnr::NodeCpuTopology> topologies = {topologyOf(1, 1, 4, 2), topologyOf(2, 2, 4, 2),
                                                  topologyOf(4, 1, 2, 2), topologyOf(2, 1, 8, 1)};
  // Two CPUs offline: cores of one CPU among cores of two.
  std::vector<koord::cgroup::CpuInfo> partial = cpuInfos(2, 1, 4, 2);
  std::erase_if(partial,
                [](const koord::cgroup::CpuInfo& c) { return c.cpu_id == 3 || c.cpu_id == 9; });
  auto odd = nnr::NodeCpuTopology::build(partial);
  REQUIRE(odd.has_value());
  CHECK_FALSE(odd->uniformCores());
  CHECK(topologies[0].uniformCores());
  topologies.push_back(std::move(*odd));

  std::uint64_t state = 42;
  auto next = [&] {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return state >> 33;
  };
  for (const nnr::NodeCpuTopology& t : topologies) {
    for (int round = 0; round < 200; ++round) {
      nnr::CpuSet available;
      t.cpus().forEach([&](int c) {
        if (next() % 3 != 0)
          available.add(c);
      });
      for (CpuBindPolicy p : {kFull, kSpread, CpuBindPolicy::kNone}) {
        INFO(available.toString() << " " << nnr::toString(p));
        CHECK(nnr::countCpusUsableByRequiredPolicy(t, available, p) ==
              nnr::cpusUsableByRequiredPolicy(t, available, p).size());
      }
    }
  }
}
