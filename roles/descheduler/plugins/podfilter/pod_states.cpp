// inStates: phase first, then the regular containers' waiting reasons.
#include "plugins/podfilter/pod_states.h"

#include <algorithm>

namespace koord::roles::descheduler::podfilter {

namespace {

bool contains(const std::vector<std::string>& list, std::string_view s) {
  return std::find(list.begin(), list.end(), s) != list.end();
}

}  // namespace

bool inStates(const Pod& pod, const std::vector<std::string>& states) {
  if (states.empty() || contains(states, phaseName(pod.phase)))
    return true;
  for (const auto& c : pod.container_statuses) {
    if (!c.init && !c.waiting_reason.empty() && contains(states, c.waiting_reason))
      return true;
  }
  return false;
}

}  // namespace koord::roles::descheduler::podfilter
