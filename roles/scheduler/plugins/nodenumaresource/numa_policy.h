// NodeNUMAResource's vocabulary: CPU bind, CPU exclusive, NUMA allocate and NUMA topology
// policies with their Koordinator spellings, and the pod/node label and annotation keys.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace koord::roles::scheduler::nodenumaresource {

// Pod annotations.
inline constexpr std::string_view kAnnotationResourceSpec =
    "scheduling.koordinator.sh/resource-spec";
inline constexpr std::string_view kAnnotationNUMATopologySpec =
    "scheduling.koordinator.sh/numa-topology-spec";
inline constexpr std::string_view kAnnotationResourceStatus =
    "scheduling.koordinator.sh/resource-status";

// Node labels (and the NodeResourceTopology annotation with the kubelet's CPU manager policy).
inline constexpr std::string_view kLabelNodeCPUBindPolicy = "node.koordinator.sh/cpu-bind-policy";
inline constexpr std::string_view kLabelNodeNUMAAllocateStrategy =
    "node.koordinator.sh/numa-allocate-strategy";
inline constexpr std::string_view kLabelNUMATopologyPolicy =
    "node.koordinator.sh/numa-topology-policy";
inline constexpr std::string_view kAnnotationKubeletCPUManagerPolicy =
    "kubelet.koordinator.sh/cpu-manager-policy";

/// A pod's CPU bind policy. kNone is the unset value (""); kDefault stands for the scheduler's
/// defaultCPUBindPolicy; kConstrainedBurst is carried out by the koordlet, not by binding.
enum class CpuBindPolicy : std::uint8_t {
  kNone,
  kDefault,
  kFullPCPUs,
  kSpreadByPCPUs,
  kConstrainedBurst
};
/// "" and "None" both read as kNone.
enum class CpuExclusivePolicy : std::uint8_t { kNone, kPCPULevel, kNUMANodeLevel };
/// What a node's cpu-bind-policy label (or the kubelet's full-pcpus-only option) requires.
enum class NodeCpuBindPolicy : std::uint8_t { kNone, kFullPCPUsOnly, kSpreadByPCPUs };
/// Which NUMA nodes and sockets CPUs come from first. Binding orders candidates only by most or
/// least allocated: as in Koordinator, DistributeEvenly orders them as LeastAllocated does.
enum class NumaAllocateStrategy : std::uint8_t {
  kMostAllocated,
  kLeastAllocated,
  kDistributeEvenly
};
/// kNone is "": no NUMA alignment.
enum class NumaTopologyPolicy : std::uint8_t { kNone, kBestEffort, kRestricted, kSingleNUMANode };
/// A pod's singleNUMANodeExclusive; kNone is "".
enum class NumaExclusive : std::uint8_t { kNone, kPreferred, kRequired };
/// Who uses a NUMA node: nobody, pods bound within it alone, or pods spanning several nodes.
enum class NumaNodeStatus : std::uint8_t { kIdle, kSingle, kShared };

/// The Koordinator spelling ("" for kNone).
std::string_view toString(CpuBindPolicy policy);
std::string_view toString(CpuExclusivePolicy policy);  // "" for kNone
std::string_view toString(NodeCpuBindPolicy policy);   // "None" for kNone
std::string_view toString(NumaAllocateStrategy strategy);
std::string_view toString(NumaTopologyPolicy policy);  // "" for kNone
std::string_view toString(NumaExclusive exclusive);    // "" for kNone
std::string_view toString(NumaNodeStatus status);      // "idle", "single", "shared"

/// nullopt for anything Koordinator does not spell (case matters).
std::optional<CpuBindPolicy> parseCpuBindPolicy(std::string_view text);
std::optional<CpuExclusivePolicy> parseCpuExclusivePolicy(std::string_view text);
std::optional<NumaAllocateStrategy> parseNumaAllocateStrategy(std::string_view text);
std::optional<NumaTopologyPolicy> parseNumaTopologyPolicy(std::string_view text);
std::optional<NumaExclusive> parseNumaExclusive(std::string_view text);

/// Whether the NUMA nodes and sockets with the fewest free CPUs come first (kMostAllocated
/// packs); the other two strategies start from the freest.
inline bool packs(NumaAllocateStrategy s) {
  return s == NumaAllocateStrategy::kMostAllocated;
}

}  // namespace koord::roles::scheduler::nodenumaresource
