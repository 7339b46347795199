// RemoveDuplicates: duplicates found node by node, then each owner's extras evicted down to the
// upper average over its feasible nodes.
#include "plugins/removeduplicates/duplicates.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>

#include "framework/node_fit.h"
#include "koord/kube/scheduling_match.h"

namespace koord::roles::descheduler::removeduplicates {

namespace {

struct OwnerKey {
  std::string namespace_, kind, name, images;
  friend auto operator<=>(const OwnerKey&, const OwnerKey&) = default;
};

// Duplicates of one owner by node, in the order the nodes were given; the first pod of each
// kind on a node is not among them.
using NodeDuplicates = std::vector<std::pair<const Node*, std::vector<const Pod*>>>;

bool sameSchedulingTerms(const Pod& a, const Pod& b) {
  // Tolerations compare as sets, as upstream sorts them before comparing.
  auto sorted = [](std::vector<kube::Toleration> t) {
    std::sort(t.begin(), t.end(), [](const auto& x, const auto& y) {
      return std::tie(x.key, x.op, x.value, x.effect, x.toleration_seconds) <
             std::tie(y.key, y.op, y.value, y.effect, y.toleration_seconds);
    });
    return t;
  };
  auto required = [](const Pod& p) {
    return p.node_affinity ? p.node_affinity->required : std::nullopt;
  };
  return a.node_selector == b.node_selector && required(a) == required(b) &&
         sorted(a.tolerations) == sorted(b.tolerations);
}

bool excludedOwner(const Pod& pod, const std::vector<std::string>& kinds) {
  return std::any_of(pod.owner_refs.begin(), pod.owner_refs.end(), [&](const OwnerRef& r) {
    return std::find(kinds.begin(), kinds.end(), r.kind) != kinds.end();
  });
}

}  // namespace

std::size_t feasibleNodeCount(const std::vector<const Pod*>& pods,
                              const std::vector<const Node*>& nodes) {
  std::vector<const Pod*> distinct;
  for (const Pod* p : pods) {
    if (std::none_of(distinct.begin(), distinct.end(),
                     [&](const Pod* d) { return sameSchedulingTerms(*p, *d); }))
      distinct.push_back(p);
  }
  std::set<std::string> targets;
  for (const Pod* p : distinct) {
    std::vector<std::string> matching;
    for (const Node* n : nodes) {
      if (kube::findUntoleratedTaint(n->taints, p->tolerations) != nullptr)
        continue;
      if (!kube::podMatchesNodeSelectorAndAffinityTerms(
              p->node_selector, p->node_affinity ? &*p->node_affinity : nullptr, n->labels,
              n->name))
        continue;
      matching.push_back(n->name);
    }
    if (matching.size() > 1)
      targets.insert(matching.begin(), matching.end());
  }
  return targets.size();
}

Expected<void> RemoveDuplicates::balance(const std::vector<const Node*>& nodes) {
  const Snapshot& snap = handle_.snapshot();
  std::map<OwnerKey, int> occurrences;
  std::map<OwnerKey, NodeDuplicates> duplicates;
  for (const Node* node : nodes) {
    // A pod is a duplicate of an earlier one on the node when both have exactly the same
    // owner/image pairs.
    std::set<std::vector<std::string>> seen;
    for (const auto& pod : snap.podsOn(node->name)) {
      if (podFinished(*pod) || !pod_filter_.matches(*pod) || pod->owner_refs.empty() ||
          pod->container_images.empty() || excludedOwner(*pod, args_->exclude_owner_kinds))
        continue;
      if (!handle_.filter(*pod) || !handle_.preEvictionFilter(*pod))
        continue;
      std::vector<std::string> images = pod->container_images;
      std::sort(images.begin(), images.end());
      std::string images_key;
      for (const auto& i : images)
        images_key += (images_key.empty() ? "" : "#") + i;
      std::vector<std::string> keys;
      for (const OwnerRef& r : pod->owner_refs) {
        ++occurrences[{pod->namespace_, r.kind, r.name, images_key}];
        for (const auto& i : images)
          keys.push_back(pod->namespace_ + "/" + r.kind + "/" + r.name + "/" + i);
      }
      std::sort(keys.begin(), keys.end());
      if (seen.insert(keys).second)
        continue;
      for (const OwnerRef& r : pod->owner_refs) {
        NodeDuplicates& d = duplicates[{pod->namespace_, r.kind, r.name, images_key}];
        if (d.empty() || d.back().first != node)
          d.push_back({node, {}});
        d.back().second.push_back(pod.get());
      }
    }
  }

  std::set<const Pod*> evicted;
  for (const auto& [owner, by_node] : duplicates) {
    std::vector<const Pod*> pods;
    for (const auto& [node, list] : by_node)
      pods.insert(pods.end(), list.begin(), list.end());
    const std::size_t feasible = feasibleNodeCount(pods, nodes);
    if (feasible < 2)
      continue;
    const auto upper_avg = static_cast<std::size_t>(
        std::ceil(static_cast<double>(occurrences[owner]) / static_cast<double>(feasible)));
    for (const auto& [node, list] : by_node) {
      // `list` leaves out the node's first pod of the owner, hence the + 1.
      if (list.size() + 1 <= upper_avg)
        continue;
      for (std::size_t k = upper_avg - 1; k < list.size(); ++k) {
        if (handle_.totalLimitReached())
          return {};
        if (handle_.nodeLimitReached(node->name))
          break;
        if (evicted.count(list[k]) != 0)
          continue;
        const std::string reason = fmt::format(
            "{} pods of {} {}/{} on the node, more than {} of {} feasible nodes", list.size() + 1,
            owner.kind, owner.namespace_, owner.name, upper_avg, feasible);
        if (handle_.evict(*list[k], {std::string(name()), reason}))
          evicted.insert(list[k]);
      }
    }
  }
  return {};
}

Expected<std::shared_ptr<Plugin>> makeRemoveDuplicates(
    std::shared_ptr<const RemoveDuplicatesArgs> args, FrameworkHandle& handle) {
  return pluginkit::makeFiltered<RemoveDuplicates>(std::move(args), handle);
}

}  // namespace koord::roles::descheduler::removeduplicates
