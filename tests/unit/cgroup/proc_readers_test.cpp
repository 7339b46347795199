#include <catch2/catch.hpp>

#include "catch_expected.h"

#include "koord/cgroup/proc_readers.h"
#include "temp_tree.h"

using namespace koord::cgroup;
using koord::testing::TempTree;

TEST_CASE("/proc/stat: total and per-CPU ticks") {
  TempTree t("koord-proc");
  t.write("stat",
          "cpu  100 5 50 1000 7 3 2 11 0 0\ncpu0 60 5 20 500 3 1 1 6 0 0\n"
          "cpu1 40 0 30 500 4 2 1 5 0 0\nintr 1 2 3\nctxt 99\n");
  auto s = readProcStat(t.root()).value();
  CHECK(s.total.busy() == 100 + 5 + 50 + 3 + 2);
  CHECK(s.total.steal == 11);
  REQUIRE(s.per_cpu.size() == 2);
  CHECK(s.per_cpu[1].system == 30);
}

TEST_CASE("/proc/stat: garbled lines are errors") {
  TempTree t("koord-proc");
  t.write("stat", "cpu  100 5 50\n");
  CHECK_FALSE(readProcStat(t.root()));
  t.write("stat", "cpu  100 5 50 x 7 3 2 11\n");
  CHECK_FALSE(readProcStat(t.root()));
  t.write("stat", "intr 1\n");
  CHECK_FALSE(readProcStat(t.root()));
  CHECK_FALSE(readProcStat(t.path("missing")));
}

TEST_CASE("/proc/meminfo in bytes, usage with and without page cache") {
  TempTree t("koord-proc");
  t.write("meminfo",
          "MemTotal:       16000 kB\nMemFree:         4000 kB\nMemAvailable:   10000 kB\n"
          "Buffers:          100 kB\nCached:          5000 kB\nActive(file):   2000 kB\n"
          "Inactive(file):  1000 kB\nSReclaimable:     300 kB\nHugePages_Total: 0\n");
  auto m = readMemInfo(t.root()).value();
  CHECK(m.total == 16000 * 1024);
  CHECK(m.usageWithoutPageCache() == 6000 * 1024);
  CHECK(m.usageWithPageCache() == 12000 * 1024);
  CHECK(m.inactive_file == 1000 * 1024);
  t.write("meminfo", "MemTotal:       16000 kB\nMemFree:  4000 kB\n");
  CHECK_FALSE(readMemInfo(t.root()));
  t.write("meminfo", "MemTotal:       16x00 kB\nMemAvailable: 1 kB\n");
  CHECK_FALSE(readMemInfo(t.root()));
}

TEST_CASE("this machine's /proc parses") {
  auto s = readProcStat("/proc");
  REQUIRE(s);
  CHECK(s->total.busy() + s->total.idle > 0);
  CHECK_FALSE(s->per_cpu.empty());
  auto m = readMemInfo("/proc");
  REQUIRE(m);
  CHECK(m->total > m->available);
}
