// NVML (libnvidia-ml.so.1) opened at run time with dlopen, so the one koord binary starts on
// nodes without NVIDIA's driver; only the few calls device discovery needs.
#pragma once

#include <memory>
#include <string>

#include "gpu_info_source.h"

namespace koord::roles::device_daemon {

inline constexpr const char* kNvmlLibrary = "libnvidia-ml.so.1";

/// The library's GPUs, or nullptr when it cannot be loaded (the normal case on a node without
/// NVIDIA's driver: logged at info) or lacks a function koord calls (logged as a warning). The
/// library stays loaded for the life of the process; each listGpus() initializes and shuts
/// NVML down around its queries.
std::unique_ptr<GpuInfoSource> loadNvml(const std::string& library = kNvmlLibrary);

}  // namespace koord::roles::device_daemon
