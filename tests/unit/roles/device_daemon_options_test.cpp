#include "device_daemon_options.h"

#include <catch2/catch.hpp>

#include <cstdlib>

using namespace koord;
using namespace koord::roles::device_daemon;
using namespace std::chrono_literals;

TEST_CASE("device-daemon flags, defaults and KDD_ environment", "[roles][devicedaemon]") {
  DeviceDaemonOptions o;
  FlagSet flags("koord-device-daemon");
  registerFlags(flags, o);
  CHECK(o.sleep_interval == 900s);
  CHECK(o.prints_output_file == "/var/run/koordlet/xpu-device-infos/ic-device");
  CHECK(o.common.verbosity == 1);

  ::setenv("KDD_SLEEP_INTERVAL", "30s", 1);
  ::setenv("PRINTS_OUTPUT_FILE", "/tmp/devs", 1);
  ::setenv("KDD_ONESHOT", "true", 1);
  REQUIRE(flags.parse(std::vector<std::string>{}) == FlagSet::Outcome::kRun);
  CHECK(o.sleep_interval == 30s);
  CHECK(o.prints_output_file == "/tmp/devs");
  CHECK(o.oneshot);
  // The command line wins over the environment.
  REQUIRE(flags.parse({"--sleep-interval=1m", "--oneshot=false"}) == FlagSet::Outcome::kRun);
  CHECK(o.sleep_interval == 60s);
  CHECK_FALSE(o.oneshot);
  ::setenv("KDD_SLEEP_INTERVAL", "often", 1);
  CHECK_THROWS_WITH(flags.parse(std::vector<std::string>{}),
                    Catch::Contains("$KDD_SLEEP_INTERVAL"));
  ::unsetenv("KDD_SLEEP_INTERVAL");
  ::unsetenv("PRINTS_OUTPUT_FILE");
  ::unsetenv("KDD_ONESHOT");
  CHECK(flags.usage().find("$KDD_ONESHOT") != std::string::npos);
}

TEST_CASE("device-daemon --sysfs-root: /sys by default, KDD_SYSFS_ROOT, the flag wins",
          "[roles][devicedaemon]") {
  DeviceDaemonOptions o;
  FlagSet flags("koord-device-daemon");
  registerFlags(flags, o);
  CHECK(o.sysfs_root == "/sys");
  REQUIRE(flags.parse(std::vector<std::string>{}) == FlagSet::Outcome::kRun);
  CHECK(o.sysfs_root == "/sys");

  ::setenv("KDD_SYSFS_ROOT", "/host/sys", 1);
  REQUIRE(flags.parse(std::vector<std::string>{}) == FlagSet::Outcome::kRun);
  CHECK(o.sysfs_root == "/host/sys");
  REQUIRE(flags.parse({"--sysfs-root=/tmp/fake-sys"}) == FlagSet::Outcome::kRun);
  CHECK(o.sysfs_root == "/tmp/fake-sys");
  ::unsetenv("KDD_SYSFS_ROOT");
  CHECK(flags.usage().find("$KDD_SYSFS_ROOT") != std::string::npos);

  CHECK_NOTHROW(validate(o));
  o.sysfs_root.clear();  // as an empty KDD_SYSFS_ROOT would leave it
  CHECK_THROWS_WITH(validate(o), Catch::Contains("--sysfs-root"));
}
