// Reliability check 20: the executor opens only the table's files for writing. The kernel's
// control files that could run a program as root (release_agent, armed by notify_on_release) or
// move every task (cgroup.procs, tasks) stay untouched whatever the executor is asked to write.
#include <catch2/catch.hpp>

#include "catch_expected.h"

#include <array>
#include <filesystem>
#include <map>
#include <string>

#include "koord/cgroup/cgroup_resource.h"
#include "koord/cgroup/resource_executor.h"
#include "temp_tree.h"

using namespace koord::cgroup;
using koord::testing::TempTree;
namespace fs = std::filesystem;

namespace {

constexpr std::array kControlFiles = {
    "release_agent",          "notify_on_release", "cgroup.procs",  "tasks",
    "cgroup.subtree_control", "cgroup.kill",       "cgroup.freeze", "devices.allow",
    "cgroup.clone_children",  "cgroup.type"};

constexpr std::array kAllResources = {
    Resource::kCpuShares,  Resource::kCpuCfsQuota, Resource::kCpuCfsPeriod, Resource::kCpuCfsBurst,
    Resource::kCpuIdle,    Resource::kCpuStat,     Resource::kCpuAcctUsage, Resource::kCpusetCpus,
    Resource::kCpusetMems, Resource::kMemoryLimit, Resource::kMemoryUsage,  Resource::kMemoryStat,
    Resource::kCgroupProcs};

// A value each resource accepts, so that only the allowlist can stop the write.
std::string validValue(Resource r) {
  switch (r) {
    case Resource::kCpusetCpus:
    case Resource::kCpusetMems:
      return "0";
    case Resource::kCpuIdle:
      return "1";
    default:
      return "4096";
  }
}

// Every regular file under the tree with its content.
std::map<std::string, std::string> snapshot(const TempTree& t) {
  std::map<std::string, std::string> files;
  for (const auto& entry : fs::recursive_directory_iterator(t.root())) {
    if (!entry.is_regular_file())
      continue;
    auto rel = fs::relative(entry.path(), t.root()).string();
    files[rel] = t.read(rel);
  }
  return files;
}

void checkOnlyTableFilesChanged(const std::map<std::string, std::string>& before,
                                const std::map<std::string, std::string>& after) {
  CHECK(before.size() == after.size());
  for (const auto& [rel, content] : after) {
    INFO(rel);
    const auto name = fs::path(rel).filename().string();
    auto known = resourceByFileName(name);
    if (before.at(rel) != content) {
      REQUIRE(known);
      CHECK(resourceWritable(*known));
    }
  }
}

void runAll(const TempTree& t, CgroupVersion version, const std::array<std::string, 3>& dirs) {
  ResourceExecutor e({t.root(), version, CgroupDriver::kCgroupfs});
  const auto before = snapshot(t);
  int written = 0;
  for (const auto& dir : dirs) {
    for (auto r : kAllResources) {
      auto result = e.write(dir, r, validValue(r));
      if (result && *result == WriteOutcome::kWritten)
        ++written;
      if (!resourceWritable(r)) {
        INFO(resourceName(r) << " in '" << dir << "'");
        CHECK_FALSE(result);
      }
    }
  }
  // The writable resources did reach their files: the check below is not vacuous.
  CHECK(written > 0);
  auto after = snapshot(t);
  checkOnlyTableFilesChanged(before, after);
  for (const auto& [rel, content] : after) {
    const auto name = fs::path(rel).filename().string();
    for (const char* control : kControlFiles) {
      if (name == control) {
        INFO(rel);
        CHECK(content == "canary\n");
      }
    }
  }
}

}  // namespace

TEST_CASE("control files outside the table are unknown; cgroup.procs is read only") {
  for (const char* name : kControlFiles) {
    INFO(name);
    auto r = resourceByFileName(name);
    if (r)
      CHECK_FALSE(resourceWritable(*r));
  }
  CHECK(resourceByFileName("cgroup.procs") == Resource::kCgroupProcs);
  CHECK_FALSE(resourceWritable(Resource::kCgroupProcs));
  CHECK_FALSE(resourceByFileName("notify_on_release"));
  CHECK_FALSE(resourceByFileName("release_agent"));
}

TEST_CASE("v1: writes of every resource at the root, a tier and a pod touch only table files") {
  TempTree t("koord-cgroup");
  const std::array<std::string, 3> dirs = {"", "kubepods", "kubepods/besteffort"};
  for (const std::string sub : {"cpu", "cpuacct", "cpuset", "memory"}) {
    for (const auto& dir : dirs) {
      const std::string base = sub + (dir.empty() ? "" : "/" + dir);
      for (auto r : kAllResources) {
        auto f = resourceFile(r, CgroupVersion::kV1);
        if (f.subsystem == sub)
          t.write(base + "/" + std::string(f.file), "2\n");
      }
      for (const char* control : kControlFiles)
        t.write(base + "/" + control, "canary\n");
    }
  }
  runAll(t, CgroupVersion::kV1, dirs);
}

TEST_CASE("v2: writes of every resource at the root, a tier and a pod touch only table files") {
  TempTree t("koord-cgroup");
  t.write("cgroup.controllers", "cpuset cpu io memory pids\n");
  const std::array<std::string, 3> dirs = {"", "kubepods", "kubepods/besteffort"};
  for (const auto& dir : dirs) {
    const std::string base = dir.empty() ? "" : dir + "/";
    for (auto r : kAllResources)
      t.write(base + std::string(resourceFile(r, CgroupVersion::kV2).file), "2\n");
    for (const char* control : kControlFiles)
      t.write(base + control, "canary\n");
  }
  runAll(t, CgroupVersion::kV2, dirs);
}
