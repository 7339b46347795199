#include <catch2/catch.hpp>

#include "catch_expected.h"

#include "koord/cgroup/cgroup_reader.h"
#include "koord/cgroup/resource_executor.h"
#include "temp_tree.h"

using namespace koord::cgroup;
using koord::testing::TempTree;

TEST_CASE("v1 usage readers") {
  TempTree t("koord-cgroup");
  t.write("cpuacct/kubepods/besteffort/cpuacct.usage", "123456789\n");
  t.write("memory/kubepods/besteffort/memory.stat",
          "cache 100\nrss 50\ntotal_cache 4096\ntotal_inactive_anon 1000\ntotal_active_anon "
          "20000\ntotal_unevictable 300\ninactive_anon 1\nactive_anon 2\nunevictable 3\n");
  t.write("cpu/kubepods/besteffort/cpu.stat",
          "nr_periods 10\nnr_throttled 4\nthrottled_time 5000000\n");
  ResourceExecutor e({t.root(), CgroupVersion::kV1, CgroupDriver::kCgroupfs});
  CHECK(readCpuUsageNanos(e, "kubepods/besteffort").value() == 123456789);
  CHECK(readMemoryUsageBytes(e, "kubepods/besteffort").value() == 21300);
  auto th = readCpuThrottling(e, "kubepods/besteffort").value();
  CHECK(th.nr_periods == 10);
  CHECK(th.nr_throttled == 4);
  CHECK(th.throttled_nanos == 5000000);
}

TEST_CASE("v2 usage readers give the same units") {
  TempTree t("koord-cgroup");
  t.write("cgroup.controllers", "cpu memory\n");
  t.write("kubepods/cpu.stat",
          "usage_usec 2500\nuser_usec 2000\nsystem_usec 500\nnr_periods 3\nnr_throttled 1\n"
          "throttled_usec 70\n");
  t.write("kubepods/memory.stat",
          "anon 99\nfile 4096\ninactive_anon 10\nactive_anon 20\n"
          "unevictable 5\n");
  ResourceExecutor e({t.root(), CgroupVersion::kV2, CgroupDriver::kCgroupfs});
  CHECK(readCpuUsageNanos(e, "kubepods").value() == 2500000);
  CHECK(readMemoryUsageBytes(e, "kubepods").value() == 35);
  CHECK(readCpuThrottling(e, "kubepods").value().throttled_nanos == 70000);
}

TEST_CASE("garbled or truncated files are errors, not zero usage") {
  TempTree t("koord-cgroup");
  t.write("cpuacct/kubepods/cpuacct.usage", "12ab\n");
  t.write("memory/kubepods/memory.stat", "total_inactive_anon 1\ntotal_active_an");
  t.write("memory/kubepods/burstable/memory.stat", "total_inactive_anon 1\n");
  ResourceExecutor e({t.root(), CgroupVersion::kV1, CgroupDriver::kCgroupfs});
  CHECK_FALSE(readCpuUsageNanos(e, "kubepods"));
  auto m = readMemoryUsageBytes(e, "kubepods");
  REQUIRE_FALSE(m);
  CHECK(m.error().message.find("memory.stat") != std::string::npos);
  CHECK_FALSE(readMemoryUsageBytes(e, "kubepods/burstable"));
  CHECK_FALSE(readCpuUsageNanos(e, "kubepods/besteffort"));
}
