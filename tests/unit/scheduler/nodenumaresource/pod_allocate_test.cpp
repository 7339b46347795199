// Allocation on one node: Koordinator's resource manager tables (TestResourceManagerAllocate,
// TestAllocateDistributeEvenly, TestResourceManagerGetTopologyHint) on two sockets of 26 cores
// with SMT, zones of 52 CPUs and 128Gi, plus the cheap Filter check.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "fixture.h"
#include "plugins/nodenumaresource/pod_allocate.h"

using nnr::CpuBindPolicy;
using nnr::NumaResource;

namespace {

constexpr std::int64_t kGi = 1024LL * 1024 * 1024;
constexpr auto kFull = CpuBindPolicy::kFullPCPUs;
constexpr auto kSpread = CpuBindPolicy::kSpreadByPCPUs;
constexpr auto kNoPolicy = CpuBindPolicy::kNone;

using NumaCpus = std::vector<std::pair<int, std::int64_t>>;  // (node, millicores)

struct Request {
  int num_cpus;
  bool bind;
  CpuBindPolicy policy;
  std::int64_t cpu;       // millicores, as NUMA placement weighs them
  std::int64_t original;  // millicores as asked; 0: same as cpu
};

struct Held {
  std::string cpus;
  NumaCpus numa;
};

struct Fixture {
  nnr::NodeCpuTopology topology = topologyOf(2, 1, 26, 2);
  nnr::NodeAllocation allocation;
  nnr::CpuSet reserved;
  std::vector<nnr::NumaNodeResources> zones;
  double ratio = 1;

  explicit Fixture(const Held& held, double cpu_ratio = 1, bool hugepages = false)
      : ratio(cpu_ratio) {
    for (int node : {0, 1}) {
      nnr::NumaResources r;
      r.set(NumaResource::kCpu, nnr::amplify(52000, cpu_ratio));
      r.set(NumaResource::kMemory, 128 * kGi);
      if (hugepages)
        r.set(NumaResource::kHugepages1Gi, 4 * kGi);
      zones.push_back({node, r});
    }
    if (held.cpus.empty() && held.numa.empty())
      return;
    nnr::PodAllocation a;
    a.uid = "123456";
    a.cpus = cpus(held.cpus);
    for (auto [node, cpu] : held.numa) {
      nnr::NumaResources r;
      r.set(NumaResource::kCpu, cpu);
      a.numa_resources.push_back({node, r});
    }
    REQUIRE(allocation.add(topology, std::move(a)));
  }

  nnr::NodeNumaView view() const {
    return nnr::NodeNumaView{topology,
                             allocation,
                             reserved,
                             1,
                             zones,
                             ratio,
                             nnr::NumaAllocateStrategy::kLeastAllocated};
  }
};

nnr::AllocateRequest requestOf(const Request& r, nnr::NumaMask hint) {
  nnr::AllocateRequest out;
  out.num_cpus_needed = r.num_cpus;
  out.request_cpu_bind = r.bind;
  out.bind = {r.policy, r.policy != kNoPolicy};
  out.requests.set(NumaResource::kCpu, r.cpu);
  out.original_requests.set(NumaResource::kCpu, r.original == 0 ? r.cpu : r.original);
  out.hint = nnr::NumaHint{hint, true, 0};
  return out;
}

struct AllocCase {
  std::string name;
  Request request;
  Held held;
  double ratio;
  nnr::NumaMask hint;
  std::optional<std::string> want_cpus;  // nullopt: refused
  NumaCpus want_numa;
};

void runAllocate(const std::vector<AllocCase>& cases) {
  for (const AllocCase& c : cases) {
    INFO(c.name);
    Fixture f(c.held, c.ratio);
    auto got = nnr::allocatePod(f.view(), requestOf(c.request, c.hint));
    if (!c.want_cpus) {
      REQUIRE_FALSE(got.has_value());
      continue;
    }
    REQUIRE(got.has_value());
    CHECK(got->cpus.toString() == cpus(*c.want_cpus).toString());
    NumaCpus numa;
    for (const auto& n : got->numa_resources)
      numa.emplace_back(n.node, n.resources.get(NumaResource::kCpu));
    CHECK(numa == c.want_numa);
  }
}

const Held kNone{};
const Held kFree4Cores{"4-104", {{0, 48000}, {1, 52000}}};
const Held kOddThreadsHeld{"1,3,5,7-104", {{0, 48000}, {1, 52000}}};
const Held kSharesHeld{"0-49,52-101", {{0, 50000}, {1, 50000}}};

}  // namespace

