#include "runtimehooks/gpu/gpu_env.h"

#include <fmt/format.h>

#include "koord/apis/device_allocation.h"
#include "koord/apis/xpu_device_info.h"

namespace koord::roles::koordlet {

kube::Expected<GpuContainerEnv> gpuContainerEnv(const kube::Annotations& pod_annotations,
                                                const kube::Labels& pod_labels,
                                                std::string_view hami_core_library) {
  GpuContainerEnv out;
  auto annotation = pod_annotations.find(apis::kAnnotationDeviceAllocated);
  if (annotation == pod_annotations.end())
    return out;
  auto allocations = apis::parseDeviceAllocations(annotation->second);
  if (!allocations) {
    // The parser names the annotation in some messages and only the member in others.
    const std::string& message = allocations.error().message;
    if (message.starts_with(apis::kAnnotationDeviceAllocated))
      return allocations.error();
    return kube::makeKubeError(
        fmt::format("annotation {}: {}", apis::kAnnotationDeviceAllocated, message));
  }
  auto gpus = allocations->find(apis::kDeviceTypeGPU);
  if (gpus == allocations->end() || gpus->second.empty())
    return out;

  std::string minors;
  for (const auto& gpu : gpus->second)
    minors += fmt::format("{}{}", minors.empty() ? "" : ",", gpu.minor);
  out.envs.emplace_back(kEnvNvidiaVisibleDevices, std::move(minors));

  auto provider = pod_labels.find(kLabelGPUIsolationProvider);
  if (provider == pod_labels.end() || provider->second != kGPUIsolationProviderHAMiCore)
    return out;
  const kube::ResourceList& first = gpus->second.front().resources;
  auto ratio = first.find(apis::kResourceGPUMemoryRatio);
  if (ratio == first.end())
    return kube::makeKubeError(fmt::format("{}={}: gpu[0] has no {}", kLabelGPUIsolationProvider,
                                           kGPUIsolationProviderHAMiCore,
                                           apis::kResourceGPUMemoryRatio));
  if (ratio->second.value() >= 100)
    return out;  // a whole GPU: nothing to limit
  auto memory = first.find(apis::kResourceGPUMemory);
  if (memory == first.end())
    return kube::makeKubeError(
        fmt::format("{}={}: shared gpu[0] has no {}", kLabelGPUIsolationProvider,
                    kGPUIsolationProviderHAMiCore, apis::kResourceGPUMemory));
  out.envs.emplace_back(kEnvCudaDeviceMemoryLimit, std::to_string(memory->second.value()));
  if (auto core = first.find(apis::kResourceGPUCore); core != first.end())
    out.envs.emplace_back(kEnvCudaDeviceSMLimit, std::to_string(core->second.value()));
  out.envs.emplace_back(kEnvLDPreload, std::string(hami_core_library));
  out.mounts.push_back({std::string(hami_core_library)});
  out.mounts.push_back({std::string(kHAMiCoreLockDir)});
  return out;
}

}  // namespace koord::roles::koordlet
