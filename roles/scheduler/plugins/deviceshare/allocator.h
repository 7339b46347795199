// Placing a pod's device requests on one node as Koordinator's DeviceShare does: the Filter check,
// the choice of devices at Reserve, the node's score and the NUMA node sets the request fits in.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "framework/status.h"
#include "koord/apis/device_allocation.h"
#include "plugins/deviceshare/device_resources.h"
#include "plugins/deviceshare/node_device_state.h"
#include "plugins/deviceshare/pod_device_hints.h"
#include "plugins/deviceshare/pod_device_request.h"
#include "plugins/deviceshare/scoring.h"

namespace koord::roles::scheduler::deviceshare {

/// What a pod being preempted holds on one device: counted as free (Koordinator's preemptible
/// devices).
struct ReleasedDevice {
  DeviceType type = DeviceType::kGPU;
  std::int32_t minor = 0;
  DeviceResources resources = {};
};

struct AllocateOptions {
  /// How devices are ranked when several fit (allocateDevices); nullptr: by minor, as
  /// Koordinator's Filter ranks them.
  const DeviceScorer* scorer = nullptr;
  /// Set: only devices on these NUMA nodes (bit per topology.nodeID) count, and a device without
  /// a topology does not (the NUMA affinity NodeNUMAResource settled on).
  std::optional<std::uint64_t> numa_nodes = std::nullopt;
  /// Devices on these NUMA nodes are taken before the others (then by score, then by minor).
  std::uint64_t preferred_numa_nodes = 0;
  /// The pod's device-allocate-hint and device-joint-allocate: which devices qualify (selector,
  /// PCIe-level exclusivity), how many are wanted (allocateStrategy), whether each comes with a
  /// virtual function (vfSelector: the free VF of a matching group lowest by bus id), and which
  /// types are placed together. nullptr: none.
  const PodDeviceHints* hints = nullptr;
  /// Held by pods being preempted, or kept for the pod by its reservation: free for this
  /// request.
  std::span<const ReleasedDevice> released = {};
  /// Device types (bit per DeviceType) of which only `released` amounts count as free (a
  /// Restricted reservation's).
  std::uint8_t only_released_types = 0;
  /// Devices taken before any other (a reservation's, for its owner pods).
  std::span<const ReleasedDevice> preferred_devices = {};
};

/// What each device given must offer and how many devices of each type are wanted
/// (Koordinator's CalcDesiredRequestsAndCount).
struct DeviceDemand {
  /// The request per device: the names present are what the device-allocated annotation lists.
  std::array<DeviceResources, kDeviceTypeCount> per_device{};
  std::array<std::int64_t, kDeviceTypeCount> count{};
  std::uint8_t types = 0;

