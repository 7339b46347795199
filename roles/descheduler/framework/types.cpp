#include "framework/types.h"

namespace koord::roles::descheduler {

std::string_view phaseName(PodPhase phase) {
  switch (phase) {
    case PodPhase::kPending:
      return "Pending";
    case PodPhase::kRunning:
      return "Running";
    case PodPhase::kSucceeded:
      return "Succeeded";
    case PodPhase::kFailed:
      return "Failed";
    case PodPhase::kUnknown:
      return "Unknown";
  }
  return "Unknown";
}

ResourceAmounts amountsOf(const kube::ResourceList& list) {
  ResourceAmounts out;
  for (const auto& [name, q] : list)
    out[name] = name == "cpu" ? q.milliValue() : q.value();
  return out;
}

}  // namespace koord::roles::descheduler
