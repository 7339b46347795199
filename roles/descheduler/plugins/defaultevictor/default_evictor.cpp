// DefaultEvictor's rules: the community descheduler's evictor constraints on our Pod projection.
#include "plugins/defaultevictor/default_evictor.h"

#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "framework/node_fit.h"
#include "koord/core/log.h"
#include "plugins/defaultevictor/priority_class.h"

namespace koord::roles::descheduler::defaultevictor {

namespace {

// Upstream looks at every owner reference here, not only the controller.
bool ownedByDaemonSet(const Pod& pod) {
  for (const auto& r : pod.owner_refs) {
    if (r.kind == "DaemonSet")
      return true;
  }
  return false;
}

}  // namespace

Expected<std::optional<std::int32_t>> thresholdPriority(
    const DefaultEvictorArgs& args,
    const std::function<Expected<std::int32_t>(std::string_view)>& lookup) {
  const auto& t = args.priority_threshold;
  if (args.evict_system_critical_pods || !t || (!t->value && t->name.empty()))
    return std::optional<std::int32_t>();
  std::int32_t priority = 0;
  if (t->value) {
    priority = *t->value;
  } else {
    auto v = lookup(t->name);
    if (!v)
      return v.error();
    priority = *v;
  }
  if (priority > kSystemCriticalPriority)
    return invalidArgument(fmt::format("priorityThreshold: {} is above the system-critical {}",
                                       priority, kSystemCriticalPriority));
  return std::optional<std::int32_t>(priority);
}

DefaultEvictor::DefaultEvictor(std::shared_ptr<const DefaultEvictorArgs> args,
                               FrameworkHandle& handle, std::optional<std::int32_t> threshold)
    : args_(std::move(args)), handle_(handle), threshold_(threshold) {
  // The decoder compiled both already; a failure here cannot happen with decoded args.
  if (args_->label_selector) {
    if (auto s = kube::toSelector(*args_->label_selector); s && !s->empty())
      pod_selector_ = std::move(*s);
  }
  if (auto s = kube::Selector::parse(args_->node_selector))
    node_selector_ = std::move(*s);
}

std::vector<std::string> DefaultEvictor::refusals(const Pod& pod) const {
  std::vector<std::string> out;
  if (pod.annotations.contains(kEvictPodAnnotation))
    return out;
  if (ownedByDaemonSet(pod))
    out.emplace_back("a DaemonSet pod");
  if (pod.mirror)
    out.emplace_back("a mirror pod");
  if (pod.static_pod)
    out.emplace_back("a static pod");
  if (pod.deletion_timestamp)
    out.emplace_back("being deleted");
  if (pod.owner_refs.empty()) {
    if (!args_->evict_failed_bare_pods)
      out.emplace_back("no owner");
    else if (pod.phase != PodPhase::kFailed)
      out.emplace_back("no owner and not Failed");
  }
  if (!args_->evict_system_critical_pods && pod.priority &&
      *pod.priority >= kSystemCriticalPriority)
    out.emplace_back("system-critical priority");
  if (threshold_ && pod.priority && *pod.priority >= *threshold_)
    out.emplace_back(
        fmt::format("priority {} at or above the threshold {}", *pod.priority, *threshold_));
  if (pod.has_local_storage && !args_->evict_local_storage_pods)
    out.emplace_back("local storage (emptyDir or hostPath) and evictLocalStoragePods is off");
  if (pod.has_pvc && args_->ignore_pvc_pods)
    out.emplace_back("a PersistentVolumeClaim and ignorePvcPods is on");
  if (pod_selector_ && !pod_selector_->matches(pod.labels))
    out.emplace_back("labels outside the labelSelector");
  return out;
}

bool DefaultEvictor::filter(const Pod& pod) const {
  auto why = refusals(pod);
  if (why.empty())
    return true;
  KOORD_VLOG(4, "DefaultEvictor: pod {} may not be evicted: {}", pod.key(), fmt::join(why, "; "));
  return false;
}

bool DefaultEvictor::preEvictionFilter(const Pod& pod) const {
  if (!args_->node_fit)
    return true;
  const Snapshot& snapshot = handle_.snapshot();
  std::vector<const Node*> nodes;
  for (const auto& n : snapshot.nodes) {
    if (n->ready && node_selector_.matches(n->labels))
      nodes.push_back(n.get());
  }
  if (podFitsAnyOtherNode(snapshot, pod, nodes))
    return true;
  KOORD_VLOG(4,
             "DefaultEvictor: pod {} fits no other node (nodeSelector, affinity, taints, "
             "unschedulable or resources)",
             pod.key());
  return false;
}

bool DefaultEvictor::evict(const Pod& pod, const EvictOptions& options) {
  return handle_.podEvictor().evict(pod, options);
}

Expected<std::shared_ptr<DefaultEvictor>> makeDefaultEvictor(
    std::shared_ptr<const DefaultEvictorArgs> args, FrameworkHandle& handle) {
  auto threshold =
      thresholdPriority(*args, [&handle](std::string_view name) -> Expected<std::int32_t> {
        ClusterServices* cluster = handle.cluster();
        if (cluster == nullptr)
          return invalidArgument(fmt::format(
              "priorityThreshold.name: PriorityClass {:?}: no API server to read it from", name));
        return priorityClassValue(cluster->reader, name);
      });
  if (!threshold)
    return threshold.error();
  return std::make_shared<DefaultEvictor>(std::move(args), handle, *threshold);
}

}  // namespace koord::roles::descheduler::defaultevictor
