#include "framework/node_fit.h"

#include <fmt/format.h>

#include "koord/core/saturating.h"

namespace koord::roles::descheduler {

ResourceAmounts freeOn(const Snapshot& snapshot, const Node& node) {
  ResourceAmounts free = node.allocatable;
  std::int64_t pods = 0;
  for (const auto& p : snapshot.podsOn(node.name)) {
    if (podFinished(*p))
      continue;
    ++pods;
    for (const auto& [name, value] : p->requests) {
      auto& left = free[name];
      left = saturatingSub(left, value);  // requests are decoded up to int64's bound
    }
  }
  auto& pods_left = free["pods"];
  pods_left = saturatingSub(pods_left, pods);
  return free;
}

bool podFitsNode(const Snapshot& snapshot, const Pod& pod, const Node& node, std::string* why) {
  return podFitsNode(pod, node, freeOn(snapshot, node), why);
}

bool podFitsNode(const Pod& pod, const Node& node, const ResourceAmounts& free, std::string* why) {
  auto fail = [&](std::string reason) {
    if (why != nullptr)
      *why = std::move(reason);
    return false;
  };
  if (node.unschedulable)
    return fail("node is unschedulable");
  if (!node.ready)
    return fail("node is not ready");
  if (!kube::podMatchesNodeSelectorAndAffinityTerms(
          pod.node_selector, pod.node_affinity ? &*pod.node_affinity : nullptr, node.labels,
          node.name))
    return fail("pod does not match the node's labels");
  auto hard = [](const kube::Taint& t) {
    return t.effect == kube::TaintEffect::kNoSchedule || t.effect == kube::TaintEffect::kNoExecute;
  };
  if (const kube::Taint* t = kube::findMatchingUntoleratedTaint(node.taints, pod.tolerations, hard))
    return fail(fmt::format("pod does not tolerate taint {}={}:{}", t->key, t->value,
                            kube::toString(t->effect)));
  auto left = [&](std::string_view name) {
    auto it = free.find(name);
    return it == free.end() ? std::int64_t{0} : it->second;
  };
  if (left("pods") < 1)
    return fail("too many pods");
  for (const auto& [name, want] : pod.requests) {
    if (want > 0 && want > left(name))
      return fail(fmt::format("insufficient {}", name));
  }
  return true;
}

bool podFitsAnyOtherNode(const Snapshot& snapshot, const Pod& pod,
                         const std::vector<const Node*>& nodes) {
  for (const Node* n : nodes) {
    if (n->name != pod.node_name && podFitsNode(snapshot, pod, *n))
      return true;
  }
  return false;
}

}  // namespace koord::roles::descheduler
