// cgroup writes the kernel refuses, on this machine's real cgroup v1 cpu hierarchy: a parent's
// CFS quota below its child's is EINVAL. The refusal is logged once, counted by file and errno,
// and the same value is retried only after a backoff. The cgroups live under a koord-test-<pid>
// directory reached through a temp root of symlinks, so a kubelet's kubepods is never touched.
#include <unistd.h>

#include <catch2/catch.hpp>

#include "catch_expected.h"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "koord/cgroup/cfs_quota_tree.h"
#include "koord/cgroup/cgroup_reader.h"
#include "koord/cgroup/resource_executor.h"
#include "koord/core/clock.h"
#include "koord/core/metrics.h"
#include "log_lines.h"
#include "temp_tree.h"

using namespace koord::cgroup;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

double writeErrors(const std::string& file, const std::string& err) {
  std::string text = koord::metrics::Registry::global().render();
  std::string series =
      "koordlet_cgroup_write_errors_total{file=\"" + file + "\",errno=\"" + err + "\"} ";
  auto at = text.find(series);
  return at == std::string::npos ? 0.0 : std::stod(text.substr(at + series.size()));
}

struct RealCpuCgroups {
  fs::path base;
  koord::testing::TempTree root{"koord-realcg-write"};
  bool usable = false;

  RealCpuCgroups() {
    const fs::path cpu = "/sys/fs/cgroup/cpu";
    if (::geteuid() != 0 || !fs::exists(cpu / "cpu.cfs_quota_us"))
      return;
    base = fs::canonical(cpu) / ("koord-test-write-" + std::to_string(::getpid()));
    fs::create_directories(base / "kubepods/besteffort/pod1");
    fs::create_symlink(base, root.path("cpu"));
    usable = true;
  }
  ~RealCpuCgroups() {
    if (!usable)
      return;
    for (const char* d : {"kubepods/besteffort/pod1/c1", "kubepods/besteffort/pod1",
                          "kubepods/besteffort", "kubepods", ""})
      ::rmdir((base / d).c_str());
  }
  void set(const std::string& dir, const std::string& file, const std::string& value) const {
    std::ofstream(base / dir / file) << value;
  }
};

}  // namespace

TEST_CASE("a refused cgroup write is logged once, counted, and retried with backoff",
          "[realcgroup]") {
  RealCpuCgroups cg;
  if (!cg.usable) {
    WARN("needs root and a cgroup v1 cpu hierarchy; skipped");
    return;
  }
  koord::FakeClock clock;
  ResourceExecutor e({cg.root.root(), CgroupVersion::kV1, CgroupDriver::kCgroupfs}, clock);
  const std::string tier = "kubepods/besteffort";
  REQUIRE(e.write(tier + "/pod1", Resource::kCpuCfsQuota, "200000"));
  const double before = writeErrors("cpu.cfs_quota_us", "EINVAL");
  koord::testing::LogLines log;

  // The kernel refuses a parent quota below a child's.
  auto first = e.write(tier, Resource::kCpuCfsQuota, "28300");
  REQUIRE_FALSE(first);
  CHECK(isKernelRefusal(first.error()));
  CHECK(first.error().code.value() == EINVAL);
  CHECK(writeErrors("cpu.cfs_quota_us", "EINVAL") == before + 1);
  CHECK(log.count("cpu.cfs_quota_us = \"28300\" refused") == 1);

  // Every round before the backoff: the same error, no new attempt, no new line.
  for (int round = 0; round < 5; ++round) {
    auto again = e.write(tier, Resource::kCpuCfsQuota, "28300");
    REQUIRE_FALSE(again);
    CHECK(isKernelRefusal(again.error()));
    CHECK_THAT(again.error().message, Catch::Contains("retried with backoff"));
  }
  CHECK(writeErrors("cpu.cfs_quota_us", "EINVAL") == before + 1);
  // After it, one more attempt (counted, not logged); the next delay is twice as long.
  clock.advance(1100ms);
  CHECK_FALSE(e.write(tier, Resource::kCpuCfsQuota, "28300"));
  CHECK(writeErrors("cpu.cfs_quota_us", "EINVAL") == before + 2);
  clock.advance(1100ms);
  CHECK_FALSE(e.write(tier, Resource::kCpuCfsQuota, "28300"));
  CHECK(writeErrors("cpu.cfs_quota_us", "EINVAL") == before + 2);
  // A different value is tried at once.
  CHECK_FALSE(e.write(tier, Resource::kCpuCfsQuota, "28400"));
  CHECK(writeErrors("cpu.cfs_quota_us", "EINVAL") == before + 3);
  CHECK(log.problems() == 1);

  // Once the child is lowered the parent's write is taken, and the run of refusals ends.
  cg.set(tier + "/pod1", "cpu.cfs_quota_us", "20000");
  clock.advance(10s);
  CHECK(e.write(tier, Resource::kCpuCfsQuota, "28300"));
  CHECK(log.count("taken after 3 refused write(s)") == 1);
}

TEST_CASE("the besteffort tier's quota goes below its pods' in the order v1 accepts",
          "[realcgroup]") {
  RealCpuCgroups cg;
  if (!cg.usable) {
    WARN("needs root and a cgroup v1 cpu hierarchy; skipped");
    return;
  }
  const std::string tier = "kubepods/besteffort";
  const std::string pod = tier + "/pod1";
  std::filesystem::create_directories(cg.base / pod / "c1");
  ResourceExecutor e({cg.root.root(), CgroupVersion::kV1, CgroupDriver::kCgroupfs});
  // As the BatchResource reconciler leaves a BE pod with a batch-cpu limit of 2 cores.
  REQUIRE(e.write(pod, Resource::kCpuCfsQuota, "200000"));
  REQUIRE(e.write(pod + "/c1", Resource::kCpuCfsQuota, "100000"));
  auto quota = [&](const std::string& dir) { return readInt64(e, dir, Resource::kCpuCfsQuota); };

  // A plain write is refused: this is what suppression did every second. (Another value than
  // the tree's below: the executor would not try a refused value again before its backoff.)
  CHECK_FALSE(e.write(tier, Resource::kCpuCfsQuota, "28000"));
  CHECK(quota(tier).value() == -1);

  CfsQuotaTree tree(e, tier);
  std::vector<QuotaWriteError> child_errors;
  REQUIRE(tree.apply(28300, &child_errors));
  CHECK(child_errors.empty());
  CHECK(quota(tier).value() == 28300);
  CHECK(quota(pod).value() == 28300);
  CHECK(quota(pod + "/c1").value() == 28300);
  CHECK(tree.lowered() == 2);
  // A writer that caps by the parent asks for nothing the kernel refuses.
  CHECK(capToParentQuota(e, pod, 200000) == std::optional<std::int64_t>(28300));
  CHECK(capToParentQuota(e, pod, -1) == std::optional<std::int64_t>(-1));

  // Raised: the tier first, then the children back towards what they had.
  REQUIRE(tree.apply(150000));
  CHECK(quota(tier).value() == 150000);
  CHECK(quota(pod).value() == 150000);
  CHECK(quota(pod + "/c1").value() == 100000);
  CHECK(tree.lowered() == 1);
  REQUIRE(tree.apply(-1));
  CHECK(quota(tier).value() == -1);
  CHECK(quota(pod).value() == 200000);
  CHECK(quota(pod + "/c1").value() == 100000);
  CHECK(tree.lowered() == 0);
  ::rmdir((cg.base / pod / "c1").c_str());
}
