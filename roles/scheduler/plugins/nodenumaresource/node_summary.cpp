// NodeSummary's word: flags and policies in the low 16 bits, the three counts above them.
#include "plugins/nodenumaresource/node_summary.h"

namespace koord::roles::scheduler::nodenumaresource {

namespace {

constexpr unsigned kUsableBit = 0;
constexpr unsigned kBindShift = 1;    // 2 bits
constexpr unsigned kPolicyShift = 3;  // 2 bits
constexpr unsigned kValidBit = 5;
constexpr unsigned kPerCoreShift = 6;  // 4 bits
constexpr unsigned kFreeShift = 16;
constexpr unsigned kFullShift = 32;
constexpr unsigned kSpreadShift = 48;

bool fitsCount(int v) {
  return v >= 0 && v <= NodeSummary::kMaxCount;
}

}  // namespace

std::uint64_t NodeSummary::pack() const {
  if (!usable || !fitsCount(free_cpus) || !fitsCount(free_full_pcpus) ||
      !fitsCount(free_spread_pcpus) || cpus_per_core < 0 || cpus_per_core > kMaxCpusPerCore)
    return 0;
  std::uint64_t w = std::uint64_t{1} << kUsableBit;
  w |= std::uint64_t{static_cast<std::uint8_t>(node_bind) & 3u} << kBindShift;
  w |= std::uint64_t{static_cast<std::uint8_t>(numa_policy) & 3u} << kPolicyShift;
  w |= std::uint64_t{topology_valid ? 1u : 0u} << kValidBit;
  w |= static_cast<std::uint64_t>(cpus_per_core) << kPerCoreShift;
  w |= static_cast<std::uint64_t>(free_cpus) << kFreeShift;
  w |= static_cast<std::uint64_t>(free_full_pcpus) << kFullShift;
  w |= static_cast<std::uint64_t>(free_spread_pcpus) << kSpreadShift;
  return w;
}

NodeSummary NodeSummary::unpack(std::uint64_t w) {
  NodeSummary s;
  s.usable = ((w >> kUsableBit) & 1u) != 0;
  if (!s.usable)
    return s;
  s.node_bind = static_cast<NodeCpuBindPolicy>((w >> kBindShift) & 3u);
  s.numa_policy = static_cast<NumaTopologyPolicy>((w >> kPolicyShift) & 3u);
  s.topology_valid = ((w >> kValidBit) & 1u) != 0;
  s.cpus_per_core = static_cast<int>((w >> kPerCoreShift) & 0xfu);
  s.free_cpus = static_cast<int>((w >> kFreeShift) & 0xffffu);
  s.free_full_pcpus = static_cast<int>((w >> kFullShift) & 0xffffu);
  s.free_spread_pcpus = static_cast<int>((w >> kSpreadShift) & 0xffffu);
  return s;
}

}  // namespace koord::roles::scheduler::nodenumaresource
