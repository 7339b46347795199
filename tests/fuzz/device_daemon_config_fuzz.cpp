// koord-device-daemon's --config-file (YAML or JSON, re-read on every SIGHUP): whoever deploys the
// daemon writes it, and a bad file must be refused with a ConfigError, never crash the daemon or
// hang it. Accepted settings must respect their bounds and read back the same once written out.
#include <yaml-cpp/yaml.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "device_daemon_config_file.h"
#include "koord/app/role_app.h"
#include "koord/core/duration.h"

namespace {

using koord::roles::device_daemon::DeviceDaemonFileSettings;
using koord::roles::device_daemon::parseDeviceDaemonConfig;

void check(bool ok) {
  if (!ok)
    std::abort();
}

// The settings as a file of their own; empty for a path that is not ASCII, which yaml-cpp's
// emitter does not write back byte for byte (it is a valid file name all the same).
std::string write(const DeviceDaemonFileSettings& s) {
  if (s.prints_output_file) {
    for (unsigned char c : *s.prints_output_file) {
      if (c >= 0x80)
        return {};
    }
  }
  YAML::Emitter out;
  out << YAML::BeginMap << YAML::Key << "version" << YAML::Value << "v1";
  out << YAML::Key << "flags" << YAML::Value << YAML::BeginMap << YAML::Key << "kdd" << YAML::Value
      << YAML::BeginMap;
  if (s.oneshot)
    out << YAML::Key << "oneshot" << YAML::Value << *s.oneshot;
  if (s.sleep_interval)
    out << YAML::Key << "sleepInterval" << YAML::Value << YAML::DoubleQuoted
        << koord::formatGoDuration(*s.sleep_interval);
  if (s.prints_output_file)
    out << YAML::Key << "printsOutputFile" << YAML::Value << YAML::DoubleQuoted
        << *s.prints_output_file;
  out << YAML::EndMap << YAML::EndMap << YAML::EndMap;
  return out.good() ? std::string(out.c_str()) : std::string();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  DeviceDaemonFileSettings s;
  try {
    s = parseDeviceDaemonConfig(text, "kdd.yaml");
  } catch (const koord::app::ConfigError&) {
    return 0;  // any other exception escapes and is a finding
  }
  check(!s.sleep_interval || s.sleep_interval->count() > 0);
  check(!s.prints_output_file || !s.prints_output_file->empty());
  const std::string written = write(s);
  if (written.empty())
    return 0;
  const DeviceDaemonFileSettings again = parseDeviceDaemonConfig(written, "written.yaml");
  check(again.oneshot == s.oneshot && again.sleep_interval == s.sleep_interval &&
        again.prints_output_file == s.prints_output_file);
  return 0;
}
