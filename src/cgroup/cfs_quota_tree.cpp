#include "koord/cgroup/cfs_quota_tree.h"

#include <algorithm>
#include <limits>
#include <set>

#include "koord/cgroup/cgroup_reader.h"
#include "koord/cgroup/resource_executor.h"

namespace koord::cgroup {

namespace {

// The kernel's own default; a period that cannot be read is taken to be it.
constexpr std::int64_t kDefaultPeriod = 100000;

std::int64_t periodOf(const ResourceExecutor& cgroups, std::string_view dir) {
  auto p = readInt64(cgroups, dir, Resource::kCpuCfsPeriod);
  return p && *p > 0 ? *p : kDefaultPeriod;
}

std::size_t depthOf(std::string_view dir) {
  return static_cast<std::size_t>(std::count(dir.begin(), dir.end(), '/'));
}

std::string_view parentOf(std::string_view dir) {
  auto slash = dir.rfind('/');
  return slash == std::string_view::npos ? std::string_view() : dir.substr(0, slash);
}

}  // namespace

std::int64_t rescaleQuota(std::int64_t quota, std::int64_t period, std::int64_t to_period) {
  if (quota < 0)
    return kCfsQuotaUnlimited;
  if (period <= 0 || to_period <= 0 || period == to_period)
    return quota;
  constexpr auto kMax = std::numeric_limits<std::int64_t>::max();
  if (quota > kMax / to_period)
    return kMax;
  return quota * to_period / period;
}

bool quotaAtMost(std::int64_t a, std::int64_t b) {
  if (b < 0)
    return true;
  return a >= 0 && a <= b;
}

std::int64_t quotaWithin(std::int64_t quota, std::int64_t ceiling) {
  if (quota < 0 || ceiling < 0)
    return quota;
  return std::min(quota, ceiling);
}

QuotaWriteCounts writeQuotasLeveled(
    ResourceExecutor& cgroups, const std::vector<std::pair<std::string, std::int64_t>>& writes) {
  struct Step {
    std::string dir;
    std::int64_t quota;
    bool tightens;
  };
  std::vector<Step> steps;
  for (const auto& [dir, quota] : writes) {
    auto current = readInt64(cgroups, dir, Resource::kCpuCfsQuota);
    // Unreadable: let the write report why; ordering it as a tightening is the safe guess.
    bool tightens = !current || (quotaAtMost(quota, *current) && quota != *current);
    steps.push_back({dir, quota, tightens});
  }
  // Tightening children first, then loosening parents first: at no moment is a child above its
  // parent, which is all v1 checks.
  std::stable_sort(steps.begin(), steps.end(), [](const Step& a, const Step& b) {
    if (a.tightens != b.tightens)
      return a.tightens;
    return a.tightens ? depthOf(a.dir) > depthOf(b.dir) : depthOf(a.dir) < depthOf(b.dir);
  });
  QuotaWriteCounts counts;
  for (const auto& s : steps) {
    auto r = cgroups.write(s.dir, Resource::kCpuCfsQuota, std::to_string(s.quota));
    if (!r)
      counts.errors.push_back({s.dir, r.error()});
    else if (*r == WriteOutcome::kWritten)
      ++counts.written;
    else
      ++counts.unchanged;
  }
  return counts;
}

Expected<void> CfsQuotaTree::apply(std::int64_t quota, std::vector<QuotaWriteError>* child_errors) {
  const std::int64_t tier_period = periodOf(cgroups_, tier_);
  std::vector<std::string> children;
  if (auto pods = cgroups_.listChildren(tier_, Resource::kCpuCfsQuota)) {
    for (const auto& pod : *pods) {
      children.push_back(pod);
      if (auto containers = cgroups_.listChildren(pod, Resource::kCpuCfsQuota))
        children.insert(children.end(), containers->begin(), containers->end());
    }
  }
  // Children that went away (a deleted pod) take what was remembered of them along.
  std::set<std::string_view> present(children.begin(), children.end());
  std::erase_if(lowered_, [&](const auto& entry) { return !present.contains(entry.first); });

  std::vector<std::pair<std::string, std::int64_t>> writes{{tier_, quota}};
  for (const auto& child : children) {
    auto current = readInt64(cgroups_, child, Resource::kCpuCfsQuota);
    if (!current)
      continue;
    auto it = lowered_.find(child);
    if (it != lowered_.end() && it->second.written != *current)
      lowered_.erase(it);  // rewritten by its owner since: that value is what it wants now
    it = lowered_.find(child);
    const std::int64_t wanted = it != lowered_.end() ? it->second.original : *current;
    const std::int64_t target =
        quotaWithin(wanted, rescaleQuota(quota, tier_period, periodOf(cgroups_, child)));
    if (target != *current)
      writes.emplace_back(child, target);
    if (target == wanted)
      lowered_.erase(child);
    else
      lowered_[child] = Lowered{wanted, target};
  }
  Expected<void> tier_result;
  for (auto& e : writeQuotasLeveled(cgroups_, writes).errors) {
    if (e.dir == tier_)
      tier_result = std::move(e.error);
    else if (child_errors != nullptr)
      child_errors->push_back(std::move(e));
  }
  return tier_result;
}

std::optional<std::int64_t> capToParentQuota(const ResourceExecutor& cgroups, std::string_view dir,
                                             std::int64_t quota) {
  const auto parent = parentOf(dir);
  if (parent.empty())
    return quota;
  auto parent_quota = readInt64(cgroups, parent, Resource::kCpuCfsQuota);
  if (!parent_quota)
    return std::nullopt;
  return quotaWithin(
      quota, rescaleQuota(*parent_quota, periodOf(cgroups, parent), periodOf(cgroups, dir)));
}

}  // namespace koord::cgroup