  bool has(DeviceType type) const { return (types & (1u << static_cast<unsigned>(type))) != 0; }
  const DeviceResources& of(DeviceType type) const {
    return per_device[static_cast<std::size_t>(type)];
  }
  std::int64_t countOf(DeviceType type) const { return count[static_cast<std::size_t>(type)]; }
};

/// The demand on this node. GPUs: gpu-memory is derived from gpu-memory-ratio by the node's card
/// memory, or the ratio from gpu-memory (truncated to a whole percent); a ratio over 100 and a
/// multiple of 100 asks for ratio/100 cards, each request divided among them. rdma and fpga
/// likewise by their own amount; otherwise, by the type's hint, ApplyForAll wants every device
/// of the type its selector matches, and RequestsAsCount reads the amount as a count of devices
/// of 1 each (100 under exclusivePolicy DeviceLevel). Unresolvable (Koordinator's words):
/// "Insufficient <type> devices" when the node lists no device of the type (or none an
/// ApplyForAll selector matches), "no healthy GPU Devices" when no GPU offers anything,
/// "Insufficient <type> VirtualFunctions" when a vfSelector wants VFs and no device of the type
/// has one; and, where Koordinator would divide by zero, "gpu devices report no
/// koordinator.sh/gpu-memory" for a gpu-memory request. Allocates nothing on success.
Status deviceDemand(const NodeDeviceState& node, const PodDeviceRequests& requests,
                    const AllocateOptions& options, DeviceDemand& out);

/// The GPU part of deviceDemand for a node whose cards have `card_memory` (nullopt: none offers
/// anything): the request per card and how many cards. With gpu.shared (`shared` > 0) the
/// request is split over that many cards first (Koordinator v1.6's GPU handler).
Status gpuDemand(std::optional<std::int64_t> card_memory, const DeviceResources& asked,
                 DeviceResources& per_device, std::int64_t& count, std::int64_t shared = 0);

/// Whether the request fits the node (Filter): the demand, then per type a look at the node's
/// summary (free sums, largest free amounts) and a count of the devices that fit. Unschedulable
/// "Insufficient <type> devices" for the first type (gpu, rdma, fpga) that does not fit. A pod
/// with joint types is placed in full (allocateDevices), its refusals being that function's.
/// Allocates nothing.
Status checkDevices(const NodeDeviceState& node, const PodDeviceRequests& requests,
                    const AllocateOptions& options);

/// Chooses the devices (Reserve) into `out` (cleared first): per type the devices that fit,
/// options.preferred_devices first, then those on preferred NUMA nodes, then by the scorer's device
/// score (highest first: the fullest device under MostAllocated, the emptiest under
/// LeastAllocated), then by minor. Refusals as checkDevices's; `out` is empty after one.
/// Joint types (options.hints) go first, as Koordinator's v1.5 allocator places them: the
/// primary's devices and the others' within one PCIe switch if any holds them, else within one
/// NUMA node, else anywhere, the others on the primary's switches first (at least one device
/// per switch under SamePCIe, and no other switch: "node(s) Device Joint-Allocate rules
/// violation"; "node(s) Joint-Allocate rules not met" when nothing fits). Without SamePCIe a
/// joint placement that fails falls back to placing each type alone.
Status allocateDevices(const NodeDeviceState& node, const PodDeviceRequests& requests,
                       const AllocateOptions& options, apis::DeviceAllocations& out);

/// The node's score for the request (Score): per type, the scorer over the sums of the devices'
/// totals and free amounts (within options.numa_nodes), summed over the types asked for, so
/// 0..100 for one type; the plugin normalises across nodes. A type with nothing free scores 0.
/// The demand's refusals as deviceDemand's.
Status scoreNode(const NodeDeviceState& node, const PodDeviceRequests& requests,
                 const DeviceScorer& scorer, const AllocateOptions& options, std::int64_t& score);

/// A NUMA node set the request fits within.
struct NumaHint {
  std::uint64_t numa_nodes = 0;
  /// As few NUMA nodes as any set that fits.
  bool preferred = false;

  friend bool operator==(const NumaHint&, const NumaHint&) = default;
};

struct NumaHints {
  /// The resource names the hints are for (those of the per-device requests).
  std::vector<std::string_view> resources;
  /// Smallest sets first, then in ascending order of their NUMA node ids; empty: no set fits.
  std::vector<NumaHint> hints;
};

/// Beyond this many NUMA nodes holding devices, numaHints gives no hints (2^n sets to try).
inline constexpr int kMaxHintNumaNodes = 8;

/// The NUMA node sets of the node's devices the request could be placed within (Koordinator's
/// GetPodTopologyHints): each set holding enough devices of every type asked for and where
/// checkDevices passes restricted to it. nullopt (no preference) when the demand is refused,
/// when no set holds enough devices, or over kMaxHintNumaNodes NUMA nodes. options.numa_nodes
/// is replaced by each set tried.
std::optional<NumaHints> numaHints(const NodeDeviceState& node, const PodDeviceRequests& requests,
                                   const AllocateOptions& options);

}  // namespace koord::roles::scheduler::deviceshare
