// koord-device-daemon's --config-file: Koordinator's versioned file (version: v1, flags.kdd.*),
// whose settings apply where neither a flag nor a KDD_* variable gave one.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "device_daemon_options.h"

namespace koord {
class FlagSet;
}

namespace koord::roles::device_daemon {

/// What a config file sets; unset members leave the flag's value alone.
struct DeviceDaemonFileSettings {
  std::optional<bool> oneshot;
  std::optional<std::chrono::milliseconds> sleep_interval;
  std::optional<std::string> prints_output_file;
};

/// The settings in `text` (YAML or JSON), `where` naming the file in errors. Koordinator's rules:
/// a missing version is v1, any other version is refused; sleepInterval is a Go duration string
/// or a number of nanoseconds. Stricter than Koordinator: an unknown key, a value of the wrong
/// type or an empty printsOutputFile is an app::ConfigError naming the key, not ignored.
DeviceDaemonFileSettings parseDeviceDaemonConfig(std::string_view text, std::string_view where);

/// parseDeviceDaemonConfig on the file at `path`; a file that cannot be read is a ConfigError.
DeviceDaemonFileSettings loadDeviceDaemonConfig(const std::string& path);

/// Applies `settings` to `o` for each flag `flags` did not get from the command line or the
/// environment, which win as they do in Koordinator.
void applyFileSettings(const DeviceDaemonFileSettings& settings, const FlagSet& flags,
                       DeviceDaemonOptions& o);

/// The options in force: `from_flags` (what `flags` parsed) with --config-file's settings
/// applied when one is named, validated. At start-up and again on each SIGHUP; throws
/// app::ConfigError or FlagError for a file or a value that will not do.
DeviceDaemonOptions withConfigFile(const DeviceDaemonOptions& from_flags, const FlagSet& flags);

}  // namespace koord::roles::device_daemon
