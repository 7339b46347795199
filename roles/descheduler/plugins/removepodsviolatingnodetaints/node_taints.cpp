// RemovePodsViolatingNodeTaints: node by node, the pods that no longer tolerate its taints.
#include "plugins/removepodsviolatingnodetaints/node_taints.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <utility>

#include "framework/node_fit.h"

namespace koord::roles::descheduler::nodetaints {

namespace {

bool listNames(const std::vector<std::string>& list, const kube::Taint& taint) {
  auto has = [&](const std::string& s) {
    return std::find(list.begin(), list.end(), s) != list.end();
  };
  return has(taint.key) || (!taint.value.empty() && has(taint.key + "=" + taint.value));
}

}  // namespace

bool taintCounts(const RemovePodsViolatingNodeTaintsArgs& args, const kube::Taint& taint) {
  const bool effect =
      taint.effect == kube::TaintEffect::kNoSchedule ||
      (args.include_prefer_no_schedule && taint.effect == kube::TaintEffect::kPreferNoSchedule);
  if (!effect || listNames(args.excluded_taints, taint))
    return false;
  return !args.included_taints || listNames(*args.included_taints, taint);
}

Expected<void> RemovePodsViolatingNodeTaints::deschedule(const std::vector<const Node*>& nodes) {
  auto counts = [this](const kube::Taint& t) { return taintCounts(*args_, t); };
  for (const Node* node : nodes) {
    if (node->taints.empty())
      continue;
    const bool more = eachPodUnderCaps(*node, [&](const Pod& pod) {
      if (podFinished(pod) || !pod_filter_.matches(pod))
        return;
      const kube::Taint* t =
          kube::findMatchingUntoleratedTaint(node->taints, pod.tolerations, counts);
      if (t == nullptr || !handle_.filter(pod) || !handle_.preEvictionFilter(pod))
        return;
      handle_.evict(
          pod, {std::string(name()), fmt::format("pod does not tolerate taint {}={}:{} of its node",
                                                 t->key, t->value, kube::toString(t->effect))});
    });
    if (!more)
      return {};
  }
  return {};
}

Expected<std::shared_ptr<Plugin>> makeRemovePodsViolatingNodeTaints(
    std::shared_ptr<const RemovePodsViolatingNodeTaintsArgs> args, FrameworkHandle& handle) {
  return pluginkit::makeFiltered<RemovePodsViolatingNodeTaints>(std::move(args), handle);
}

}  // namespace koord::roles::descheduler::nodetaints
