#include "device_reporter.h"

#include <sys/resource.h>

#include <catch2/catch.hpp>

#include <csignal>
#include <filesystem>

#include "catch_expected.h"
#include "fake_pci_sysfs.h"
#include "koord/apis/xpu_device_info.h"
#include "koord/core/health.h"
#include "koord/core/metrics.h"
#include "log_lines.h"

using namespace koord::roles::device_daemon;
using koord::testing::FakePciSysfs;
using koord::testing::LogLines;
using koord::testing::TempTree;

namespace fs = std::filesystem;

namespace {

std::vector<std::string> reportedBusIds(const TempTree& out, std::string_view file) {
  auto devices = koord::apis::parseXpuDeviceInfos(out.read(file));
  REQUIRE(devices);
  std::vector<std::string> ids;
  for (const auto& d : *devices)
    ids.push_back(d.topology->bus_id);
  return ids;
}

double rounds(const std::string& result) {
  return koord::metrics::Registry::global()
      .counter("koord_device_daemon_rounds_total", "", {"result"})
      .with({result})
      .value();
}

std::size_t filesIn(const fs::path& dir) {
  return static_cast<std::size_t>(
      std::distance(fs::directory_iterator(dir), fs::directory_iterator()));
}

// Files this process writes may not grow past `bytes` while it lives: a real write(2) failure
// (EFBIG) that root cannot override, as a full disk would give.
class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) {
    ::getrlimit(RLIMIT_FSIZE, &saved_);
    old_handler_ = std::signal(SIGXFSZ, SIG_IGN);  // else the kernel kills us instead of failing
    rlimit lower = saved_;
    lower.rlim_cur = bytes;
    REQUIRE(::setrlimit(RLIMIT_FSIZE, &lower) == 0);
  }
  ~FileSizeLimit() {
    ::setrlimit(RLIMIT_FSIZE, &saved_);
    std::signal(SIGXFSZ, old_handler_);
  }

 private:
  rlimit saved_{};
  void (*old_handler_)(int) = nullptr;
};

}  // namespace

TEST_CASE("reporter: each round writes the devices there are; one that left is gone",
          "[devicedaemon][reporter]") {
  FakePciSysfs sys;
  sys.add(koord::testing::nvidiaGpu("0000:3b:00.0"));
  sys.add(koord::testing::nvidiaGpu("0000:86:00.0"));
  sys.add(koord::testing::huaweiNpu("0000:c1:00.0"));
  TempTree out("koord-dd-out");
  // /var/run is a tmpfs: the directory does not exist after a reboot until the first round.
  std::string file = out.path("xpu-device-infos/ic-device").string();
  koord::Health health;
  DeviceReporter reporter({.sysfs_root = sys.root(), .output_file = file}, nullptr, &health);

  double written = rounds("written");
  REQUIRE(reporter.runRound());
  CHECK(health.ready());
  CHECK(rounds("written") == written + 1);
  CHECK(reportedBusIds(out, "xpu-device-infos/ic-device") ==
        std::vector<std::string>{"0000:3b:00.0", "0000:86:00.0", "0000:c1:00.0"});
  CHECK((fs::status(file).permissions() & fs::perms::others_read) != fs::perms::none);

  sys.remove("0000:86:00.0");
  REQUIRE(reporter.runRound());
  CHECK(reportedBusIds(out, "xpu-device-infos/ic-device") ==
        std::vector<std::string>{"0000:3b:00.0", "0000:c1:00.0"});
  CHECK(filesIn(out.path("xpu-device-infos")) == 1);  // no temp file left beside it

  sys.remove("0000:3b:00.0");
  sys.remove("0000:c1:00.0");
  REQUIRE(reporter.runRound());
  CHECK(out.read("xpu-device-infos/ic-device") == "[]\n");  // no devices: an empty list, a file
}

TEST_CASE("reporter: a failed write keeps the last good report and is retried next round",
          "[devicedaemon][reporter]") {
  FakePciSysfs sys;
  sys.add(koord::testing::nvidiaGpu("0000:3b:00.0"));
  sys.add(koord::testing::huaweiNpu("0000:c1:00.0"));
  TempTree out("koord-dd-out");
  std::string file = out.path("ic-device").string();
  koord::Health health;
  DeviceReporter reporter({.sysfs_root = sys.root(), .output_file = file}, nullptr, &health);
  REQUIRE(reporter.runRound());
  const std::string good = out.read("ic-device");

  sys.remove("0000:c1:00.0");
  double failed = rounds("write_failed");
  LogLines log;
  bool ok = true;
  {
    FileSizeLimit limit(8);  // the new report is longer: its write fails part way
    ok = reporter.runRound();
  }
  CHECK_FALSE(ok);
  CHECK(out.read("ic-device") == good);
  CHECK(filesIn(out.root()) == 1);  // the half-written temp file was removed
  CHECK(rounds("write_failed") == failed + 1);
  CHECK_FALSE(health.ready());
  CHECK_THAT(health.reason(), Catch::Contains(file));
  REQUIRE(log.problems() == 1);
  CHECK(log.count("cannot write " + file) == 1);

  REQUIRE(reporter.runRound());  // the limit is gone: the next round writes
  CHECK(reportedBusIds(out, "ic-device") == std::vector<std::string>{"0000:3b:00.0"});
  CHECK(health.ready());
}

TEST_CASE("reporter: a directory that cannot be made fails the round, names the file",
          "[devicedaemon][reporter]") {
  FakePciSysfs sys;
  sys.add(koord::testing::nvidiaGpu("0000:3b:00.0"));
  TempTree out("koord-dd-out");
  out.write("not-a-dir", "a regular file where the report's directory should be\n");
  std::string file = out.path("not-a-dir/xpu-device-infos/ic-device").string();
  DeviceReporter reporter({.sysfs_root = sys.root(), .output_file = file}, nullptr, nullptr);
  LogLines log;
  CHECK_FALSE(reporter.runRound());
  CHECK(log.count("cannot write " + file) == 1);
  CHECK(out.read("not-a-dir") == "a regular file where the report's directory should be\n");
}

TEST_CASE("reporter: a sysfs root that cannot be listed writes nothing",
          "[devicedaemon][reporter]") {
  TempTree empty("koord-dd-nosys");
  TempTree out("koord-dd-out");
  out.write("ic-device", "[]\n");
  std::string file = out.path("ic-device").string();
  koord::Health health;
  DeviceReporter reporter({.sysfs_root = empty.root(), .output_file = file}, nullptr, &health);
  LogLines log;
  double failed = rounds("discovery_failed");
  CHECK_FALSE(reporter.runRound());
  CHECK(rounds("discovery_failed") == failed + 1);
  CHECK(log.count("bus/pci/devices") == 1);
  CHECK_FALSE(health.ready());
  CHECK(out.read("ic-device") == "[]\n");
}
