// The resources a NUMA zone reports (cpu, memory, hugepages) as plain integers, for the hint and
// distribution arithmetic that runs per NUMA node of every candidate node.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "koord/kube/quantity.h"

namespace koord::roles::scheduler::nodenumaresource {

/// The zone resources koordlet reports and the kubelet aligns; other names in a zone or a
/// request play no part in NUMA placement (devices are aligned by their own hint providers).
enum class NumaResource : std::uint8_t { kCpu, kMemory, kHugepages1Gi, kHugepages2Mi };
inline constexpr std::size_t kNumaResourceCount = 4;
inline constexpr NumaResource kAllNumaResources[kNumaResourceCount] = {
    NumaResource::kCpu, NumaResource::kMemory, NumaResource::kHugepages1Gi,
    NumaResource::kHugepages2Mi};

/// "cpu", "memory", "hugepages-1Gi", "hugepages-2Mi".
std::string_view toString(NumaResource r);
std::optional<NumaResource> numaResourceByName(std::string_view name);
/// memory and hugepages: the kubelet aligns them together.
inline bool isMemoryLike(NumaResource r) {
  return r != NumaResource::kCpu;
}

/// Amounts by resource, cpu in millicores and the rest in bytes, with which resources the list
/// names: a zone that names a resource at 0 and one that does not name it both lack it, but
/// only a named resource gets an (empty) hint list when nothing fits.
struct NumaResources {
  std::array<std::int64_t, kNumaResourceCount> amount{};
  std::uint8_t present = 0;

  bool has(NumaResource r) const { return (present & bit(r)) != 0; }
  std::int64_t get(NumaResource r) const { return amount[static_cast<std::size_t>(r)]; }
  void set(NumaResource r, std::int64_t v) {
    amount[static_cast<std::size_t>(r)] = v;
    present |= bit(r);
  }
  bool empty() const { return present == 0; }

  /// Adds every named amount (names become named here).
  void add(const NumaResources& other);
  /// quotav1.SubtractWithNonNegativeResult: this's names, each minus other's, floored at 0.
  void subtractFloorZero(const NumaResources& other);

  /// The list's cpu (millicores), memory and hugepages; other names are left out. Quantities
  /// are read with Quantity's rounding (milliValue for cpu, value for the rest).
  static NumaResources fromList(const kube::ResourceList& list);
  /// The named resources as a ResourceList (cpu as millicores, the rest as integers).
  kube::ResourceList toList() const;

  friend bool operator==(const NumaResources&, const NumaResources&) = default;

 private:
  static std::uint8_t bit(NumaResource r) {
    return static_cast<std::uint8_t>(1U << static_cast<unsigned>(r));
  }
};

/// One NUMA node's resources.
struct NumaNodeResources {
  int node = 0;
  NumaResources resources;

  friend bool operator==(const NumaNodeResources&, const NumaNodeResources&) = default;
};

/// Koordinator's Amplify: ceil(origin * ratio) for ratios above 1, origin otherwise.
std::int64_t amplify(std::int64_t origin, double ratio);

}  // namespace koord::roles::scheduler::nodenumaresource