// TestResourceManagerAllocate: hint on NUMA node 0.
TEST_CASE("allocatePod on one NUMA node: Koordinator's table", "[nodenumaresource]") {
  const nnr::NumaMask n0 = 0b01;
  runAllocate({
      {"allocate with non-existing resources in NUMA",
       {4, false, kNoPolicy, 4000, 0},
       kNone,
       1,
       n0,
       "",
       {{0, 4000}}},
      {"allocate with insufficient resources",
       {4, false, kNoPolicy, 54000, 0},
       kNone,
       1,
       n0,
       std::nullopt,
       {}},
      {"allocate with required CPUBindPolicyFullPCPUs",
       {4, true, kFull, 4000, 0},
       kNone,
       1,
       n0,
       "0-3",
       {{0, 4000}}},
      {"allocate with required CPUBindPolicyFullPCPUs and allocated",
       {4, true, kFull, 4000, 0},
       kFree4Cores,
       1,
       n0,
       "0-3",
       {{0, 4000}}},
      {"failed to allocate with required CPUBindPolicyFullPCPUs and allocated",
       {4, true, kFull, 4000, 0},
       kOddThreadsHeld,
       1,
       n0,
       std::nullopt,
       {}},
      {"allocate with required CPUBindPolicySpreadByPCPUs",
       {4, true, kSpread, 4000, 0},
       kNone,
       1,
       n0,
       "0,2,4,6",
       {{0, 4000}}},
      {"allocate with required CPUBindPolicySpreadByPCPUs and allocated",
       {4, true, kSpread, 4000, 0},
       kOddThreadsHeld,
       1,
       n0,
       "0,2,4,6",
       {{0, 4000}}},
      {"failed to allocate with required CPUBindPolicySpreadByPCPUs and allocated",
       {4, true, kSpread, 4000, 0},
       kFree4Cores,
       1,
       n0,
       std::nullopt,
       {}},
      {"allocate with required CPUBindPolicySpreadByPCPUs and amplified requests",
       {4, true, kSpread, 6000, 4000},
       kNone,
       1.5,
       n0,
       "0,2,4,6",
       {{0, 4000}}},
      {"allocate with required CPUBindPolicySpreadByPCPUs and allocated and amplified requests",
       {4, true, kSpread, 6000, 4000},
       kOddThreadsHeld,
       1.5,
       n0,
       "0,2,4,6",
       {{0, 4000}}},
      {"failed to allocate with CPU Share and allocated and amplified ratios",
       {4, false, kNoPolicy, 4000, 0},
       kSharesHeld,
       1.5,
       n0,
       std::nullopt,
       {}},
      {"allocate by numa hint on mixed cpuset/share node",
       {8, true, kFull, 8000, 0},
       Held{"0-43,53-96", {{0, 48000}, {1, 48000}}},
       1,
       0b11,
       "44-47,98-101",
       {{0, 4000}, {1, 4000}}},
  });
}

// TestAllocateDistributeEvenly: hint on both NUMA nodes unless said otherwise.
TEST_CASE("allocatePod spread over the hint's NUMA nodes: Koordinator's table",
          "[nodenumaresource]") {
  const nnr::NumaMask both = 0b11;
  runAllocate({
      {"allocate with non-existing resources in NUMA",
       {4, false, kNoPolicy, 4000, 0},
       kNone,
       1,
       both,
       "",
       {{0, 2000}, {1, 2000}}},
      {"allocate with insufficient resources",
       {4, false, kNoPolicy, 108000, 0},
       kNone,
       1,
       both,
       std::nullopt,
       {}},
      {"allocate with required CPUBindPolicyFullPCPUs",
       {4, true, kFull, 4000, 0},
       kNone,
       1,
       both,
       "0-1,52-53",
       {{0, 2000}, {1, 2000}}},
      {"allocate with required CPUBindPolicyFullPCPUs and allocated",
       {4, true, kFull, 4000, 0},
       Held{"4-101", {{0, 48000}, {1, 50000}}},
       1,
       both,
       "0-1,102-103",
       {{0, 2000}, {1, 2000}}},
      {"failed to allocate with required CPUBindPolicyFullPCPUs and allocated",
       {4, true, kFull, 4000, 0},
       kOddThreadsHeld,
       1,
       0b01,
       std::nullopt,
       {}},
      {"allocate with required CPUBindPolicySpreadByPCPUs",
       {4, true, kSpread, 4000, 0},
       kNone,
       1,
       both,
       "0,2,52,54",
       {{0, 2000}, {1, 2000}}},
      {"allocate with required CPUBindPolicySpreadByPCPUs and allocated, plural numCPUsNeeded, "
       "not balanced",
       {4, true, kSpread, 4000, 0},
       Held{"1,3,5,7-101,103", {{0, 48000}, {1, 50000}}},
       1,
       both,
       "0,2,4,102",
       {{0, 3000}, {1, 1000}}},
      {"allocate with required CPUBindPolicySpreadByPCPUs and allocated, plural numCPUsNeeded, "
       "balanced",
       {4, true, kSpread, 4000, 0},
       Held{"4-100", {{0, 48000}, {1, 49000}}},
       1,
       both,
       "0,2,101-102",
       {{0, 2000}, {1, 2000}}},
      {"allocate with required CPUBindPolicySpreadByPCPUs and allocated, singular num cpus "
       "needed",
       {5, true, kSpread, 5000, 0},
       Held{"1,3,5,7-97,103", {{0, 48000}, {1, 47000}}},
       1,
       both,
       "0,2,4,98,100",
       {{0, 3000}, {1, 2000}}},
      {"failed to allocate with required CPUBindPolicySpreadByPCPUs and allocated",
       {4, true, kSpread, 4000, 0},
       kFree4Cores,
       1,
       both,
       std::nullopt,
       {}},
      {"allocate with required CPUBindPolicySpreadByPCPUs and amplified requests",
       {4, true, kSpread, 6000, 4000},
       kNone,
       1.5,
       both,
       "0,2,52,54",
       {{0, 2000}, {1, 2000}}},
      {"allocate with required CPUBindPolicySpreadByPCPUs and allocated and amplified requests",
       {4, true, kSpread, 6000, 4000},
       Held{"1,3,5,7-101", {{0, 48000}, {1, 50000}}},
       1.5,
       both,
       "0,2,4,102",
       {{0, 3000}, {1, 1000}}},
      {"allocate with CPU Share and allocated and amplified ratios",
       {3, false, kNoPolicy, 3500, 0},
       kSharesHeld,
       1.5,
       both,
       "",
       {{0, 1750}, {1, 1750}}},
  });
}

