// How both BE eviction planners take their victims: BE pods that may be evicted, in the
// planner's order, until what they release reaches the target; the rest stay in order as reserves.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "koord/core/saturating.h"

namespace koord::roles::koordlet::qosmanager {

/// `before` orders two candidate pointers; `make` turns a candidate into {victim, what it
/// releases}. Candidates need qos_label and eviction_allowed.
template <typename Candidate, typename Victim, typename Before, typename Make>
void takeVictims(std::span<const Candidate> candidates, std::int64_t target, Before before,
                 Make make, std::vector<Victim>& victims, std::vector<Victim>& reserves) {
  std::vector<const Candidate*> ranked;
  for (const Candidate& c : candidates) {
    if (c.qos_label == std::string_view("BE") && c.eviction_allowed)
      ranked.push_back(&c);
  }
  std::sort(ranked.begin(), ranked.end(), before);
  std::int64_t released = 0;
  for (const Candidate* c : ranked) {
    auto [victim, release] = make(*c);
    if (released >= target) {
      reserves.push_back(std::move(victim));
    } else {
      released = koord::saturatingAdd(released, release);
      victims.push_back(std::move(victim));
    }
  }
}

}  // namespace koord::roles::koordlet::qosmanager
