// CfsQuotaTree and the quota arithmetic on temp trees, for both cgroup versions. The order the
// kernel needs is checked on real v1 cgroups (real_cgroup_write_test.cpp); v2 accepts any order
// and clamps, so there the values are what counts.
#include <catch2/catch.hpp>

#include "catch_expected.h"

#include <string>

#include "koord/cgroup/cfs_quota_tree.h"
#include "koord/cgroup/cgroup_reader.h"
#include "koord/cgroup/resource_executor.h"
#include "temp_tree.h"

using namespace koord::cgroup;
using koord::testing::TempTree;

TEST_CASE("quota arithmetic: rescaling, ordering and ceilings", "[cgroup]") {
  CHECK(rescaleQuota(50000, 100000, 200000) == 100000);
  CHECK(rescaleQuota(-1, 100000, 50000) == -1);
  CHECK(rescaleQuota(INT64_MAX, 1000, 1000000) == INT64_MAX);
  CHECK(quotaAtMost(1000, 2000));
  CHECK(quotaAtMost(1000, -1));
  CHECK_FALSE(quotaAtMost(-1, 2000));
  CHECK(quotaAtMost(-1, -1));
  CHECK(quotaWithin(300000, 28300) == 28300);
  CHECK(quotaWithin(20000, 28300) == 20000);
  CHECK(quotaWithin(-1, 28300) == -1);
  CHECK(quotaWithin(300000, -1) == 300000);
}

TEST_CASE("cgroup v2: the tier's pods follow its quota down and back", "[cgroup]") {
  TempTree t("koord-quota-tree");
  t.write("cgroup.controllers", "cpuset cpu io memory pids\n");
  const std::string tier = "kubepods.slice/kubepods-besteffort.slice";
  const std::string pod = tier + "/kubepods-besteffort-pod1.slice";
  const std::string other = tier + "/kubepods-besteffort-pod2.slice";
  t.write(tier + "/cpu.max", "max 100000\n");
  t.write(pod + "/cpu.max", "200000 100000\n");
  t.write(pod + "/cri-containerd-abc.scope/cpu.max", "100000 100000\n");
  // A period of its own: its quota is compared per period, as the kernel does.
  t.write(other + "/cpu.max", "20000 50000\n");
  ResourceExecutor e({t.root(), CgroupVersion::kV2, CgroupDriver::kSystemd});

  CfsQuotaTree tree(e, tier);
  REQUIRE(tree.apply(30000));
  CHECK(t.read(tier + "/cpu.max") == "30000 100000");
  CHECK(t.read(pod + "/cpu.max") == "30000 100000");
  CHECK(t.read(pod + "/cri-containerd-abc.scope/cpu.max") == "30000 100000");
  CHECK(t.read(other + "/cpu.max") == "15000 50000");
  CHECK(tree.lowered() == 3);

  // The pod's owner rewrote it meanwhile (within the tier): that is what it wants now.
  t.write(pod + "/cpu.max", "10000 100000");
  REQUIRE(tree.apply(-1));
  CHECK(t.read(tier + "/cpu.max") == "max 100000");
  CHECK(t.read(pod + "/cpu.max") == "10000 100000");
  CHECK(t.read(pod + "/cri-containerd-abc.scope/cpu.max") == "100000 100000");
  CHECK(t.read(other + "/cpu.max") == "20000 50000");
  CHECK(tree.lowered() == 0);
}
