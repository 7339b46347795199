#include <catch2/catch.hpp>

#include <fmt/format.h>

#include "catch_expected.h"
#include "collector_fixture.h"
#include "log_lines.h"
#include "metricsadvisor/collectors/pagecache/page_cache_collector_spec.h"

using namespace koord::roles::koordlet;
using namespace koord::roles::koordlet::testing;
using koord::cgroup::CgroupVersion;
namespace mc = koord::roles::koordlet::metriccache;
namespace ma = koord::roles::koordlet::metricsadvisor;

namespace {

const std::string kUid = "6e2b5f4e-2c6a-4f0c-9a51-2d8a1c0f3b7e";

// memory.stat as each version writes it, with anon `anon`, file `file`, unevictable 1.
std::string memoryStat(CgroupVersion v, std::uint64_t anon, std::uint64_t file) {
  if (v == CgroupVersion::kV1) {
    // The non-hierarchical keys must not be counted: only total_*.
    return fmt::format(
        "cache 999\nrss 999\ninactive_anon 999\nactive_file 999\n"
        "total_cache {}\ntotal_rss {}\ntotal_inactive_anon {}\ntotal_active_anon {}\n"
        "total_unevictable 1\ntotal_active_file {}\ntotal_inactive_file {}\n",
        file, anon, anon / 4, anon - anon / 4, file / 2, file - file / 2);
  }
  return fmt::format(
      "anon {}\nfile {}\nkernel 4096\ninactive_anon {}\nactive_anon {}\ninactive_file {}\n"
      "active_file {}\nunevictable 1\n",
      anon, file, anon / 4, anon - anon / 4, file / 2, file - file / 2);
}

void writeMemoryStat(const CollectorFixture& f, const std::string& dir, std::uint64_t anon,
                     std::uint64_t file) {
  const auto v = f.cgroups.root().version;
  f.write((v == CgroupVersion::kV1 ? "memory/" : "") + dir + "/memory.stat",
          memoryStat(v, anon, file));
}

}  // namespace

TEST_CASE("pagecache: memory.stat usage with page cache for v1 and v2", "[pagecache]") {
  const auto version = GENERATE(CgroupVersion::kV1, CgroupVersion::kV2);
  auto bytes = ma::memoryUsageWithPageCache(memoryStat(version, 4000, 1000), version);
  REQUIRE(bytes);
  CHECK(*bytes == 5001);
}

TEST_CASE("pagecache: a memory.stat without a needed key or with a bad line is an error",
          "[pagecache]") {
  auto missing = ma::memoryUsageWithPageCache(
      "total_inactive_anon 1\ntotal_active_anon 2\n"
      "total_unevictable 0\ntotal_active_file 3\n",
      CgroupVersion::kV1);
  REQUIRE_FALSE(missing);
  CHECK_THAT(missing.error().message, Catch::Contains("total_inactive_file"));
  auto garbled = ma::memoryUsageWithPageCache(
      "inactive_anon 1\nactive_anon x\nunevictable 0\nactive_file 3\ninactive_file 4\n",
      CgroupVersion::kV2);
  REQUIRE_FALSE(garbled);
  CHECK_THAT(garbled.error().message, Catch::Contains("active_anon x"));
  auto repeated = ma::memoryUsageWithPageCache(
      "inactive_anon 1\ninactive_anon 1\nactive_anon 1\nunevictable 0\nactive_file 3\n"
      "inactive_file 4\n",
      CgroupVersion::kV2);
  CHECK_FALSE(repeated);
}

TEST_CASE("pagecache: pod and container values into the cache; a pod that leaves is forgotten",
          "[pagecache]") {
  const auto version = GENERATE(CgroupVersion::kV1, CgroupVersion::kV2);
  CollectorFixture f(version, ma::pageCacheCollector());
  auto a = collectorPod(kUid, 'a');
  auto b = collectorPod("0123456789abcdef0123456789abcdef", 'b');
  writeMemoryStat(f, podDirOf(a), 8 << 20, 2 << 20);
  writeMemoryStat(f, containerDirOf(a), 6 << 20, 1 << 20);
  writeMemoryStat(f, podDirOf(b), 1 << 20, 0);
  writeMemoryStat(f, containerDirOf(b), 1 << 20, 0);
  f.round({a, b});
  CHECK(f.cache.last(mc::MetricKind::kPodMemoryWithPageCacheUsage, kUid)->value == (10 << 20) + 1);
  CHECK(f.cache.last(mc::MetricKind::kContainerMemoryWithPageCacheUsage, std::string(64, 'a'))
            ->value == (7 << 20) + 1);
  CHECK(f.cache.last(mc::MetricKind::kPodMemoryWithPageCacheUsage, b.uid)->value == (1 << 20) + 1);

  f.round({b});
  CHECK_FALSE(f.cache.last(mc::MetricKind::kPodMemoryWithPageCacheUsage, kUid));
  CHECK_FALSE(
      f.cache.last(mc::MetricKind::kContainerMemoryWithPageCacheUsage, std::string(64, 'a')));
  CHECK(f.cache.last(mc::MetricKind::kPodMemoryWithPageCacheUsage, b.uid));
}

TEST_CASE("pagecache: a finished pod without a cgroup is quiet, a running one says why once",
          "[pagecache]") {
  CollectorFixture f(CgroupVersion::kV1, ma::pageCacheCollector());
  auto done = collectorPod(kUid, 'a');
  done.phase = PodPhase::kSucceeded;
  auto running = collectorPod("0123456789abcdef0123456789abcdef", 'b');
  koord::testing::LogLines log;
  f.round({done, running});
  f.round({done, running});
  CHECK(log.count("page cache collector: ns/pod-0123") == 1);
  CHECK(log.count("page cache collector: ns/pod-6e2b") == 0);
}
