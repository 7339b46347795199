#include <catch2/catch.hpp>

#include "catch_expected.h"

#include "koord/cgroup/cgroup_resource.h"

using namespace koord::cgroup;

TEST_CASE("the v1 and v2 files of each resource") {
  CHECK(resourceFile(Resource::kCpuShares, CgroupVersion::kV1).subsystem == "cpu");
  CHECK(resourceFile(Resource::kCpuShares, CgroupVersion::kV1).file == "cpu.shares");
  CHECK(resourceFile(Resource::kCpuShares, CgroupVersion::kV2).file == "cpu.weight");
  CHECK(resourceFile(Resource::kCpuShares, CgroupVersion::kV2).subsystem.empty());
  CHECK(resourceFile(Resource::kCpuCfsQuota, CgroupVersion::kV2).file == "cpu.max");
  CHECK(resourceFile(Resource::kCpuCfsPeriod, CgroupVersion::kV2).file == "cpu.max");
  CHECK(resourceFile(Resource::kCpuAcctUsage, CgroupVersion::kV1).subsystem == "cpuacct");
  CHECK(resourceFile(Resource::kCpuAcctUsage, CgroupVersion::kV2).file == "cpu.stat");
  CHECK(resourceFile(Resource::kMemoryLimit, CgroupVersion::kV1).file == "memory.limit_in_bytes");
  CHECK(resourceFile(Resource::kMemoryLimit, CgroupVersion::kV2).file == "memory.max");
  CHECK(resourceFile(Resource::kMemoryUsage, CgroupVersion::kV2).file == "memory.current");
  CHECK(resourceFile(Resource::kCpusetCpus, CgroupVersion::kV1).subsystem == "cpuset");
}

TEST_CASE("only files in the table are known, by either name") {
  CHECK(resourceByFileName("cpu.shares") == Resource::kCpuShares);
  CHECK(resourceByFileName("cpu.weight") == Resource::kCpuShares);
  CHECK(resourceByFileName("cpu.max") == Resource::kCpuCfsQuota);
  CHECK(resourceByFileName("memory.max") == Resource::kMemoryLimit);
  CHECK_FALSE(resourceByFileName("tasks"));
  CHECK_FALSE(resourceByFileName("release_agent"));
  CHECK_FALSE(resourceByFileName("../../etc/passwd"));
  CHECK_FALSE(resourceByFileName(""));
  CHECK_FALSE(resourceWritable(Resource::kMemoryStat));
  CHECK(resourceWritable(Resource::kCpuCfsQuota));
  CHECK(resourceByFileName("cpu.idle") == Resource::kCpuIdle);
  CHECK(resourceFile(Resource::kCpuIdle, CgroupVersion::kV1).subsystem == "cpu");
  CHECK(resourceFile(Resource::kCpuIdle, CgroupVersion::kV2).file == "cpu.idle");
}

TEST_CASE("values are range checked and normalized") {
  CHECK(validateValue(Resource::kCpuShares, "2").value() == "2");
  CHECK(validateValue(Resource::kCpuShares, " 1024\n").value() == "1024");
  CHECK_FALSE(validateValue(Resource::kCpuShares, "1"));
  CHECK_FALSE(validateValue(Resource::kCpuShares, "262145"));
  CHECK_FALSE(validateValue(Resource::kCpuShares, "12abc"));
  CHECK_FALSE(validateValue(Resource::kCpuShares, ""));
  CHECK(validateValue(Resource::kCpuCfsQuota, "-1").value() == "-1");
  CHECK(validateValue(Resource::kCpuCfsQuota, "max").value() == "-1");
  CHECK(validateValue(Resource::kCpuCfsQuota, "2000").value() == "2000");
  CHECK_FALSE(validateValue(Resource::kCpuCfsQuota, "999"));
  CHECK_FALSE(validateValue(Resource::kCpuCfsQuota, "-2"));
  CHECK_FALSE(validateValue(Resource::kCpuCfsPeriod, "100"));
  CHECK_FALSE(validateValue(Resource::kCpuCfsPeriod, "2000000"));
  CHECK(validateValue(Resource::kMemoryLimit, "max").value() == "-1");
  CHECK(validateValue(Resource::kMemoryLimit, "1073741824").value() == "1073741824");
  CHECK_FALSE(validateValue(Resource::kMemoryLimit, "0"));
  CHECK_FALSE(validateValue(Resource::kMemoryLimit, "1Gi"));
  CHECK_FALSE(validateValue(Resource::kMemoryStat, "1"));
  CHECK(validateValue(Resource::kCpuIdle, "1\n").value() == "1");
  CHECK(validateValue(Resource::kCpuIdle, "0").value() == "0");
  CHECK_FALSE(validateValue(Resource::kCpuIdle, "2"));
  CHECK_FALSE(validateValue(Resource::kCpuIdle, "-1"));
  auto err = validateValue(Resource::kCpuShares, "0");
  REQUIRE_FALSE(err);
  CHECK(err.error().message.find("cpu.shares") != std::string::npos);
}

TEST_CASE("cpuset lists are checked and written in the kernel's canonical form") {
  CHECK(validateValue(Resource::kCpusetCpus, "0,1,2,3").value() == "0-3");
  CHECK(validateValue(Resource::kCpusetCpus, "0-1,2,5,7-8").value() == "0-2,5,7-8");
  CHECK(validateValue(Resource::kCpusetCpus, "4").value() == "4");
  CHECK_FALSE(validateValue(Resource::kCpusetCpus, ""));
  CHECK_FALSE(validateValue(Resource::kCpusetCpus, "3-1"));
  // The kernel takes repeats and any order; what it reads back is sorted and merged.
  CHECK(validateValue(Resource::kCpusetCpus, "1,1").value() == "1");
  CHECK(validateValue(Resource::kCpusetCpus, "2,1").value() == "1-2");
  CHECK_FALSE(validateValue(Resource::kCpusetCpus, "0,"));
  CHECK_FALSE(validateValue(Resource::kCpusetCpus, "0-8192"));
  CHECK_FALSE(validateValue(Resource::kCpusetCpus, "0;rm -rf"));
}

TEST_CASE("cpu.shares maps to cpu.weight as the kernel's v1 compatibility does") {
  CHECK(sharesToWeight(2) == 1);
  CHECK(sharesToWeight(1024) == 39);
  CHECK(sharesToWeight(262144) == 10000);
  CHECK(weightToShares(1) == 2);
  CHECK(weightToShares(10000) == 262144);
  CHECK(sharesToWeight(weightToShares(39)) == 39);
}
