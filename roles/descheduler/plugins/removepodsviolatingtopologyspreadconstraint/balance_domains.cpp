// Domain balancing: domains sorted by size, pods moved from above the average to below it.
#include "plugins/removepodsviolatingtopologyspreadconstraint/balance_domains.h"

#include <algorithm>
#include <cmath>

namespace koord::roles::descheduler::topologyspread {

namespace {

bool hasSelectorOrAffinity(const Pod& p) {
  return !p.node_selector.empty() || p.node_affinity.has_value();
}

// The pods taken first stand at the back: evictable before kept, free of node constraints before
// constrained ones (they land anywhere), lower priority before higher.
void orderForEviction(std::vector<const Pod*>& pods,
                      const std::function<bool(const Pod&)>& evictable) {
  std::stable_sort(pods.begin(), pods.end(), [&](const Pod* a, const Pod* b) {
    const bool ea = evictable(*a), eb = evictable(*b);
    if (ea != eb)
      return !ea;
    const bool sa = hasSelectorOrAffinity(*a), sb = hasSelectorOrAffinity(*b);
    if (sa != sb)
      return sa;
    if (a->priority.has_value() != b->priority.has_value())
      return a->priority.has_value();
    return a->priority && *a->priority > *b->priority;
  });
}

}  // namespace

bool domainsBalanced(const std::vector<Domain>& domains, std::int32_t max_skew) {
  if (domains.empty())
    return true;
  auto [lo, hi] = std::minmax_element(
      domains.begin(), domains.end(),
      [](const auto& a, const auto& b) { return a.pods.size() < b.pods.size(); });
  return static_cast<std::int64_t>(hi->pods.size() - lo->pods.size()) <= max_skew;
}

std::vector<const Pod*> balanceDomains(
    std::vector<Domain> domains, std::int32_t max_skew,
    const std::function<bool(const Pod&)>& evictable,
    const std::function<bool(const Pod&, const std::vector<std::string>& domain_values)>& fits) {
  std::vector<const Pod*> chosen;
  if (domains.empty())
    return chosen;
  double sum = 0;
  for (auto& d : domains) {
    orderForEviction(d.pods, evictable);
    sum += static_cast<double>(d.pods.size());
  }
  const double ideal_avg = sum / static_cast<double>(domains.size());
  std::stable_sort(domains.begin(), domains.end(),
                   [](const Domain& a, const Domain& b) { return a.pods.size() < b.pods.size(); });
  // Where moved pods may land: the domains below the average before anything moves.
  std::vector<std::string> below_avg;
  for (const auto& d : domains) {
    if (static_cast<double>(d.pods.size()) < ideal_avg)
      below_avg.push_back(d.value);
  }

  auto size = [&](std::size_t k) { return static_cast<double>(domains[k].pods.size()); };
  std::size_t i = 0;
  std::size_t j = domains.size() - 1;
  while (i < j) {
    // A domain at or below the average has nothing more to give.
    if (size(j) <= ideal_avg)
      --j;
    const double skew = size(j) - size(i);
    if (static_cast<std::int64_t>(skew) <= max_skew) {
      ++i;
      continue;
    }
    // At most half the excess skew, and neither domain pushed past the average.
    const double above = std::ceil(size(j) - ideal_avg);
    const double below = std::ceil(ideal_avg - size(i));
    const double half_skew = std::ceil((skew - max_skew) / 2);
    const auto move = static_cast<std::int64_t>(std::min({above, below, half_skew}));
    if (move <= 0) {
      ++i;
      continue;
    }
    auto& from = domains[j].pods;
    const auto first = from.end() - move;
    for (auto it = first; it != from.end(); ++it) {
      // A pod that would not land elsewhere still counts as moved, so the pass completes.
      if (fits(**it, below_avg))
        chosen.push_back(*it);
    }
    domains[i].pods.insert(domains[i].pods.end(), first, from.end());
    from.erase(first, from.end());
  }
  return chosen;
}

}  // namespace koord::roles::descheduler::topologyspread
