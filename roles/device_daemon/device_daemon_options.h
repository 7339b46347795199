// koord-device-daemon's command line: urfave/cli names and KDD_* environment variables, plus
// koord's --sysfs-root and --metrics-addr.
#pragma once

#include <chrono>
#include <string>

#include "koord/app/role_app.h"

namespace koord::roles::device_daemon {

struct DeviceDaemonOptions {
  app::CommonOptions common;
  bool oneshot = false;
  bool no_timestamp = false;
  std::chrono::milliseconds sleep_interval{900000};
  std::string prints_output_file = "/var/run/koordlet/xpu-device-infos/ic-device";
  std::string config_file;
  std::string metrics_addr;  // koord addition, off by default: init scripts must not bind ports
  std::string sysfs_root = "/sys";  // koord addition: tests and containers point it elsewhere
};

void registerFlags(FlagSet& flags, DeviceDaemonOptions& o);
void validate(const DeviceDaemonOptions& o);

}  // namespace koord::roles::device_daemon
