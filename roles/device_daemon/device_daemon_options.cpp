#include "device_daemon_options.h"

#include <fmt/format.h>

namespace koord::roles::device_daemon {

void registerFlags(FlagSet& f, DeviceDaemonOptions& o) {
  app::addLoggingFlags(f, o.common, 1);
  f.addBool("oneshot", &o.oneshot, false, "Label once and exit");
  f.bindEnv("oneshot", {"KDD_ONESHOT"});
  f.addBool("no-timestamp", &o.no_timestamp, false,
            "Log lines without their date and time (the report has no timestamp to leave out)");
  f.bindEnv("no-timestamp", {"KDD_NO_TIMESTAMP"});
  f.addDuration("sleep-interval", &o.sleep_interval, std::chrono::seconds(900),
                "Time to sleep between labeling");
  f.bindEnv("sleep-interval", {"KDD_SLEEP_INTERVAL"});
  f.addString("prints-output-file", &o.prints_output_file,
              "/var/run/koordlet/xpu-device-infos/ic-device",
              "Path to output file of the device infos");
  f.bindEnv("prints-output-file", {"KDD_PRINTS_OUTPUT_FILE", "PRINTS_OUTPUT_FILE"});
  f.addString("config-file", &o.config_file, "",
              "the path to a config file as an alternative to command line options or "
              "environment variables (version: v1, flags.kdd.*); SIGHUP reads it again");
  f.bindEnv("config-file", {"KDD_CONFIG_FILE", "CONFIG_FILE"});
  f.addString("metrics-addr", &o.metrics_addr, "",
              "koord addition: serve /healthz, /readyz and /metrics here (empty: off)");
  f.addString(
      "sysfs-root", &o.sysfs_root, "/sys",
      "koord addition: the sysfs tree PCI devices are discovered in (a fake tree in tests)");
  f.bindEnv("sysfs-root", {"KDD_SYSFS_ROOT"});
}

void validate(const DeviceDaemonOptions& o) {
  if (o.sleep_interval.count() <= 0)
    throw FlagError("--sleep-interval must be positive");
  if (o.prints_output_file.empty())
    throw FlagError("--prints-output-file must not be empty");
  if (o.sysfs_root.empty())
    throw FlagError("--sysfs-root must not be empty");
}

}  // namespace koord::roles::device_daemon