TEST_CASE("allocatePod without a hint binds anywhere", "[nodenumaresource]") {
  runAllocate({
      {"required FullPCPUs, nothing on NUMA nodes",
       {4, true, kFull, 4000, 0},
       kNone,
       1,
       0,
       "0-3",
       {}},
      {"required FullPCPUs refused when the whole cores left are too few",
       {4, true, kFull, 4000, 0},
       Held{"1,3,5,7-103", {}},
       1,
       0,
       std::nullopt,
       {}},
      {"not binding and no hint: nothing at all",
       {4, false, kNoPolicy, 4000, 0},
       kNone,
       1,
       0,
       "",
       {}},
  });
}

// TestResourceManagerGetTopologyHint (BestEffort), zones with 4Gi of 1Gi hugepages.
TEST_CASE("podNumaHints: Koordinator's table", "[nodenumaresource]") {
  auto H = [](nnr::NumaMask m, bool preferred) { return nnr::NumaHint{m, preferred, 0}; };
  auto R = [](std::string name, std::vector<nnr::NumaHint> hints) {
    return nnr::ResourceHints{std::move(name), std::move(hints)};
  };
  const std::vector<nnr::NumaHint> three = {H(0b01, true), H(0b10, true), H(0b11, false)};
  struct Case {
    std::string name;
    Request request;
    Held held;
    double ratio;
    nnr::ProviderHints want;
  };
  const std::vector<Case> cases = {
      {"allocate with required CPUBindPolicyFullPCPUs",
       {4, true, kFull, 4000, 0},
       kNone,
       1,
       {R("cpu", three)}},
      {"allocate with required CPUBindPolicyFullPCPUs and allocated",
       {4, true, kFull, 4000, 0},
       kFree4Cores,
       1,
       {R("cpu", {H(0b01, true)})}},
      {"failed to allocate with required CPUBindPolicyFullPCPUs and allocated",
       {4, true, kFull, 4000, 0},
       kOddThreadsHeld,
       1,
       {R("cpu", {})}},
      {"allocate with required CPUBindPolicySpreadByPCPUs",
       {4, true, kSpread, 4000, 0},
       kNone,
       1,
       {R("cpu", three)}},
      {"allocate with required CPUBindPolicySpreadByPCPUs and allocated",
       {4, true, kSpread, 4000, 0},
       kOddThreadsHeld,
       1,
       {R("cpu", {H(0b01, true)})}},
      {"failed to allocate with required CPUBindPolicySpreadByPCPUs and allocated",
       {4, true, kSpread, 4000, 0},
       kFree4Cores,
       1,
       {R("cpu", {})}},
      {"failed to allocate with CPU Share and allocated and amplified ratios",
       {4, false, kNoPolicy, 4000, 0},
       kSharesHeld,
       1.5,
       {R("cpu", {H(0b11, true)})}},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    Fixture f(c.held, c.ratio, /*hugepages=*/true);
    auto got = nnr::podNumaHints(f.view(), requestOf(c.request, 0), nullptr,
                                 nnr::NumaTopologyPolicy::kBestEffort);
    REQUIRE(got.has_value());
    CHECK(*got == c.want);
  }

  SECTION("failed to generate hints with insufficient memory and hugepages") {
    Fixture f(kNone, 1, /*hugepages=*/true);
    nnr::PodAllocation held;
    held.uid = "123456";
    for (int node : {0, 1}) {
      nnr::NumaResources r;
      r.set(NumaResource::kCpu, 4000);
      r.set(NumaResource::kMemory, 120 * kGi);
      r.set(NumaResource::kHugepages1Gi, 4 * kGi);
      held.numa_resources.push_back({node, r});
    }
    REQUIRE(f.allocation.add(f.topology, held));
    nnr::AllocateRequest req = requestOf({4, false, kNoPolicy, 4000, 0}, 0);
    req.requests.set(NumaResource::kMemory, 4 * kGi);
    req.requests.set(NumaResource::kHugepages1Gi, 4 * kGi);
    auto got = nnr::podNumaHints(f.view(), req, nullptr, nnr::NumaTopologyPolicy::kBestEffort);
    REQUIRE(got.has_value());
    CHECK(*got == nnr::ProviderHints{R("cpu", three), R("memory", {}), R("hugepages-1Gi", {})});
  }
  SECTION("a node without zones has no hints") {
    Fixture f(kNone);
    f.zones.clear();
    auto got = nnr::podNumaHints(f.view(), requestOf({4, false, kNoPolicy, 4000, 0}, 0), nullptr,
                                 nnr::NumaTopologyPolicy::kBestEffort);
    REQUIRE_FALSE(got.has_value());
    CHECK(got.error().message == nnr::kErrInsufficientNumaResources);
  }
}

