// Compares PodTopologySpread's PreFilter state with a table's expectation as kube-scheduler's
// tests do: constraints, matching pods per domain, and the two critical paths (ties by name).
#pragma once

#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "fixtures.h"
#include "plugins/upstream/podtopologyspread/filtering.h"

namespace pts_test {

using koord::roles::scheduler::upstream::podtopologyspread::CriticalPaths;
using koord::roles::scheduler::upstream::podtopologyspread::kPreFilterStateKey;
using koord::roles::scheduler::upstream::podtopologyspread::PreFilterState;

inline constexpr std::int32_t kMaxInt32 = std::numeric_limits<std::int32_t>::max();

struct WantPath {
  std::string value;
  std::int32_t match_num = kMaxInt32;
  friend bool operator==(const WantPath&, const WantPath&) = default;
};

struct WantConstraint {
  std::int32_t max_skew = 1;
  std::string topology_key;
  /// The pod's own selector, or for a default constraint its DefaultSelector.
  koord::kube::Selector selector;
  std::pair<WantPath, WantPath> paths;
  std::map<std::string, std::int32_t> counts;
};

/// Empty: the state of a pod without DoNotSchedule constraints.
using WantState = std::vector<WantConstraint>;

inline std::pair<WantPath, WantPath> sortedPaths(const CriticalPaths& p) {
  WantPath a{std::string(p.paths[0].value), p.paths[0].match_num};
  WantPath b{std::string(p.paths[1].value), p.paths[1].match_num};
  if (a.match_num == b.match_num && a.value > b.value)
    std::swap(a.value, b.value);
  return {a, b};
}

inline std::pair<WantPath, WantPath> sortedPaths(std::pair<WantPath, WantPath> p) {
  if (p.first.match_num == p.second.match_num && p.first.value > p.second.value)
    std::swap(p.first.value, p.second.value);
  return p;
}

inline void checkPreFilterState(const PreFilterState& got, const WantState& want) {
  if (want.empty()) {
    CHECK(got.empty());
    return;
  }
  REQUIRE_FALSE(got.empty());
  REQUIRE(got.constraints->size() == want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    INFO("constraint " << i);
    const auto& c = (*got.constraints)[i];
    CHECK(c.max_skew == want[i].max_skew);
    CHECK(c.topology_key == want[i].topology_key);
    CHECK(c.selector == want[i].selector);
    std::map<std::string, std::int32_t> counts;
    got.counts[i].forEach([&](std::string_view v, std::int32_t n) { counts[std::string(v)] = n; });
    CHECK(counts == want[i].counts);
    const auto got_paths = sortedPaths(got.critical_paths[i]);
    const auto want_paths = sortedPaths(want[i].paths);
    CHECK(got_paths.first.value == want_paths.first.value);
    CHECK(got_paths.first.match_num == want_paths.first.match_num);
    CHECK(got_paths.second.value == want_paths.second.value);
    CHECK(got_paths.second.match_num == want_paths.second.match_num);
  }
}

inline const PreFilterState& preFilterState(const CycleState& state) {
  const auto* s = state.read<PreFilterState>(kPreFilterStateKey);
  REQUIRE(s != nullptr);
  return *s;
}

}  // namespace pts_test
