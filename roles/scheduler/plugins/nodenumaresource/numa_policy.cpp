// The spellings of NodeNUMAResource's policies.
#include "plugins/nodenumaresource/numa_policy.h"

#include <utility>

namespace koord::roles::scheduler::nodenumaresource {

namespace {

template <typename E>
struct Spelling {
  E value;
  std::string_view name;
};

constexpr Spelling<CpuBindPolicy> kBindPolicies[] = {
    {CpuBindPolicy::kNone, ""},
    {CpuBindPolicy::kDefault, "Default"},
    {CpuBindPolicy::kFullPCPUs, "FullPCPUs"},
    {CpuBindPolicy::kSpreadByPCPUs, "SpreadByPCPUs"},
    {CpuBindPolicy::kConstrainedBurst, "ConstrainedBurst"},
};
constexpr Spelling<CpuExclusivePolicy> kExclusivePolicies[] = {
    {CpuExclusivePolicy::kNone, ""},
    {CpuExclusivePolicy::kNone, "None"},
    {CpuExclusivePolicy::kPCPULevel, "PCPULevel"},
    {CpuExclusivePolicy::kNUMANodeLevel, "NUMANodeLevel"},
};
constexpr Spelling<NodeCpuBindPolicy> kNodeBindPolicies[] = {
    {NodeCpuBindPolicy::kNone, "None"},
    {NodeCpuBindPolicy::kFullPCPUsOnly, "FullPCPUsOnly"},
    {NodeCpuBindPolicy::kSpreadByPCPUs, "SpreadByPCPUs"},
};
constexpr Spelling<NumaAllocateStrategy> kAllocateStrategies[] = {
    {NumaAllocateStrategy::kMostAllocated, "MostAllocated"},
    {NumaAllocateStrategy::kLeastAllocated, "LeastAllocated"},
    {NumaAllocateStrategy::kDistributeEvenly, "DistributeEvenly"},
};
constexpr Spelling<NumaTopologyPolicy> kTopologyPolicies[] = {
    {NumaTopologyPolicy::kNone, ""},
    {NumaTopologyPolicy::kBestEffort, "BestEffort"},
    {NumaTopologyPolicy::kRestricted, "Restricted"},
    {NumaTopologyPolicy::kSingleNUMANode, "SingleNUMANode"},
};
constexpr Spelling<NumaExclusive> kNumaExclusives[] = {
    {NumaExclusive::kNone, ""},
    {NumaExclusive::kPreferred, "Preferred"},
    {NumaExclusive::kRequired, "Required"},
};
constexpr Spelling<NumaNodeStatus> kNodeStatuses[] = {
    {NumaNodeStatus::kIdle, "idle"},
    {NumaNodeStatus::kSingle, "single"},
    {NumaNodeStatus::kShared, "shared"},
};

template <typename E, std::size_t N>
std::string_view nameOf(const Spelling<E> (&table)[N], E value) {
  for (const auto& s : table) {
    if (s.value == value)
      return s.name;
  }
  return "?";
}

template <typename E, std::size_t N>
std::optional<E> valueOf(const Spelling<E> (&table)[N], std::string_view name) {
  for (const auto& s : table) {
    if (s.name == name)
      return s.value;
  }
  return std::nullopt;
}

}  // namespace

std::string_view toString(CpuBindPolicy policy) {
  return nameOf(kBindPolicies, policy);
}
std::string_view toString(CpuExclusivePolicy policy) {
  return nameOf(kExclusivePolicies, policy);
}
std::string_view toString(NodeCpuBindPolicy policy) {
  return nameOf(kNodeBindPolicies, policy);
}
std::string_view toString(NumaAllocateStrategy strategy) {
  return nameOf(kAllocateStrategies, strategy);
}
std::string_view toString(NumaTopologyPolicy policy) {
  return nameOf(kTopologyPolicies, policy);
}
std::string_view toString(NumaExclusive exclusive) {
  return nameOf(kNumaExclusives, exclusive);
}
std::string_view toString(NumaNodeStatus status) {
  return nameOf(kNodeStatuses, status);
}

std::optional<CpuBindPolicy> parseCpuBindPolicy(std::string_view text) {
  return valueOf(kBindPolicies, text);
}
std::optional<CpuExclusivePolicy> parseCpuExclusivePolicy(std::string_view text) {
  return valueOf(kExclusivePolicies, text);
}
std::optional<NumaAllocateStrategy> parseNumaAllocateStrategy(std::string_view text) {
  return valueOf(kAllocateStrategies, text);
}
std::optional<NumaTopologyPolicy> parseNumaTopologyPolicy(std::string_view text) {
  return valueOf(kTopologyPolicies, text);
}
std::optional<NumaExclusive> parseNumaExclusive(std::string_view text) {
  return valueOf(kNumaExclusives, text);
}

}  // namespace koord::roles::scheduler::nodenumaresource
