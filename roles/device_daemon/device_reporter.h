// One round of koord-device-daemon (discover, write the report) and what the role shows of it:
// readiness and metrics. The loop and --oneshot both run rounds through it.
#pragma once

#include <filesystem>
#include <string>

#include "gpu_info_source.h"

namespace koord {
class Health;
}

namespace koord::roles::device_daemon {

class DeviceReporter {
 public:
  struct Config {
    std::filesystem::path sysfs_root;
    std::string output_file;
  };

  /// `gpus` may be null (no NVML); `health` may be null (--oneshot serves nothing). Both must
  /// outlive the reporter.
  DeviceReporter(Config config, GpuInfoSource* gpus, Health* health);

  /// Discovers and writes. False when nothing was written (logged once, with the file): the
  /// last good report stays and the next round tries again.
  bool runRound();

 private:
  bool fail(const std::string& reason);

  Config config_;
  GpuInfoSource* gpus_;
  Health* health_;
};

}  // namespace koord::roles::device_daemon
