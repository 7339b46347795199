// The topology cache's per-node summary word: what Filter reads without the node's lock gives
// cpusMayFit's answer over the node's whole state, through pods coming and going.
#include "plugins/nodenumaresource/node_summary.h"

#include <catch2/catch.hpp>

#include <memory>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "fixture.h"
#include "framework/node_info.h"
#include "framework/node_slot.h"
#include "plugins/nodenumaresource/pod_allocate.h"
#include "plugins/nodenumaresource/topology_cache.h"

using namespace koord::roles::scheduler;
using namespace koord::roles::scheduler::nodenumaresource;

TEST_CASE("node summary: the word round-trips, and what it cannot hold is not usable",
          "[scheduler][nodenumaresource]") {
  NodeSummary s;
  s.usable = true;
  s.node_bind = NodeCpuBindPolicy::kSpreadByPCPUs;
  s.numa_policy = NumaTopologyPolicy::kSingleNUMANode;
  s.topology_valid = true;
  s.cpus_per_core = 2;
  s.free_cpus = 4095;
  s.free_full_pcpus = 4094;
  s.free_spread_pcpus = 2047;
  const NodeSummary back = NodeSummary::unpack(s.pack());
  CHECK(back.usable);
  CHECK(back.node_bind == s.node_bind);
  CHECK(back.numa_policy == s.numa_policy);
  CHECK(back.topology_valid);
  CHECK(back.cpus_per_core == 2);
  CHECK(back.free_cpus == 4095);
  CHECK(back.free_full_pcpus == 4094);
  CHECK(back.free_spread_pcpus == 2047);

  NodeSummary big = s;
  big.free_cpus = NodeSummary::kMaxCount + 1;
  CHECK_FALSE(NodeSummary::unpack(big.pack()).usable);
  NodeSummary smt = s;
  smt.cpus_per_core = NodeSummary::kMaxCpusPerCore + 1;
  CHECK_FALSE(NodeSummary::unpack(smt.pack()).usable);
  CHECK_FALSE(NodeSummary::unpack(0).usable);
}

TEST_CASE("node summary: cpusMayFit from the word equals it over the node's state",
          "[scheduler][nodenumaresource]") {
  std::mt19937 rng(29);
  TopologyCache cache;
  const std::string name = "summary-node";
  const std::uint32_t slot = nodeSlotOf(name);
  Node node;
  node.name = name;

  // Not seen as a Node yet: the labels are unknown, so the word cannot answer.
  auto options = std::make_shared<TopologyOptions>();
  options->topology = topologyOf(2, 1, 6, 2);
  options->reserved_cpus = cpus("0-1");
  cache.setTopology(name, options);
  CHECK_FALSE(cache.summary(slot).usable);
  cache.setNode(node);
  REQUIRE(cache.summary(slot).usable);
  CHECK(cache.summary(slot).cpus_per_core == 2);

  std::vector<std::string> held;
  int checked = 0;
  for (int step = 0; step < 300; ++step) {
    if (!held.empty() && rng() % 3 == 0) {
      const std::size_t i = rng() % held.size();
      REQUIRE(cache.releasePod(name, held[i]));
      held.erase(held.begin() + static_cast<std::ptrdiff_t>(i));
    } else {
      PodAllocation pod;
      pod.uid = fmt::format("uid-{}", step);
      const int first = static_cast<int>(rng() % 24);
      pod.cpus.add(first);
      if (rng() % 2 == 0)
        pod.cpus.add((first + 12) % 24);
      cache.recordPod(name, pod);
      held.push_back(pod.uid);
    }
    const NodeSummary sum = cache.summary(slot);
    REQUIRE(sum.usable);
    cache.read(slot, [&](const NodeTopologyState& ns) {
      const NodeNumaView view{ns.topology(), ns.allocation, ns.reserved_cpus,
                              ns.options->max_ref_count, ns.zones()};
      for (int needed = 1; needed <= 24; ++needed) {
        for (CpuBindPolicy policy : {CpuBindPolicy::kFullPCPUs, CpuBindPolicy::kSpreadByPCPUs,
                                     CpuBindPolicy::kConstrainedBurst}) {
          for (bool required : {false, true}) {
            AllocateRequest request;
            request.num_cpus_needed = needed;
            request.request_cpu_bind = true;
            request.bind = {policy, required};
            INFO("step " << step << ", " << needed << " CPUs, policy " << static_cast<int>(policy)
                         << (required ? " required" : ""));
            CHECK(sum.cpusMayFit(needed, policy, required) == cpusMayFit(view, request));
            ++checked;
          }
        }
      }
    });
  }
  CHECK(checked > 0);

  // A label the word cannot carry sends Filter to the whole state; the kubelet's full-pcpus-only
  // and a readable label are in the word.
  node.labels[std::string(kLabelNUMATopologyPolicy)] = "Sometimes";
  cache.setNode(node);
  CHECK_FALSE(cache.summary(slot).usable);
  node.labels[std::string(kLabelNUMATopologyPolicy)] = "Restricted";
  node.labels[std::string(kLabelNodeCPUBindPolicy)] = "SpreadByPCPUs";
  cache.setNode(node);
  CHECK(cache.summary(slot).numa_policy == NumaTopologyPolicy::kRestricted);
  CHECK(cache.summary(slot).node_bind == NodeCpuBindPolicy::kSpreadByPCPUs);
  auto full = std::make_shared<TopologyOptions>(*options);
  full->kubelet_full_pcpus_only = true;
  cache.setTopology(name, full);
  CHECK(cache.summary(slot).node_bind == NodeCpuBindPolicy::kFullPCPUsOnly);
  cache.removeNode(name);
  CHECK_FALSE(cache.summary(slot).usable);
}
