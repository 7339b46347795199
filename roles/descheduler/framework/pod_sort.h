// The community descheduler's eviction order (SortPodsBasedOnPriorityLowToHigh), which its
// plugins use when any of a node's pods would do: pods without a priority first, then lower
// priority, then Kubernetes' QoS from BestEffort through Burstable to Guaranteed.
#pragma once

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "framework/types.h"

namespace koord::roles::descheduler {

/// Kubernetes' QoS classes from the first to evict to the last.
constexpr int kubeQoSRank(apis::KubeQoS qos) {
  switch (qos) {
    case apis::KubeQoS::kBestEffort:
      return 0;
    case apis::KubeQoS::kBurstable:
      return 1;
    case apis::KubeQoS::kGuaranteed:
      return 2;
  }
  return 1;
}

/// The pod's controller.kubernetes.io/pod-deletion-cost or scheduling.koordinator.sh/
/// eviction-cost: an int32, and zero when unset or unparsable, as Kubernetes and Koordinator
/// both read it.
inline std::int32_t podCostAnnotation(const Pod& pod, std::string_view key) {
  auto it = pod.annotations.find(key);
  if (it == pod.annotations.end())
    return 0;
  std::int32_t v = 0;
  const auto& s = it->second;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() && end == s.data() + s.size() ? v : 0;
}

/// True when `a` is evicted before `b`. Koordinator's own QoS plays no part: a pod labelled LS
/// ranks by the Kubernetes class its resources give it, as upstream ranks it.
inline bool evictBefore(const Pod& a, const Pod& b) {
  if (a.priority.has_value() != b.priority.has_value())
    return !a.priority.has_value();
  if (a.priority && *a.priority != *b.priority)
    return *a.priority < *b.priority;
  return kubeQoSRank(a.kube_qos) < kubeQoSRank(b.kube_qos);
}

/// Stable, so pods that compare equal keep the snapshot's order.
inline void sortPodsLowToHigh(std::vector<const Pod*>& pods) {
  std::stable_sort(pods.begin(), pods.end(),
                   [](const Pod* a, const Pod* b) { return evictBefore(*a, *b); });
}
inline void sortPodsLowToHigh(std::vector<std::shared_ptr<const Pod>>& pods) {
  std::stable_sort(pods.begin(), pods.end(),
                   [](const auto& a, const auto& b) { return evictBefore(*a, *b); });
}

}  // namespace koord::roles::descheduler
