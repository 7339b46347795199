#include "plugins/elasticquota/overuse_revoke.h"

#include <algorithm>
#include <set>

namespace koord::roles::scheduler::elasticquota {

bool lessImportantPod(const QuotaPod& a, const QuotaPod& b,
                      std::chrono::system_clock::time_point now) {
  if (a.priority != b.priority)
    return a.priority < b.priority;
  const auto start_a = a.start_time.value_or(now);
  const auto start_b = b.start_time.value_or(now);
  if (start_a != start_b)
    return start_a > start_b;
  if (a.namespace_ != b.namespace_)
    return a.namespace_ < b.namespace_;
  return a.name < b.name;
}

std::vector<QuotaPod> choosePodsToRevoke(const Resources& used, const Resources& runtime,
                                         std::vector<QuotaPod> assigned_pods,
                                         std::chrono::system_clock::time_point now) {
  // Pods already terminating go first: they are given back whatever is decided.
  std::sort(assigned_pods.begin(), assigned_pods.end(),
            [now](const QuotaPod& a, const QuotaPod& b) {
              if (a.terminating != b.terminating)
                return a.terminating;
              return lessImportantPod(a, b, now);
            });
  Resources left = used;
  std::vector<QuotaPod> taken;
  for (QuotaPod& pod : assigned_pods) {
    if (fitsWithin(left, runtime))
      break;
    if (pod.non_preemptible)
      continue;
    left = subtractResources(left, pod.request);
    taken.push_back(std::move(pod));
  }
  if (!fitsWithin(left, runtime))
    return taken;
  std::vector<QuotaPod> revoked;
  for (auto it = taken.rbegin(); it != taken.rend(); ++it) {
    Resources back = addResources(left, it->request);
    if (!it->terminating && fitsWithin(back, runtime))
      left = std::move(back);
    else
      revoked.push_back(std::move(*it));
  }
  return revoked;
}

bool OverUseTracker::observe(std::string_view quota, bool over,
                             std::chrono::system_clock::time_point now,
                             std::chrono::nanoseconds delay) {
  auto it = last_within_.find(quota);
  if (it == last_within_.end())
    it = last_within_.emplace(std::string(quota), now).first;
  if (!over) {
    it->second = now;
    return false;
  }
  if (now - it->second > delay) {
    it->second = now;
    return true;
  }
  return false;
}

void OverUseTracker::retain(const std::vector<std::string>& names) {
  const std::set<std::string_view> keep(names.begin(), names.end());
  std::erase_if(last_within_, [&keep](const auto& e) { return !keep.contains(e.first); });
}

}  // namespace koord::roles::scheduler::elasticquota
