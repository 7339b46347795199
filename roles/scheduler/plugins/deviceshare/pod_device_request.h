// What a pod asks of each device type, from its effective requests, validated and normalised as
// Koordinator's DeviceShare does before any node is looked at (whole cards become percentages).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "framework/resource.h"
#include "koord/kube/error.h"
#include "plugins/deviceshare/device_resources.h"

namespace koord::roles::scheduler::deviceshare {

struct PodDeviceRequests {
  /// Per type, the normalised request: for GPUs gpu-core and gpu-memory-ratio in percent of a
  /// card and/or gpu-memory in bytes; rdma and fpga in percent of a device. Over 100 (a multiple
  /// of 100) asks for that many whole devices.
  std::array<DeviceResources, kDeviceTypeCount> by_type{};
  std::uint8_t types = 0;  // bit (1 << DeviceType) per type asked for
  /// koordinator.sh/gpu.shared: the GPU request is split evenly over this many cards; 0: not
  /// asked.
  std::int64_t gpu_shared = 0;

  /// Whether the pod shares a GPU with others (Koordinator's isShared): gpu.shared, gpu-memory,
  /// or less than a whole card's gpu-memory-ratio per card.
  bool sharesGpu() const;
  /// What each GPU given must offer before the node's card memory is known (Koordinator's
  /// requestsPerGPU): the GPU request split over gpu.shared cards, or over ratio/100 cards for a
  /// gpu-memory-ratio over 100, with the names asked for.
  DeviceResources perGpu() const;

  bool empty() const { return types == 0; }
  bool has(DeviceType type) const { return (types & (1u << static_cast<unsigned>(type))) != 0; }
  const DeviceResources& of(DeviceType type) const {
    return by_type[static_cast<std::size_t>(type)];
  }
};

/// The device part of a pod's effective requests (PodInfo::requests: containers summed, init
/// containers as floors, overhead added), as Koordinator's GetPodDeviceRequests reads it:
/// - GPU names: nvidia.com/gpu and dcu.com/gpu (whole cards: n -> gpu-core and gpu-memory-ratio
///   n*100), koordinator.sh/gpu (-> gpu-core and gpu-memory-ratio of the same amount),
///   gpu-core, gpu-memory, gpu-memory-ratio, gpu.shared; rdma; fpga. The deprecated kubernetes.io/
///   names count where the koordinator.sh/ one is absent.
/// - Percentages (koordinator.sh/gpu, gpu-core, gpu-memory-ratio, rdma, fpga) over 100 must be
///   multiples of 100: "invalid resource unit koordinator.sh/gpu-core: 150".
/// - Allowed combinations per type: one of the card counts alone, gpu-memory or
///   gpu-memory-ratio alone, gpu-core with gpu-memory or with gpu-memory-ratio, rdma, fpga;
///   anything else is "invalid resource device requests: [<names, sorted>]".
/// Types are checked gpu, rdma, fpga, names in sorted order; the first fault is the error (a
/// negative amount is one too). koordinator.sh/gpu.shared (Koordinator v1.6) goes with
/// gpu-memory or gpu-memory-ratio, optionally gpu-core; gpu-core and gpu-memory-ratio must be
/// multiples of it and at most 100 times it. Huawei NPUs (Koordinator v1.8): huawei.com/npu-core
/// with gpu-memory-ratio (whole NPUs), or a vNPU slice: gpu.shared 1 with npu-core, npu-cpu,
/// gpu-memory and optionally npu-dvpp (at most 100).
kube::Expected<PodDeviceRequests> podDeviceRequests(const Resource& pod_requests);

}  // namespace koord::roles::scheduler::deviceshare
