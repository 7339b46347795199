// --config-file: Koordinator's versioned file read as Koordinator reads it, bad files refused with
// the key and line, and the command line and KDD_* variables winning over the file.
#include <catch2/catch.hpp>

#include <cstdlib>

#include "device_daemon_config_file.h"
#include "koord/app/role_app.h"
#include "koord/core/flags.h"

using namespace std::chrono_literals;
using koord::app::ConfigError;
using koord::roles::device_daemon::applyFileSettings;
using koord::roles::device_daemon::DeviceDaemonOptions;
using koord::roles::device_daemon::parseDeviceDaemonConfig;

namespace {

std::string errorOf(std::string_view text) {
  try {
    parseDeviceDaemonConfig(text, "kdd.yaml");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("device-daemon config file: Koordinator's v1 keys", "[devicedaemon][config]") {
  auto s = parseDeviceDaemonConfig(R"(version: v1
flags:
  kdd:
    oneshot: true
    sleepInterval: 90s
    printsOutputFile: /run/kdd/ic-device
)",
                                   "kdd.yaml");
  CHECK(s.oneshot == true);
  CHECK(s.sleep_interval == 90s);
  CHECK(s.prints_output_file == "/run/kdd/ic-device");

  // JSON is YAML; a number is nanoseconds as Koordinator's Duration reads it; no version is v1.
  auto json = parseDeviceDaemonConfig(
      R"({"flags":{"kdd":{"sleepInterval":5000000000,"oneshot":false}}})", "kdd.json");
  CHECK(json.sleep_interval == 5s);
  CHECK(json.oneshot == false);
  CHECK_FALSE(json.prints_output_file);

  // Empty files and sections set nothing.
  CHECK_FALSE(parseDeviceDaemonConfig("", "kdd.yaml").oneshot);
  CHECK_FALSE(parseDeviceDaemonConfig("version: v1\nflags:\n", "kdd.yaml").sleep_interval);
}

TEST_CASE("device-daemon config file: bad files are refused naming the key and line",
          "[devicedaemon][config]") {
  CHECK(errorOf("version: v2\n") ==
        "--config-file kdd.yaml:1: version: unknown version \"v2\" (want v1)");
  CHECK(errorOf("version: v1\nflags:\n  kdd:\n    sleepIntreval: 10s\n") ==
        "--config-file kdd.yaml:4: flags.kdd.sleepIntreval: unknown key");
  CHECK(errorOf("flags:\n  nfd: {}\n").find("flags.nfd: unknown key") != std::string::npos);
  CHECK(errorOf("flags:\n  kdd:\n    sleepInterval: ten\n")
            .find("flags.kdd.sleepInterval: \"ten\" is not a duration") != std::string::npos);
  CHECK(errorOf("flags:\n  kdd:\n    sleepInterval: 0s\n").find("must be positive") !=
        std::string::npos);
  CHECK(errorOf("flags:\n  kdd:\n    oneshot: \"true\"\n")
            .find("flags.kdd.oneshot: must be true or false") != std::string::npos);
  CHECK(errorOf("flags:\n  kdd:\n    printsOutputFile: \"\"\n").find("must not be empty") !=
        std::string::npos);
  CHECK(errorOf("flags:\n  kdd:\n    printsOutputFile: [a]\n").find("must be a string") !=
        std::string::npos);
  CHECK(errorOf("flags: [\n").find("--config-file kdd.yaml:") == 0);
  CHECK(errorOf("- a\n").find("must be a mapping") != std::string::npos);
  CHECK(errorOf("version: v1\nversion: v1\n").find("given twice") != std::string::npos);
  CHECK_THROWS_AS(koord::roles::device_daemon::loadDeviceDaemonConfig("/nonexistent/kdd.yaml"),
                  ConfigError);
}

TEST_CASE("device-daemon config file: a nanosecond count beyond int64 is refused",
          "[devicedaemon][config]") {
  // Go's Duration holds int64 nanoseconds. Accepted, this turned into milliseconds that overflow
  // when converted back to nanoseconds (found by tests/fuzz/device_daemon_config_fuzz), or, far
  // enough out, overflowed the conversion to milliseconds itself.
  for (const char* big : {"887777777777777888888", "9223372036854775808", "1e30", "-1e300"}) {
    INFO(big);
    CHECK(errorOf(std::string("flags:\n  kdd:\n    sleepInterval: ") + big + "\n")
              .find("flags.kdd.sleepInterval: " + std::string(big) +
                    " nanoseconds is beyond a duration's range") != std::string::npos);
  }
  // The largest count that fits is a valid, if long, interval.
  auto s = parseDeviceDaemonConfig("flags:\n  kdd:\n    sleepInterval: 9223372036854775000\n",
                                   "kdd.yaml");
  CHECK(s.sleep_interval == std::chrono::milliseconds(9223372036854));
}

TEST_CASE("device-daemon config file: flags and KDD_* variables win over the file",
          "[devicedaemon][config]") {
  auto file = parseDeviceDaemonConfig(
      "flags:\n  kdd:\n    oneshot: true\n    sleepInterval: 1m\n    printsOutputFile: /f\n",
      "kdd.yaml");
  {
    DeviceDaemonOptions o;
    koord::FlagSet flags("koord-device-daemon");
    registerFlags(flags, o);
    flags.parse(std::vector<std::string>{"--sleep-interval=5s"});
    applyFileSettings(file, flags, o);
    CHECK(o.sleep_interval == 5s);
    CHECK(o.oneshot);
    CHECK(o.prints_output_file == "/f");
  }
  {
    ::setenv("KDD_PRINTS_OUTPUT_FILE", "/env", 1);
    DeviceDaemonOptions o;
    koord::FlagSet flags("koord-device-daemon");
    registerFlags(flags, o);
    flags.parse(std::vector<std::string>{});
    ::unsetenv("KDD_PRINTS_OUTPUT_FILE");
    applyFileSettings(file, flags, o);
    CHECK(o.prints_output_file == "/env");
    CHECK(o.sleep_interval == 1min);
  }
}
