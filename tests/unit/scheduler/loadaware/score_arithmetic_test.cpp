// Score's per-resource share is computed without a 64-bit division on the common path; it must
// give what integer arithmetic gives for every value, large allocatables included.
#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include <catch2/catch.hpp>

#include "plugins/loadaware/load_aware.h"

using namespace koord::roles::scheduler::loadaware;

namespace {

std::int64_t referenceScore(std::int64_t dominant, const ResourceVector& weights,
                            const ResourceVector& used, const ResourceVector& allocatable) {
  std::int64_t sum = 0, weight_sum = dominant, least = dominant != 0 ? 100 : 0;
  for (std::size_t i = 0; i < weights.size(); ++i) {
    std::int64_t s = 0;
    if (allocatable[i] > 0 && used[i] <= allocatable[i])
      s = (allocatable[i] - used[i]) * 100 / allocatable[i];
    sum += s * weights[i];
    weight_sum += weights[i];
    least = std::min(least, s);
  }
  sum += least * dominant;
  return weight_sum <= 0 ? 0 : sum / weight_sum;
}

}  // namespace

TEST_CASE("loadaware score arithmetic matches integer division", "[scheduler][loadaware]") {
  std::mt19937_64 rng(11);
  const std::vector<std::int64_t> capacities = {1,
                                                3,
                                                7,
                                                100,
                                                4000,
                                                96000,
                                                34359738368,       // 32Gi
                                                549755813888,      // 512Gi
                                                4503599627370495,  // just under 2^52
                                                4503599627370496,  // 2^52
                                                4503599627370497,
                                                90071992547409919};  // beyond: integer path
  for (std::int64_t c : capacities) {
    for (int k = 0; k < 4000; ++k) {
      std::int64_t u = 0;
      switch (k % 4) {
        case 0:
          u = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(c + 1));
          break;
        case 1:  // just around exact multiples of c / 100
          u = c - (c / 100) * (k % 101) + static_cast<std::int64_t>(rng() % 3) - 1;
          break;
        case 2:
          u = c + 1 - static_cast<std::int64_t>(rng() % 2);
          break;
        default:
          u = -static_cast<std::int64_t>(rng() % 1000);
          break;
      }
      const ResourceVector weights{1, 2};
      const ResourceVector used{u, c / 2};
      const ResourceVector allocatable{c, c};
      CAPTURE(c, u);
      CHECK(loadAwareScore(0, weights, used, allocatable) ==
            referenceScore(0, weights, used, allocatable));
      CHECK(loadAwareScore(3, weights, used, allocatable) ==
            referenceScore(3, weights, used, allocatable));
    }
  }
}
