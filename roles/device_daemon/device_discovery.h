// One discovery: the PCI devices found in sysfs turned into the report's device infos, NVIDIA
// GPUs completed from NVML where it answers.
#pragma once

#include <filesystem>
#include <span>
#include <vector>

#include "gpu_info_source.h"
#include "koord/apis/xpu_device_info.h"
#include "koord/kube/error.h"
#include "sysfs_pci_scanner.h"

namespace koord::roles::device_daemon {

/// The report for `devices`, in their order. Minors are numbered per vendor in bus order (RDMA
/// NICs apart), except NVIDIA GPUs that NVML describes: they take NVML's minor, UUID, name (its
/// spaces as '-', as Koordinator writes the model) and memory. With `gpus` null (no NVML), or
/// when NVML as a whole fails, NVIDIA GPUs are described from sysfs alone: model is the PCI
/// device id, uuid the bus ID. When NVML answers but not for one GPU, that GPU is unhealthy with
/// NVML's error. GPUs NVML lists that are not among `devices` follow, described by NVML alone
/// (their NUMA node and socket unknown). `gpus` is an error or the GPUs NVML listed.
std::vector<apis::XpuDeviceInfo> describeDevices(
    std::span<const PciDevice> devices, const kube::Expected<std::vector<GpuDetails>>* gpus);

/// scanPciDevices + describeDevices, asking `gpus` (may be null: no NVML library) each round.
/// An error only when sysfs cannot be listed.
kube::Expected<std::vector<apis::XpuDeviceInfo>> discoverDevices(
    const std::filesystem::path& sysfs_root, GpuInfoSource* gpus);

}  // namespace koord::roles::device_daemon
