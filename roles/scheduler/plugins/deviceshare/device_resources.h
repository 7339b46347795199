// The device types and device resources DeviceShare schedules, as fixed-size integer vectors: the
// per-node feasibility check compares these for every node of every cycle without allocating.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "koord/kube/quantity.h"

namespace koord::roles::scheduler::deviceshare {

/// Products of amounts (bytes times percent, amount times count) are taken in 128 bits.
__extension__ typedef __int128 WideInt;

enum class DeviceType : std::uint8_t { kGPU, kRDMA, kFPGA };
inline constexpr std::size_t kDeviceTypeCount = 3;
inline constexpr std::array<DeviceType, kDeviceTypeCount> kDeviceTypes{
    DeviceType::kGPU, DeviceType::kRDMA, DeviceType::kFPGA};

/// "gpu", "rdma", "fpga": the Device object's and the device-allocated annotation's spelling.
std::string_view deviceTypeName(DeviceType type);
/// nullopt for a type DeviceShare has no handler for (Koordinator leaves those alone).
std::optional<DeviceType> parseDeviceType(std::string_view name);

/// The resources a device offers and an allocation takes: percentages of a device (gpu-core,
/// gpu-memory-ratio, rdma, fpga; 100 is a whole device), gpu-memory in bytes, and a Huawei NPU's
/// AI cores, AI CPUs and DVPP percentage (counted as the device reports them). The NPU ones come
/// last: the GPU fast view keeps the sums of the others only (kViewedResourceCount).
enum class DeviceResource : std::uint8_t {
  kGPUCore,
  kGPUMemory,
  kGPUMemoryRatio,
  kRDMA,
  kFPGA,
  kNPUCore,
  kNPUCPU,
  kNPUDVPP,
};
inline constexpr std::size_t kDeviceResourceCount = 8;
/// The resources before the NPU ones.
inline constexpr std::size_t kViewedResourceCount = 5;

/// koordinator.sh/gpu-core, ...
std::string_view deviceResourceName(DeviceResource resource);
/// nullopt for a name that is none of the eight.
std::optional<DeviceResource> parseDeviceResource(std::string_view name);

/// Amounts of the resources and which of them are named. The names matter only for what an
/// allocation writes into the device-allocated annotation (a pod asking gpu-memory-ratio alone
/// takes no gpu-core); comparisons and sums read the amounts, an unnamed one being zero.
struct DeviceResources {
  std::array<std::int64_t, kDeviceResourceCount> amount{};
  std::uint8_t names = 0;  // bit (1 << DeviceResource)

  static constexpr std::uint8_t bit(DeviceResource r) {
    return static_cast<std::uint8_t>(1u << static_cast<unsigned>(r));
  }
  std::int64_t get(DeviceResource r) const { return amount[static_cast<std::size_t>(r)]; }
  bool has(DeviceResource r) const { return (names & bit(r)) != 0; }
  void set(DeviceResource r, std::int64_t value) {
    amount[static_cast<std::size_t>(r)] = value;
    names |= bit(r);
  }

  /// Whether any NPU resource is named.
  bool namesNpu() const {
    return (names & (bit(DeviceResource::kNPUCore) | bit(DeviceResource::kNPUCPU) |
                     bit(DeviceResource::kNPUDVPP))) != 0;
  }
  /// Every amount zero (quotav1.IsZero).
  bool isZero() const;
  /// Each amount at most `available`'s (quotav1.LessThanOrEqual of a request against what is
  /// free: amounts here are never negative, so unnamed ones always fit).
  bool fitsIn(const DeviceResources& available) const;
  /// Sums per resource, saturating at the int64 range; the names are the union.
  void add(const DeviceResources& other);
  /// max(this - other, 0) per resource (quotav1.SubtractWithNonNegativeResult).
  void subtractNonNegative(const DeviceResources& other);
  /// max(this, other) per resource.
  void setMax(const DeviceResources& other);

  /// The named resources; gpu-memory in BinarySI (as Koordinator builds it), the rest DecimalSI.
  kube::ResourceList toList() const;
  /// The resources of `list` by Quantity::value(), negative amounts read as zero; other
  /// names are ignored.
  static DeviceResources fromList(const kube::ResourceList& list);

  friend bool operator==(const DeviceResources&, const DeviceResources&) = default;
};

}  // namespace koord::roles::scheduler::deviceshare
