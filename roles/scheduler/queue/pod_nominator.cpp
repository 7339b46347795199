#include "queue/pod_nominator.h"

#include <algorithm>
#include <utility>

namespace koord::roles::scheduler {

void PodNominator::add(std::shared_ptr<const PodInfo> pod, const std::string& node) {
  // One entry per UID at most, whatever node it was nominated to before.
  remove(*pod);
  const std::string& target = node.empty() ? pod->nominated_node_name : node;
  if (target.empty())
    return;
  node_by_uid_[pod->uid] = target;
  auto& pods = by_node_[target];
  const bool present =
      std::any_of(pods.begin(), pods.end(), [&](const auto& p) { return p->uid == pod->uid; });
  if (!present)
    pods.push_back(std::move(pod));
}

void PodNominator::remove(const PodInfo& pod) {
  auto it = node_by_uid_.find(pod.uid);
  if (it == node_by_uid_.end())
    return;
  if (auto node = by_node_.find(it->second); node != by_node_.end()) {
    auto& pods = node->second;
    auto found =
        std::find_if(pods.begin(), pods.end(), [&](const auto& p) { return p->uid == pod.uid; });
    if (found != pods.end())
      pods.erase(found);
    if (pods.empty())
      by_node_.erase(node);
  }
  node_by_uid_.erase(it);
}

void PodNominator::update(const PodInfo& old_pod, std::shared_ptr<const PodInfo> new_pod) {
  std::string keep;
  if (old_pod.nominated_node_name.empty() && new_pod->nominated_node_name.empty()) {
    keep = nodeOf(old_pod.uid);
  }
  remove(old_pod);
  add(std::move(new_pod), keep);
}

std::vector<std::shared_ptr<const PodInfo>> PodNominator::podsForNode(std::string_view node) const {
  auto it = by_node_.find(std::string(node));
  if (it == by_node_.end())
    return {};
  return it->second;
}

std::string PodNominator::nodeOf(const std::string& uid) const {
  auto it = node_by_uid_.find(uid);
  return it == node_by_uid_.end() ? std::string() : it->second;
}

}  // namespace koord::roles::scheduler
