// What koord-device-daemon learns about NVIDIA GPUs beyond sysfs (model, UUID, memory, minor),
// behind an interface so that discovery runs, and is tested, without NVML.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "koord/kube/error.h"

namespace koord::roles::device_daemon {

struct GpuDetails {
  std::string bus_id;  // normalized ("0000:3b:00.0"); empty when the driver would not say
  std::string name;    // "NVIDIA H100 80GB HBM3"
  std::string uuid;    // "GPU-..."
  uint64_t memory_total_bytes = 0;
  int minor = -1;  // /dev/nvidia<minor>; -1 when unknown
  /// Minors of the GPUs this one reaches over NVLink, ascending; empty without NVLink or when
  /// the driver cannot say.
  std::vector<int> nvlink_peers;
  /// Why the driver could not answer for this GPU (fields above may then be missing); empty
  /// when it answered every query.
  std::string error;
};

class GpuInfoSource {
 public:
  virtual ~GpuInfoSource() = default;
  /// Every GPU the driver sees, asked afresh (a GPU can fall off the bus between rounds). An
  /// error when the driver as a whole cannot be asked (not loaded, no permission).
  virtual kube::Expected<std::vector<GpuDetails>> listGpus() = 0;
};

}  // namespace koord::roles::device_daemon
