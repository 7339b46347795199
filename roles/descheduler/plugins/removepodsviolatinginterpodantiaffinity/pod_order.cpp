// Pods by priority, then QoS, lowest first.
#include "plugins/removepodsviolatinginterpodantiaffinity/pod_order.h"

#include <algorithm>

namespace koord::roles::descheduler::interpodantiaffinity {

namespace {

// The projection keeps Koordinator's QoS rather than Kubernetes': BE stands for BestEffort, the
// reserved classes for Guaranteed, the rest for Burstable.
int qosRank(apis::QoSClass qos) {
  switch (qos) {
    case apis::QoSClass::kBE:
      return 0;
    case apis::QoSClass::kLSR:
    case apis::QoSClass::kLSE:
    case apis::QoSClass::kSystem:
      return 2;
    default:
      return 1;
  }
}

}  // namespace

void sortPodsLowToHigh(std::vector<std::shared_ptr<const Pod>>& pods) {
  std::stable_sort(pods.begin(), pods.end(), [](const auto& a, const auto& b) {
    if (a->priority.has_value() != b->priority.has_value())
      return !a->priority.has_value();
    if (a->priority && *a->priority != *b->priority)
      return *a->priority < *b->priority;
    return qosRank(a->qos) < qosRank(b->qos);
  });
}

}  // namespace koord::roles::descheduler::interpodantiaffinity
