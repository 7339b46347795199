#include <linux/capability.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "catch_expected.h"

#include <cerrno>
#include <chrono>
#include <exception>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "koord/cgroup/kubepods_path.h"
#include "koord/cgroup/resource_executor.h"
#include "koord/core/clock.h"
#include "koord/core/metrics.h"
#include "log_lines.h"
#include "temp_tree.h"

using namespace koord::cgroup;
using koord::testing::TempTree;
namespace fs = std::filesystem;

namespace {

const char* kUid = "6e2b5f4e-2c6a-4f0c-9a51-2d8a1c0f3b7e";

// A v1 tree as the kubelet leaves it: one directory per subsystem, kubepods under each.
void makeV1(const TempTree& t, const std::string& dir) {
  t.write("cpu/" + dir + "/cpu.shares", "2\n");
  t.write("cpu/" + dir + "/cpu.cfs_quota_us", "-1\n");
  t.write("cpu/" + dir + "/cpu.cfs_period_us", "100000\n");
  t.write("cpuset/" + dir + "/cpuset.cpus", "0-7\n");
  t.write("memory/" + dir + "/memory.limit_in_bytes", "9223372036854771712\n");
}

double writeErrors(const std::string& file, const std::string& err) {
  std::string text = koord::metrics::Registry::global().render();
  std::string series =
      "koordlet_cgroup_write_errors_total{file=\"" + file + "\",errno=\"" + err + "\"} ";
  auto at = text.find(series);
  return at == std::string::npos ? 0.0 : std::stod(text.substr(at + series.size()));
}

// Runs `f` on a thread without effective capabilities. As root, CAP_DAC_OVERRIDE writes a 0444
// file; the kernel's read-only cgroup files refuse root too, and this makes the temp file do the
// same. Capabilities are per thread, so the rest of the test process keeps its own.
template <typename F>
void withoutCapabilities(F f) {
  std::exception_ptr failure;
  std::thread worker([&] {
    try {
      __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
      __user_cap_data_struct data[2]{};
      REQUIRE(::syscall(SYS_capget, &header, data) == 0);
      data[0].effective = 0;
      data[1].effective = 0;
      REQUIRE(::syscall(SYS_capset, &header, data) == 0);
      f();
    } catch (...) {
      failure = std::current_exception();
    }
  });
  worker.join();
  if (failure)
    std::rethrow_exception(failure);
}

// The seconds, of a reconciler asking every second for `seconds`, at which the write reached the
// kernel or the range check: the rounds the error metric rose in.
template <typename Write>
std::vector<int> attemptsEverySecond(koord::FakeClock& clock, int seconds, Write write,
                                     const std::string& file, const std::string& err) {
  std::vector<int> attempts;
  for (int second = 0; second < seconds; ++second) {
    const double before = writeErrors(file, err);
    write();
    const double after = writeErrors(file, err);
    REQUIRE(after - before <= 1.0);
    if (after > before)
      attempts.push_back(second);
    clock.advance(std::chrono::seconds(1));
  }
  return attempts;
}

// The backoff doubles from 1 s and stops at 5 min: 10 tries in the first 10 minutes, not 600.
const std::vector<int> kBackoffAttempts{0, 1, 3, 7, 15, 31, 63, 127, 255, 511};

void makeV2(const TempTree& t, const std::string& dir) {
  t.write("cgroup.controllers", "cpuset cpu io memory pids\n");
  t.write(dir + "/cpu.weight", "1\n");
  t.write(dir + "/cpu.max", "max 100000\n");
  t.write(dir + "/cpuset.cpus", "\n");
  t.write(dir + "/memory.max", "max\n");
}

}  // namespace

TEST_CASE("v1 cgroupfs: writes land in the subsystem's file, unchanged values are skipped") {
  TempTree t("koord-cgroup");
  const auto dir = podDir(CgroupDriver::kCgroupfs, QoSTier::kBestEffort, kUid).value();
  makeV1(t, dir);
  ResourceExecutor e({t.root(), CgroupVersion::kV1, CgroupDriver::kCgroupfs});

  CHECK(e.write(dir, Resource::kCpuShares, "512").value() == WriteOutcome::kWritten);
  CHECK(t.read("cpu/" + dir + "/cpu.shares") == "512");
  CHECK(e.write(dir, Resource::kCpuShares, "512").value() == WriteOutcome::kUnchanged);
  CHECK(e.write(dir, Resource::kCpuCfsQuota, "50000").value() == WriteOutcome::kWritten);
  CHECK(t.read("cpu/" + dir + "/cpu.cfs_quota_us") == "50000");
  CHECK(e.read(dir, Resource::kCpuCfsQuota).value() == "50000");
  CHECK(e.write(dir, Resource::kCpusetCpus, "0,1,2").value() == WriteOutcome::kWritten);
  CHECK(t.read("cpuset/" + dir + "/cpuset.cpus") == "0-2");
  // The kernel's "no limit" reads as -1, and writing -1 over it is no change.
  CHECK(e.read(dir, Resource::kMemoryLimit).value() == "-1");
  CHECK(e.write(dir, Resource::kMemoryLimit, "-1").value() == WriteOutcome::kUnchanged);
  CHECK(e.write(dir, Resource::kMemoryLimit, "1073741824").value() == WriteOutcome::kWritten);
  CHECK(t.read("memory/" + dir + "/memory.limit_in_bytes") == "1073741824");
  // The kernel rounds limits down to pages: a value in the same page is no change.
  t.write("memory/" + dir + "/memory.limit_in_bytes", "1073741824\n");
  CHECK(e.write(dir, Resource::kMemoryLimit, "1073741825").value() == WriteOutcome::kUnchanged);
}

