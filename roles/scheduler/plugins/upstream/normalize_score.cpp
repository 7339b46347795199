#include "plugins/upstream/normalize_score.h"

#include <algorithm>

namespace koord::roles::scheduler::upstream {

void defaultNormalizeScore(std::int64_t max_priority, bool reverse,
                           std::vector<NodeScore>& scores) {
  std::int64_t highest = 0;
  for (const auto& s : scores)
    highest = std::max(highest, s.score);
  if (highest == 0) {
    if (reverse) {
      for (auto& s : scores)
        s.score = max_priority;
    }
    return;
  }
  for (auto& s : scores) {
    const std::int64_t scaled = max_priority * s.score / highest;
    s.score = reverse ? max_priority - scaled : scaled;
  }
}

}  // namespace koord::roles::scheduler::upstream