TEST_CASE("cpusMayFit agrees with allocateCpus without hint or preferred CPUs",
          "[nodenumaresource]") {
  struct Case {
    std::string name;
    std::string held;
    int num_cpus;
    CpuBindPolicy policy;
    bool required;
    bool want;
  };
  const std::vector<Case> cases = {
      {"empty node", "", 8, kFull, true, true},
      {"whole cores too few for required FullPCPUs", "1,3,5,7-103", 4, kFull, true, false},
      {"the same CPUs suffice when FullPCPUs is only preferred", "1,3,5,7-103", 4, kFull, false,
       true},
      {"distinct cores enough for required SpreadByPCPUs", "1,3,5,7-103", 4, kSpread, true, true},
      {"distinct cores too few for required SpreadByPCPUs", "4-103", 3, kSpread, true, false},
      {"every CPU held", "0-103", 1, kFull, false, false},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    Fixture f(Held{c.held, {}});
    nnr::AllocateRequest req = requestOf({c.num_cpus, true, c.policy, c.num_cpus * 1000, 0}, 0);
    req.bind = {c.policy, c.required};
    CHECK(nnr::cpusMayFit(f.view(), req) == c.want);
    CHECK(nnr::allocateCpus(f.view(), req, {}).has_value() == c.want);
  }
}

TEST_CASE("cpusMayFit's shortcuts agree with the full count", "[nodenumaresource]") {
  const nnr::NodeCpuTopology t = topologyOf(2, 1, 8, 2);
  std::uint64_t state = 7;
  auto next = [&] {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return state >> 33;
  };
  const nnr::CpuSet reserved{0};
  const std::vector<nnr::NumaNodeResources> zones;
  for (int round = 0; round < 300; ++round) {
    nnr::NodeAllocation allocation;
    nnr::PodAllocation held;
    held.uid = "held";
    const std::uint64_t density = next() % 4;  // from nearly empty to nearly full
    t.cpus().forEach([&](int c) {
      if (next() % 4 < density)
        held.cpus.add(c);
    });
    REQUIRE(allocation.add(t, held));
    const nnr::NodeNumaView view{
        t, allocation, reserved, 1, zones, 1, nnr::NumaAllocateStrategy::kLeastAllocated};
    const nnr::CpuSet available = allocation.availableCpus(t, 1, reserved);
    for (CpuBindPolicy p : {kFull, kSpread}) {
      for (int n : {1, 2, 4, 6, 8, 12, 16, 24}) {
        nnr::AllocateRequest req = requestOf({n, true, p, n * 1000, 0}, 0);
        INFO(available.toString() << " " << nnr::toString(p) << " " << n);
        CHECK(nnr::cpusMayFit(view, req) ==
              (nnr::cpusUsableByRequiredPolicy(t, available, p).size() >= n));
      }
    }
  }
}