TEST_CASE("v2 systemd: shares become weight, quota and period share cpu.max") {
  TempTree t("koord-cgroup");
  const auto dir = podDir(CgroupDriver::kSystemd, QoSTier::kBurstable, kUid).value();
  makeV2(t, dir);
  ResourceExecutor e({t.root(), CgroupVersion::kV2, CgroupDriver::kSystemd});

  CHECK(e.write(dir, Resource::kCpuShares, "1024").value() == WriteOutcome::kWritten);
  CHECK(t.read(dir + "/cpu.weight") == "39");
  CHECK(e.write(dir, Resource::kCpuShares, "1024").value() == WriteOutcome::kUnchanged);
  CHECK(e.write(dir, Resource::kCpuCfsQuota, "30000").value() == WriteOutcome::kWritten);
  CHECK(t.read(dir + "/cpu.max") == "30000 100000");
  CHECK(e.write(dir, Resource::kCpuCfsPeriod, "50000").value() == WriteOutcome::kWritten);
  CHECK(t.read(dir + "/cpu.max") == "30000 50000");
  CHECK(e.read(dir, Resource::kCpuCfsQuota).value() == "30000");
  CHECK(e.read(dir, Resource::kCpuCfsPeriod).value() == "50000");
  CHECK(e.write(dir, Resource::kCpuCfsQuota, "-1").value() == WriteOutcome::kWritten);
  CHECK(t.read(dir + "/cpu.max") == "max 50000");
  CHECK(e.read(dir, Resource::kCpuCfsQuota).value() == "-1");
  CHECK(e.read(dir, Resource::kMemoryLimit).value() == "-1");
  CHECK(e.write(dir, Resource::kMemoryLimit, "2147483648").value() == WriteOutcome::kWritten);
  CHECK(t.read(dir + "/memory.max") == "2147483648");
  CHECK(e.write(dir, Resource::kMemoryLimit, "max").value() == WriteOutcome::kWritten);
  CHECK(t.read(dir + "/memory.max") == "max");
}

TEST_CASE("v1 systemd and v2 cgroupfs layouts are written the same way") {
  {
    TempTree t("koord-cgroup");
    const auto dir = qosTierDir(CgroupDriver::kSystemd, QoSTier::kBestEffort);
    makeV1(t, dir);
    ResourceExecutor e({t.root(), CgroupVersion::kV1, CgroupDriver::kSystemd});
    CHECK(e.write(dir, Resource::kCpuCfsQuota, "200000").value() == WriteOutcome::kWritten);
    CHECK(t.read("cpu/kubepods.slice/kubepods-besteffort.slice/cpu.cfs_quota_us") == "200000");
  }
  {
    TempTree t("koord-cgroup");
    const auto dir = qosTierDir(CgroupDriver::kCgroupfs, QoSTier::kBestEffort);
    makeV2(t, dir);
    ResourceExecutor e({t.root(), CgroupVersion::kV2, CgroupDriver::kCgroupfs});
    CHECK(e.write(dir, Resource::kCpusetCpus, "2-3").value() == WriteOutcome::kWritten);
    CHECK(t.read("kubepods/besteffort/cpuset.cpus") == "2-3");
  }
}

