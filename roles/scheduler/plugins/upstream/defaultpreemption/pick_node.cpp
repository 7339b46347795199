#include "plugins/upstream/defaultpreemption/pick_node.h"

#include <algorithm>
#include <cstdint>
#include <limits>

namespace koord::roles::scheduler::upstream {

namespace {

using Clock = std::chrono::system_clock;

// Keeps the entries of `in` whose key is minimal, in order.
template <typename Key>
std::vector<std::size_t> keepMin(const std::vector<std::size_t>& in, Key key) {
  std::vector<std::size_t> out;
  out.reserve(in.size());
  for (std::size_t i : in) {
    if (!out.empty()) {
      const auto k = key(i);
      const auto best = key(out.front());
      if (k > best)
        continue;
      if (k < best)
        out.clear();
    }
    out.push_back(i);
  }
  return out;
}

std::int32_t highestPriority(const Candidate& c) {
  std::int32_t best = std::numeric_limits<std::int32_t>::min();
  for (const auto& p : c.victims)
    best = std::max(best, p->priority);
  return best;
}

// The earliest start among the victims of the highest priority (upstream's
// GetEarliestPodStartTime).
Clock::time_point earliestStartOfHighest(const Candidate& c, Clock::time_point now) {
  const std::int32_t top = highestPriority(c);
  Clock::time_point earliest = Clock::time_point::max();
  for (const auto& p : c.victims) {
    if (p->priority == top)
      earliest = std::min(earliest, podStartTime(*p, now));
  }
  return earliest;
}

}  // namespace

std::size_t pickOneNodeForPreemption(const std::vector<Candidate>& candidates,
                                     Clock::time_point now) {
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    if (candidates[i].victims.empty())
      return i;
  }
  std::vector<std::size_t> nodes(candidates.size());
  for (std::size_t i = 0; i < nodes.size(); ++i)
    nodes[i] = i;

  nodes = keepMin(nodes, [&](std::size_t i) { return candidates[i].num_pdb_violations; });
  if (nodes.size() == 1)
    return nodes.front();
  nodes = keepMin(nodes, [&](std::size_t i) { return highestPriority(candidates[i]); });
  if (nodes.size() == 1)
    return nodes.front();
  nodes = keepMin(nodes, [&](std::size_t i) {
    std::int64_t sum = 0;
    for (const auto& p : candidates[i].victims)
      sum += static_cast<std::int64_t>(p->priority) +
             static_cast<std::int64_t>(std::numeric_limits<std::int32_t>::max()) + 1;
    return sum;
  });
  if (nodes.size() == 1)
    return nodes.front();
  nodes = keepMin(nodes, [&](std::size_t i) { return candidates[i].victims.size(); });
  if (nodes.size() == 1)
    return nodes.front();

  // The latest start wins; on equal starts the earlier candidate stays.
  std::size_t chosen = nodes.front();
  Clock::time_point latest = earliestStartOfHighest(candidates[chosen], now);
  for (std::size_t k = 1; k < nodes.size(); ++k) {
    const Clock::time_point t = earliestStartOfHighest(candidates[nodes[k]], now);
    if (t > latest) {
      latest = t;
      chosen = nodes[k];
    }
  }
  return chosen;
}

}  // namespace koord::roles::scheduler::upstream
