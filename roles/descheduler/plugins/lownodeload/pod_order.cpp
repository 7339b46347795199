// Koordinator's pod sorter as comparisons: priority class, priority, Kubernetes QoS, Koordinator
// QoS, deletion and eviction costs ascending; usage score descending; creation time newest first.
#include "plugins/lownodeload/pod_order.h"

#include <algorithm>
#include <string_view>

#include "framework/pod_sort.h"

namespace koord::roles::descheduler::lownodeload {

namespace {

int priorityClassRank(apis::PriorityClass c) {
  switch (c) {
    case apis::PriorityClass::kFree:
      return 1;
    case apis::PriorityClass::kBatch:
      return 2;
    case apis::PriorityClass::kMid:
      return 3;
    case apis::PriorityClass::kProd:
      return 4;
    case apis::PriorityClass::kNone:
      break;
  }
  return 5;
}

int qosRank(apis::QoSClass q) {
  switch (q) {
    case apis::QoSClass::kBE:
      return 1;
    case apis::QoSClass::kLS:
      return 2;
    case apis::QoSClass::kLSR:
      return 3;
    case apis::QoSClass::kSystem:
    case apis::QoSClass::kLSE:
      return 4;
    case apis::QoSClass::kNone:
      break;
  }
  return 5;
}

template <typename T>
int compare(const T& a, const T& b) {
  return a < b ? -1 : (b < a ? 1 : 0);
}

// A pod usage of exactly what the node is over by scores highest; larger pods score less the
// larger they are, smaller ones their fraction of it.
double usageScore(const ResourceAmounts& pod_usage, const ResourceAmounts& excess,
                  const ResourceWeights& weights) {
  double score = 0;
  std::int64_t weight_sum = 0;
  for (const auto& [name, used] : pod_usage) {
    auto w = weights.find(name);
    const std::int64_t weight = w == weights.end() ? 0 : w->second;
    auto e = excess.find(name);
    const std::int64_t capacity = e == excess.end() ? 0 : e->second;
    double s = 0;
    if (capacity != 0) {
      const double ratio = static_cast<double>(used) / static_cast<double>(capacity);
      s = ratio >= 1 ? 1 / ratio + 1 : ratio;
    }
    score += s * static_cast<double>(weight);
    weight_sum += weight;
  }
  return weight_sum == 0 ? 0 : score / static_cast<double>(weight_sum);
}

}  // namespace

apis::PriorityClass podPriorityClass(const Pod& pod) {
  const apis::PriorityClass raw = apis::podPriorityClassRaw(pod.labels, pod.priority);
  return raw != apis::PriorityClass::kNone ? raw : apis::priorityClassForQoS(pod.qos);
}

void sortForEviction(std::vector<const Pod*>& pods,
                     const std::map<std::string, ResourceAmounts, std::less<>>& usage,
                     const ResourceAmounts& excess, const ResourceWeights& weights) {
  auto less = [&](const Pod* a, const Pod* b) {
    if (int c = compare(priorityClassRank(podPriorityClass(*a)),
                        priorityClassRank(podPriorityClass(*b))))
      return c < 0;
    if (int c = compare(a->priorityOrZero(), b->priorityOrZero()))
      return c < 0;
    if (int c = compare(kubeQoSRank(a->kube_qos), kubeQoSRank(b->kube_qos)))
      return c < 0;
    if (int c = compare(qosRank(a->qos), qosRank(b->qos)))
      return c < 0;
    if (int c = compare(podCostAnnotation(*a, "controller.kubernetes.io/pod-deletion-cost"),
                        podCostAnnotation(*b, "controller.kubernetes.io/pod-deletion-cost")))
      return c < 0;
    if (int c = compare(podCostAnnotation(*a, "scheduling.koordinator.sh/eviction-cost"),
                        podCostAnnotation(*b, "scheduling.koordinator.sh/eviction-cost")))
      return c < 0;
    auto ua = usage.find(a->key());
    auto ub = usage.find(b->key());
    const bool has_a = ua != usage.end(), has_b = ub != usage.end();
    if (has_a != has_b)
      return has_a;  // pods without a metric go last
    if (has_a) {
      if (int c = compare(usageScore(ua->second, excess, weights),
                          usageScore(ub->second, excess, weights)))
        return c > 0;
    }
    const TimePoint ta = a->creation_timestamp.value_or(TimePoint{});
    const TimePoint tb = b->creation_timestamp.value_or(TimePoint{});
    return ta > tb;
  };
  std::stable_sort(pods.begin(), pods.end(), less);
}

}  // namespace koord::roles::descheduler::lownodeload
