// Hint generation over every subset of NUMA zones, and the merge over every combination of the
// providers' hints.
#include "plugins/nodenumaresource/numa_hint.h"

#include <array>
#include <bit>
#include <utility>

#include "plugins/nodenumaresource/scoring.h"

namespace koord::roles::scheduler::nodenumaresource {

namespace {

int count(NumaMask m) {
  return std::popcount(m);
}

// The kubelet's IsNarrowerThan: fewer nodes, or as many with lower ids.
bool narrower(NumaMask a, NumaMask b) {
  if (count(a) == count(b))
    return a < b;
  return count(a) < count(b);
}

struct HintCollector {
  std::array<std::vector<NumaHint>, kNumaResourceCount> hints;
  std::array<bool, kNumaResourceCount> listed{};
  std::array<int, kNumaResourceCount> min_width{};
  std::array<NumaMask, kNumaResourceCount> lacking{};

  // Every resource of `names` must fit the set (totals, no lacking zone, free amounts); then
  // each of them gets the hint.
  void offer(NumaMask mask, std::int64_t score, const NumaResources& total,
             const NumaResources& free, const NumaResources& requests,
             std::span<const NumaResource> names) {
    if (names.empty())
      return;
    for (NumaResource r : names) {
      if (total.get(r) < requests.get(r))
        return;
    }
    for (NumaResource r : names) {
      if ((mask & lacking[static_cast<std::size_t>(r)]) != 0)
        return;
    }
    for (NumaResource r : names) {
      if (free.get(r) < requests.get(r))
        return;
    }
    const int width = count(mask);
    for (NumaResource r : names) {
      const auto i = static_cast<std::size_t>(r);
      min_width[i] = std::min(min_width[i], width);
      listed[i] = true;
      hints[i].push_back(NumaHint{mask, false, score});
    }
  }
};

// Calls fn(indices) for every k-subset of 0..n-1, k from 1 to n, each in lexicographic order.
template <typename Fn>
void forEachSubset(int n, Fn&& fn) {
  std::vector<int> idx;
  for (int k = 1; k <= n; ++k) {
    idx.resize(static_cast<std::size_t>(k));
    for (int i = 0; i < k; ++i)
      idx[static_cast<std::size_t>(i)] = i;
    while (true) {
      fn(std::span<const int>(idx));
      int i = k - 1;
      while (i >= 0 && idx[static_cast<std::size_t>(i)] == n - k + i)
        --i;
      if (i < 0)
        break;
      ++idx[static_cast<std::size_t>(i)];
      for (int j = i + 1; j < k; ++j)
        idx[static_cast<std::size_t>(j)] = idx[static_cast<std::size_t>(j - 1)] + 1;
    }
  }
}

using HintList = std::vector<NumaHint>;

// filterProvidersHints: one list per resource of every provider; a provider or resource
// without preference is a single preferred "any" hint, an empty list a non-preferred one.
std::vector<HintList> flatten(std::span<const ProviderHints> providers) {
  std::vector<HintList> out;
  for (const ProviderHints& p : providers) {
    if (p.empty()) {
      out.push_back({NumaHint{0, true, 0}});
      continue;
    }
    for (const ResourceHints& r : p) {
      if (!r.hints)
        out.push_back({NumaHint{0, true, 0}});
      else if (r.hints->empty())
        out.push_back({NumaHint{0, false, 0}});
      else
        out.push_back(*r.hints);
    }
  }
  return out;
}

// The AND of a combination's masks; preferred when every hint is and every mask is the same.
NumaHint mergeCombination(NumaMask all, std::span<const NumaHint* const> combination) {
  bool preferred = true;
  NumaMask mask = all;
  NumaMask first = 0;
  bool have_first = false;
  for (const NumaHint* h : combination) {
    if (h->affinity != 0) {
      if (!have_first) {
        first = h->affinity;
        have_first = true;
      } else if (h->affinity != first) {
        preferred = false;
      }
      mask &= h->affinity;
    }
    if (!h->preferred)
      preferred = false;
  }
  return NumaHint{mask, preferred, 0};
}

struct MergeOutcome {
  NumaHint best;
  bool too_many = false;
};

MergeOutcome mergeLists(NumaMask all, const std::vector<HintList>& lists, NumaExclusive exclusive,
                        std::span<const NumaNodeStatus> statuses) {
  MergeOutcome out;
  out.best = NumaHint{all, false, 0};
  std::uint64_t combinations = 1;
  for (const HintList& l : lists) {
    combinations *= l.size();
    if (combinations == 0)
      return out;
    if (combinations > kMaxHintPermutations) {
      out.too_many = true;
      return out;
    }
  }
  std::vector<std::size_t> pos(lists.size(), 0);
  std::vector<const NumaHint*> combination(lists.size(), nullptr);
  NumaHint& best = out.best;
  while (true) {
    for (std::size_t i = 0; i < lists.size(); ++i)
      combination[i] = &lists[i][pos[i]];
    NumaHint merged = mergeCombination(all, combination);
    if (count(merged.affinity) != 0) {
      if (!checkNumaExclusive(merged, exclusive, statuses))
        merged.preferred = false;
      for (const NumaHint* h : combination) {
        if (h->affinity != 0 && h->affinity == merged.affinity && h->score > merged.score)
          merged.score = h->score;
      }
      if (merged.preferred && !best.preferred) {
        best = merged;
      } else if (!merged.preferred && best.preferred) {
        // a preferred hint is never given up for a narrower non-preferred one
      } else if (!narrower(merged.affinity, best.affinity)) {
        if (count(merged.affinity) == count(best.affinity) && merged.score > best.score)
          best = merged;
      } else {
        best = merged;
      }
    }
    // Next combination, the last list fastest.
    std::size_t i = lists.size();
    while (i > 0) {
      --i;
      if (++pos[i] < lists[i].size())
        break;
      pos[i] = 0;
      if (i == 0)
        return out;
    }
    if (lists.empty())
      return out;
  }
}

}  // namespace

std::optional<ProviderHints> generateNumaHints(std::span<const NumaZone> zones,
                                               const NumaResources& requests,
                                               const ResourceAllocationScorer* scorer,
                                               NumaTopologyPolicy policy) {
  if (zones.size() > static_cast<std::size_t>(kMaxHintNumaNodes))
    return std::nullopt;
  NumaMask seen = 0;
  for (const NumaZone& z : zones) {
    if (z.node < 0 || z.node > kMaxNumaNodeId || (seen & numaBit(z.node)) != 0)
      return std::nullopt;
    seen |= numaBit(z.node);
  }
  HintCollector c;
  std::uint8_t named = 0;
  for (const NumaZone& z : zones)
    named |= z.total.present;
  for (NumaResource r : kAllNumaResources) {
    const auto i = static_cast<std::size_t>(r);
    c.min_width[i] = static_cast<int>(zones.size());
    if ((named & (1U << i)) == 0)
      continue;
    for (const NumaZone& z : zones) {
      if (!z.free.has(r) || z.free.get(r) == 0)
        c.lacking[i] |= numaBit(z.node);
    }
  }
  std::vector<NumaResource> memory_like;
  for (NumaResource r : kAllNumaResources) {
    if (requests.has(r) && isMemoryLike(r))
      memory_like.push_back(r);
  }

  forEachSubset(static_cast<int>(zones.size()), [&](std::span<const int> subset) {
    NumaMask mask = 0;
    NumaResources total;
    NumaResources free;
    for (int i : subset) {
      const NumaZone& z = zones[static_cast<std::size_t>(i)];
      mask |= numaBit(z.node);
      total.add(z.total);
      free.add(z.free);
    }
    std::int64_t score = 0;
    if (scorer != nullptr) {
      NumaResources used = total;
      used.subtractFloorZero(free);
      score = scorer->score(used, total, requests);
    }
    c.offer(mask, score, total, free, requests, memory_like);
    if (requests.has(NumaResource::kCpu)) {
      const NumaResource cpu[] = {NumaResource::kCpu};
      c.offer(mask, score, total, free, requests, cpu);
    }
  });

  ProviderHints out;
  for (NumaResource r : kAllNumaResources) {
    const auto i = static_cast<std::size_t>(r);
    if (!requests.has(r))
      continue;
    const bool zone_named = (named & (1U << i)) != 0;
    if (!c.listed[i] && !zone_named)
      continue;
    for (NumaHint& h : c.hints[i])
      h.preferred =
          count(h.affinity) == c.min_width[i] || policy == NumaTopologyPolicy::kRestricted;
    out.push_back(ResourceHints{std::string(toString(r)), std::move(c.hints[i])});
  }
  return out;
}

NumaMergeResult mergeNumaHints(NumaTopologyPolicy policy, NumaMask numa_nodes,
                               std::span<const ProviderHints> providers, NumaExclusive exclusive,
                               std::span<const NumaNodeStatus> statuses) {
  NumaMergeResult result;
  if (policy == NumaTopologyPolicy::kNone) {
    result.admit = true;
    return result;
  }
  std::vector<HintList> lists = flatten(providers);
  if (policy == NumaTopologyPolicy::kSingleNUMANode) {
    for (HintList& l : lists) {
      std::erase_if(l, [](const NumaHint& h) {
        return !h.preferred || (h.affinity != 0 && count(h.affinity) != 1);
      });
    }
  }
  MergeOutcome merged = mergeLists(numa_nodes, lists, exclusive, statuses);
  if (merged.too_many) {
    result.reason = kReasonTooManyHintCombinations;
    return result;
  }
  result.hint = merged.best;
  if (policy == NumaTopologyPolicy::kSingleNUMANode && result.hint.affinity == numa_nodes)
    result.hint = NumaHint{0, result.hint.preferred, 0};
  result.admit = policy == NumaTopologyPolicy::kBestEffort || result.hint.preferred;
  if (!result.admit)
    result.reason = kReasonNumaAffinityError;
  return result;
}

bool checkNumaExclusive(const NumaHint& hint, NumaExclusive exclusive,
                        std::span<const NumaNodeStatus> statuses) {
  if (hint.affinity == 0)
    return false;
  if (exclusive != NumaExclusive::kRequired)
    return true;
  auto statusOf = [&](int node) {
    return static_cast<std::size_t>(node) < statuses.size()
               ? statuses[static_cast<std::size_t>(node)]
               : NumaNodeStatus::kIdle;
  };
  if (count(hint.affinity) > 1) {
    for (NumaMask m = hint.affinity; m != 0; m &= m - 1) {
      if (statusOf(std::countr_zero(m)) == NumaNodeStatus::kSingle)
        return false;
    }
    return true;
  }
  return statusOf(std::countr_zero(hint.affinity)) != NumaNodeStatus::kShared;
}

std::optional<NumaTopologyPolicy> mergeNumaTopologyPolicy(NumaTopologyPolicy node_policy,
                                                          NumaTopologyPolicy pod_policy) {
  if (node_policy != NumaTopologyPolicy::kNone && pod_policy != NumaTopologyPolicy::kNone &&
      node_policy != pod_policy)
    return std::nullopt;
  return pod_policy != NumaTopologyPolicy::kNone ? pod_policy : node_policy;
}

}  // namespace koord::roles::scheduler::nodenumaresource