TEST_CASE("bad values and read-only files change nothing and name the file or value") {
  TempTree t("koord-cgroup");
  const std::string dir = "kubepods/besteffort";
  makeV1(t, dir);
  ResourceExecutor e({t.root(), CgroupVersion::kV1, CgroupDriver::kCgroupfs});
  auto r = e.write(dir, Resource::kCpuShares, "1");
  REQUIRE_FALSE(r);
  CHECK(r.error().message.find("cpu.shares") != std::string::npos);
  CHECK(t.read("cpu/" + dir + "/cpu.shares") == "2\n");
  CHECK_FALSE(e.write(dir, Resource::kMemoryStat, "1"));
  // A file the table knows but the directory lacks is an error, never a new regular file.
  auto missing = e.write(dir, Resource::kCpuCfsBurst, "0");
  REQUIRE_FALSE(missing);
  CHECK(missing.error().message.find("cpu.cfs_burst_us") != std::string::npos);
  CHECK_FALSE(fs::exists(t.path("cpu/" + dir + "/cpu.cfs_burst_us")));
  // A directory that is not there.
  CHECK_FALSE(e.write("kubepods/burstable", Resource::kCpuShares, "2"));
}

TEST_CASE("a subsystem directory removed and made again is read afresh") {
  // The executor keeps the subsystems' directories open between reads; one that goes away and
  // comes back (a remount, a test's tree) must not keep answering from the old one.
  TempTree t;
  makeV1(t, "kubepods");
  ResourceExecutor e({t.root(), CgroupVersion::kV1, CgroupDriver::kCgroupfs});
  CHECK(e.read("kubepods", Resource::kCpuShares).value() == "2");
  fs::remove_all(t.path("cpu"));
  auto gone = e.read("kubepods", Resource::kCpuShares);
  REQUIRE_FALSE(gone);
  CHECK(gone.error().message.find(t.path("cpu").string()) != std::string::npos);
  t.write("cpu/kubepods/cpu.shares", "1024\n");
  CHECK(e.read("kubepods", Resource::kCpuShares).value() == "1024");
  REQUIRE(e.write("kubepods", Resource::kCpuShares, "512"));
  CHECK(e.read("kubepods", Resource::kCpuShares).value() == "512");
}

TEST_CASE("hostile directories write nothing outside the cgroup root") {
  TempTree outside("koord-outside");
  outside.write("cpu.shares", "untouched");
  outside.write("cpu/cpu.shares", "untouched");
  TempTree t("koord-cgroup");
  makeV1(t, "kubepods/besteffort");
  ResourceExecutor e({t.root(), CgroupVersion::kV1, CgroupDriver::kCgroupfs});

  // ".." and absolute paths are refused before any file is opened.
  auto rel = fs::relative(outside.root(), t.root() / "cpu").string();
  for (const std::string& dir :
       {std::string("kubepods/../../") + rel, rel, outside.root().string(), std::string("../..")}) {
    INFO(dir);
    CHECK_FALSE(e.write(dir, Resource::kCpuShares, "4"));
  }
  // A symlink planted inside the tree (as a pod's UID directory) is not followed.
  t.symlink(std::string("cpu/kubepods/besteffort/pod") + kUid, outside.root());
  const auto pod = podDir(CgroupDriver::kCgroupfs, QoSTier::kBestEffort, kUid).value();
  auto r = e.write(pod, Resource::kCpuShares, "4");
  REQUIRE_FALSE(r);
  CHECK(r.error().message.find("symlink") != std::string::npos);
  CHECK_FALSE(e.read(pod, Resource::kCpuShares));
  // A symlinked file inside a real cgroup directory is not followed either.
  t.mkdirs("cpu/kubepods/burstable");
  t.symlink("cpu/kubepods/burstable/cpu.shares", outside.path("cpu.shares"));
  CHECK_FALSE(e.write("kubepods/burstable", Resource::kCpuShares, "4"));
  CHECK(outside.read("cpu.shares") == "untouched");
  CHECK(outside.read("cpu/cpu.shares") == "untouched");
}

TEST_CASE("a symlinked subsystem directory (cpu -> cpu,cpuacct) is the operator's and works") {
  TempTree t("koord-cgroup");
  t.write("cpu,cpuacct/kubepods/cpu.shares", "2\n");
  t.symlink("cpu", "cpu,cpuacct");
  ResourceExecutor e({t.root(), CgroupVersion::kV1, CgroupDriver::kCgroupfs});
  CHECK(e.write("kubepods", Resource::kCpuShares, "8").value() == WriteOutcome::kWritten);
  CHECK(t.read("cpu,cpuacct/kubepods/cpu.shares") == "8");
}

