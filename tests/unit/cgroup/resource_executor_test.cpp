#include <catch2/catch.hpp>

#include "catch_expected.h"

#include <filesystem>

#include "koord/cgroup/kubepods_path.h"
#include "koord/cgroup/resource_executor.h"
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
