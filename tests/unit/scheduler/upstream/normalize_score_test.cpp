#include <catch2/catch.hpp>

#include "fixtures.h"
#include "plugins/upstream/normalize_score.h"

namespace koord::roles::scheduler::upstream {
namespace {

TEST_CASE("defaultNormalizeScore table", "[scheduler][upstream]") {
  struct Case {
    std::string name;
    bool reverse;
    std::vector<std::int64_t> in;
    std::vector<std::int64_t> want;
  };
  const std::vector<Case> cases = {
      {"scales to the highest", false, {1, 2, 4}, {25, 50, 100}},
      {"integer division floors", false, {2, 11, 4}, {18, 100, 36}},
      {"reversed", true, {0, 1, 2}, {100, 50, 0}},
      {"all zero stays zero", false, {0, 0}, {0, 0}},
      {"all zero reversed becomes the maximum", true, {0, 0}, {100, 100}},
      {"empty list", false, {}, {}},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    std::vector<NodeScore> scores;
    for (auto s : c.in)
      scores.push_back({"n", s});
    defaultNormalizeScore(kMaxNodeScore, c.reverse, scores);
    std::vector<std::int64_t> got;
    for (const auto& s : scores)
      got.push_back(s.score);
    CHECK(got == c.want);
  }
}

}  // namespace
}  // namespace koord::roles::scheduler::upstream
