#include <catch2/catch.hpp>

#include "catch_expected.h"

#include "koord/cgroup/cgroup_version.h"
#include "temp_tree.h"

using namespace koord::cgroup;
using koord::testing::TempTree;

TEST_CASE("a plain tree is v2 when it holds cgroup.controllers") {
  TempTree v1("koord-cg");
  v1.mkdirs("cpu/kubepods");
  CHECK(detectCgroupVersion(v1.root()).value() == CgroupVersion::kV1);
  TempTree v2("koord-cg");
  v2.write("cgroup.controllers", "cpu memory\n");
  CHECK(detectCgroupVersion(v2.root()).value() == CgroupVersion::kV2);
  CHECK_FALSE(detectCgroupVersion(v2.path("missing")));
}

TEST_CASE("the driver follows the kubepods directory the kubelet made") {
  TempTree t("koord-cg");
  CHECK_FALSE(detectCgroupDriver(t.root(), CgroupVersion::kV1));
  t.mkdirs("cpu/kubepods.slice");
  CHECK(detectCgroupDriver(t.root(), CgroupVersion::kV1).value() == CgroupDriver::kSystemd);
  TempTree u("koord-cg");
  u.mkdirs("kubepods");
  CHECK(detectCgroupDriver(u.root(), CgroupVersion::kV2).value() == CgroupDriver::kCgroupfs);
  CHECK(parseCgroupDriver("systemd").value() == CgroupDriver::kSystemd);
  CHECK_FALSE(parseCgroupDriver("Systemd"));
}

TEST_CASE("this machine's cgroup root is recognised") {
  // Either version is fine; what matters is that statfs's answer is understood.
  CHECK(detectCgroupVersion("/sys/fs/cgroup"));
}