TEST_CASE("a read-only file is counted as EACCES, logged once, and retried with backoff") {
  TempTree t("koord-cgroup");
  const auto dir = podDir(CgroupDriver::kCgroupfs, QoSTier::kBestEffort, kUid).value();
  makeV1(t, dir);
  const auto file = t.path("cpu/" + dir + "/cpu.cfs_quota_us");
  fs::permissions(file, fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
  koord::FakeClock clock;
  ResourceExecutor e({t.root(), CgroupVersion::kV1, CgroupDriver::kCgroupfs}, clock);
  koord::testing::LogLines log;
  std::vector<int> attempts;
  std::vector<int> landed;
  withoutCapabilities([&] {
    auto write = [&] {
      auto r = e.write(dir, Resource::kCpuCfsQuota, "50000");
      REQUIRE_FALSE(r);
      CHECK(isRefusedWrite(r.error()));
      CHECK(isKernelRefusal(r.error()));
      CHECK(r.error().code.value() == EACCES);
      CHECK_THAT(r.error().message, Catch::Contains("cpu.cfs_quota_us"));
    };
    attempts = attemptsEverySecond(clock, 600, write, "cpu.cfs_quota_us", "EACCES");
    // Writable again (a remount, say): the value goes in at the next retry, not before.
    fs::permissions(file, fs::perms::owner_write, fs::perm_options::add);
    for (int second = 600; second < 900; ++second) {
      auto r = e.write(dir, Resource::kCpuCfsQuota, "50000");
      if (r && *r == WriteOutcome::kWritten)
        landed.push_back(second);
      clock.advance(std::chrono::seconds(1));
    }
  });
  CHECK(attempts == kBackoffAttempts);
  CHECK(landed == std::vector<int>{811});  // 511 + the 5 min cap
  CHECK(t.read("cpu/" + dir + "/cpu.cfs_quota_us") == "50000");
  // One line for the first refusal, one at the 10th, one when the write is taken at last.
  CHECK(log.count("cpu.cfs_quota_us = \"50000\" refused: Permission denied") == 1);
  CHECK(log.count("refused 10 times in a row") == 1);
  CHECK(log.problems() == 2);
  CHECK(log.count("taken after 10 refused write(s)") == 1);
}

TEST_CASE("a value the range check refuses is counted as errno=range, logged once, backed off") {
  TempTree t("koord-cgroup");
  const auto dir = podDir(CgroupDriver::kCgroupfs, QoSTier::kBestEffort, kUid).value();
  makeV1(t, dir);
  koord::FakeClock clock;
  ResourceExecutor e({t.root(), CgroupVersion::kV1, CgroupDriver::kCgroupfs}, clock);
  koord::testing::LogLines log;
  const double kernel_einval = writeErrors("cpu.cfs_quota_us", "EINVAL");

  // A reconciler that computes quota 999 asks for it every round.
  auto write = [&] {
    auto r = e.write(dir, Resource::kCpuCfsQuota, "999");
    REQUIRE_FALSE(r);
    CHECK(isRefusedWrite(r.error()));
    CHECK_FALSE(isKernelRefusal(r.error()));
    CHECK_THAT(r.error().message, Catch::Contains("out of range"));
  };
  CHECK(attemptsEverySecond(clock, 600, write, "cpu.cfs_quota_us", "range") == kBackoffAttempts);
  CHECK(t.read("cpu/" + dir + "/cpu.cfs_quota_us") == "-1\n");
  CHECK(log.count("cpu.cfs_quota_us = \"999\" refused") == 1);
  CHECK(log.count("refused 10 times in a row") == 1);
  CHECK(log.problems() == 2);
  CHECK(writeErrors("cpu.cfs_quota_us", "EINVAL") == kernel_einval);  // the kernel never saw it

  // A valid value is written at once, and the run of refusals ends with its count.
  CHECK(e.write(dir, Resource::kCpuCfsQuota, "1000").value() == WriteOutcome::kWritten);
  CHECK(log.count("taken after 10 refused write(s)") == 1);

  // Shares 1 and a garbage limit: each refused, counted under its own file, logged once.
  const double shares = writeErrors("cpu.shares", "range");
  const double memory = writeErrors("memory.limit_in_bytes", "range");
  for (int round = 0; round < 5; ++round) {
    auto s = e.write(dir, Resource::kCpuShares, "1");
    auto m = e.write(dir, Resource::kMemoryLimit, "12abc");
    REQUIRE_FALSE(s);
    REQUIRE_FALSE(m);
    CHECK(isRefusedWrite(s.error()));
    CHECK(isRefusedWrite(m.error()));
  }
  CHECK(writeErrors("cpu.shares", "range") == shares + 1);
  CHECK(writeErrors("memory.limit_in_bytes", "range") == memory + 1);
  CHECK(log.count("cpu.shares = \"1\" refused") == 1);
  CHECK(log.count("memory.limit_in_bytes = \"12abc\" refused") == 1);
  CHECK(t.read("cpu/" + dir + "/cpu.shares") == "2\n");
  CHECK(t.read("memory/" + dir + "/memory.limit_in_bytes") == "9223372036854771712\n");
}
