#include "qosmanager/cpusuppress/cfs_quota_policy.h"

#include <optional>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

using namespace koord::roles::koordlet::qosmanager;

namespace {

struct Case {
  std::string name;
  std::int64_t capacity_milli;
  std::int64_t current;
  std::int64_t suppress_milli;
  std::optional<std::int64_t> want;
};

}  // namespace

TEST_CASE("cfsQuota policy: Koordinator's adjustByCfsQuota table on an 80-core node") {
  // 80 cores: dead band 80 x 100000 x 1% = 80000us, step 800000us.
  const std::vector<Case> cases{
      {"growth beyond the step is capped", 80000, 1000000, 20000, 1800000},
      {"growth within the step is applied", 80000, 1900000, 20000, 2000000},
      {"shrinking is applied at once", 80000, 2400000, 20000, 2000000},
      {"a move under the dead band is skipped", 80000, 1980000, 20000, std::nullopt},
      {"the minimum is never skipped", 80000, 80000, 1, 2000},
      {"from unlimited, no step", 80000, -1, 20000, 2000000},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    CHECK(nextBECFSQuota(c.current, c.suppress_milli, c.capacity_milli) == c.want);
  }
}

TEST_CASE("cfsQuota policy: quota is suppress milli x 100, at least 2000") {
  // 16 cores: dead band 16000, step 160000.
  CHECK(nextBECFSQuota(500000, 4500, 16000) == 450000);
  CHECK(nextBECFSQuota(500000, 19, 16000) == 2000);
  CHECK(nextBECFSQuota(500000, -7000, 16000) == 2000);
  // Already at the minimum, it is still written (Koordinator exempts the minimum from the
  // dead band).
  CHECK(nextBECFSQuota(2000, -7000, 16000) == 2000);
}

TEST_CASE("cfsQuota policy: the dead band is strict and uses whole cores rounded up") {
  // 16 cores: |450000 - 434000| = 16000 is not under 16000, so it is written.
  CHECK(nextBECFSQuota(434000, 4500, 16000) == 450000);
  CHECK(nextBECFSQuota(434001, 4500, 16000) == std::nullopt);
  CHECK(nextBECFSQuota(465999, 4500, 16000) == std::nullopt);
  // 7.5 cores counts as 8: a 7000us move is under the 8000us band ...
  CHECK(nextBECFSQuota(100000, 1070, 7500) == std::nullopt);
  // ... and is not under 7 whole cores' 7000us band.
  CHECK(nextBECFSQuota(100000, 1070, 7000) == 107000);
}

TEST_CASE("cfsQuota policy: growth step") {
  // 16 cores: step 160000. Wants 1000000 from 200000: 360000.
  CHECK(nextBECFSQuota(200000, 10000, 16000) == 360000);
  // Exactly one step is allowed as asked.
  CHECK(nextBECFSQuota(200000, 3600, 16000) == 360000);
  // Unlimited drops to the target, however far.
  CHECK(nextBECFSQuota(-1, 10000, 16000) == 1000000);
}

TEST_CASE("cfsQuota policy: an unlimited quota stays while the target is inside the band") {
  // 16 cores: band 16000. Target 10000 is 10001 from -1: skipped, as Koordinator does.
  CHECK(nextBECFSQuota(-1, 100, 16000) == std::nullopt);
  // The minimum is exempt.
  CHECK(nextBECFSQuota(-1, 0, 16000) == 2000);
  CHECK(nextBECFSQuota(-1, 200, 16000) == 20000);
}
