// GPUEnvInject's policy: the environment (and, for HAMi-core, the host paths) a container gets
// from the GPUs the scheduler gave its pod in the device-allocated annotation.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "koord/kube/error.h"
#include "koord/kube/labels.h"

namespace koord::roles::koordlet {

inline constexpr std::string_view kEnvNvidiaVisibleDevices = "NVIDIA_VISIBLE_DEVICES";
/// HAMi-core's limits, read by its libvgpu.so inside the container.
inline constexpr std::string_view kEnvCudaDeviceMemoryLimit = "CUDA_DEVICE_MEMORY_LIMIT";
inline constexpr std::string_view kEnvCudaDeviceSMLimit = "CUDA_DEVICE_SM_LIMIT";
inline constexpr std::string_view kEnvLDPreload = "LD_PRELOAD";
/// The pod label that picks the GPU isolation provider, and the value for HAMi-core.
inline constexpr std::string_view kLabelGPUIsolationProvider =
    "koordinator.sh/gpu-isolation-provider";
inline constexpr std::string_view kGPUIsolationProviderHAMiCore = "HAMi-core";
/// Koordinator's default for -hami-core-library-directory-path (a file, despite the name).
inline constexpr std::string_view kDefaultHAMiCoreLibraryPath = "/usr/local/vgpu/libvgpu.so";
/// HAMi-core's lock directory, shared with the host (HAMi issue 696).
inline constexpr std::string_view kHAMiCoreLockDir = "/tmp/vgpulock";

/// A host path bound at the same path in the container.
struct HostBindMount {
  std::string path;
  friend bool operator==(const HostBindMount&, const HostBindMount&) = default;
};

struct GpuContainerEnv {
  /// In the order set; empty when the pod was given no GPU.
  std::vector<std::pair<std::string, std::string>> envs;
  std::vector<HostBindMount> mounts;
};

/// From the pod's annotations and labels:
/// - no device-allocated annotation, or no "gpu" entry in it: nothing;
/// - NVIDIA_VISIBLE_DEVICES: the GPUs' minors, comma-separated, in the annotation's order;
/// - with the label koordinator.sh/gpu-isolation-provider=HAMi-core and the first GPU's
///   gpu-memory-ratio under 100 (a shared GPU): CUDA_DEVICE_MEMORY_LIMIT (its gpu-memory in
///   bytes), CUDA_DEVICE_SM_LIMIT (its gpu-core, when given), LD_PRELOAD=`hami_core_library`,
///   and bind mounts of that library and of /tmp/vgpulock.
/// A malformed annotation, or a HAMi-core pod whose first GPU lacks gpu-memory-ratio (or, when
/// shared, gpu-memory), is an error and sets nothing.
kube::Expected<GpuContainerEnv> gpuContainerEnv(
    const kube::Annotations& pod_annotations, const kube::Labels& pod_labels,
    std::string_view hami_core_library = kDefaultHAMiCoreLibraryPath);

}  // namespace koord::roles::koordlet
