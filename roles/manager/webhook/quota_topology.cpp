#include "webhook/quota_topology.h"

#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace koord::manager::webhook {

namespace {

using kube::Expected;
using kube::makeKubeError;
using kube::ResourceList;

constexpr std::string_view kRoot = apis::kRootQuotaName;

// The tree is walked upwards at most this far: a deeper chain is no tree anyone built, and the
// bound keeps a corrupt informer view from looping.
constexpr std::size_t kMaxDepth = 1024;

std::vector<std::string> negativeNames(const ResourceList& list) {
  std::vector<std::string> out;
  for (const auto& [name, q] : list) {
    if (q.sign() < 0)
      out.push_back(name);
  }
  return out;
}

ResourceList add(ResourceList a, const ResourceList& b) {
  for (const auto& [name, q] : b) {
    auto it = a.find(name);
    if (it == a.end())
      a.emplace(name, q);
    else
      it->second = it->second + q;
  }
  return a;
}

ResourceList maxOf(ResourceList a, const ResourceList& b) {
  for (const auto& [name, q] : b) {
    auto it = a.find(name);
    if (it == a.end())
      a.emplace(name, q);
    else if (it->second < q)
      it->second = q;
  }
  return a;
}

// Every quantity of `a` is at most what `b` holds of it (absent in `b` counts as zero).
bool fitsWithin(const ResourceList& a, const ResourceList& b) {
  for (const auto& [name, q] : a) {
    auto it = b.find(name);
    const kube::Quantity zero;
    if (q > (it == b.end() ? zero : it->second))
      return false;
  }
  return true;
}

bool sameKeys(const ResourceList& a, const ResourceList& b) {
  if (a.size() != b.size())
    return false;
  for (auto ia = a.begin(), ib = b.begin(); ia != a.end(); ++ia, ++ib) {
    if (ia->first != ib->first)
      return false;
  }
  return true;
}

std::string listText(const ResourceList& list) {
  return apis::quotaResourceAnnotationValue(list);
}

std::string labelOf(const kube::Labels& labels, std::string_view key) {
  auto it = labels.find(key);
  return it == labels.end() ? std::string() : it->second;
}

// What an update must change for the tree to judge it again: the placement labels, the
// namespaces annotation and the spec (Koordinator compares the same fields).
bool treeFieldsEqual(const apis::ElasticQuota& a, const apis::ElasticQuota& b) {
  for (std::string_view key :
       {apis::kLabelQuotaParent, apis::kLabelQuotaIsParent, apis::kLabelQuotaTreeID}) {
    if (labelOf(a.labels, key) != labelOf(b.labels, key))
      return false;
  }
  return labelOf(a.annotations, apis::kAnnotationQuotaNamespaces) ==
             labelOf(b.annotations, apis::kAnnotationQuotaNamespaces) &&
         a.min == b.min && a.max == b.max;
}

Expected<void> validateSelf(const apis::ElasticQuota& quota) {
  if (auto names = negativeNames(quota.max); !names.empty())
    return makeKubeError(
        fmt::format("quota {}: spec.max is negative in {}", quota.name, fmt::join(names, ", ")));
  if (auto names = negativeNames(quota.min); !names.empty())
    return makeKubeError(
        fmt::format("quota {}: spec.min is negative in {}", quota.name, fmt::join(names, ", ")));
  auto weight = apis::quotaResourceAnnotation(quota.annotations, apis::kAnnotationSharedWeight);
  if (!weight)
    return makeKubeError(fmt::format("quota {}: {}", quota.name, weight.error().message));
  if (auto names = negativeNames(*weight); !names.empty())
    return makeKubeError(fmt::format("quota {}: annotation {} is negative in {}", quota.name,
                                     apis::kAnnotationSharedWeight, fmt::join(names, ", ")));
  for (const auto& [name, min] : quota.min) {
    auto it = quota.max.find(name);
    if (it == quota.max.end() || it->second < min)
      return makeKubeError(fmt::format("quota {}: spec.min {} exceeds spec.max {} in {}",
                                       quota.name, listText(quota.min), listText(quota.max), name));
  }
  return {};
}

}  // namespace

Expected<QuotaNode> quotaNodeOf(const apis::ElasticQuota& quota) {
  QuotaNode n;
  n.namespace_ = quota.namespace_;
  n.name = quota.name;
  n.parent = quota.parent_name;
  n.is_parent = quota.is_parent;
  n.is_tree_root = quota.is_root;
  n.allow_force_update = quota.allow_force_update;
  n.tree_id = quota.tree_id;
  n.min = quota.min;
  n.max = quota.max;
  auto namespaces = apis::quotaNamespaces(quota.annotations);
  if (!namespaces)
    return makeKubeError(fmt::format("quota {}: {}", quota.name, namespaces.error().message));
  n.namespaces = std::move(*namespaces);
  auto guaranteed = apis::quotaResourceAnnotation(quota.annotations, apis::kAnnotationGuaranteed);
  if (!guaranteed)
    return makeKubeError(fmt::format("quota {}: {}", quota.name, guaranteed.error().message));
  n.guaranteed = std::move(*guaranteed);
  return n;
}

namespace {

// The informer keeps whatever the API server holds, even what the webhook would refuse now.
QuotaNode observedNode(const apis::ElasticQuota& quota) {
  auto n = quotaNodeOf(quota);
  QuotaNode out;
  if (n) {
    out = std::move(*n);
  } else {
    out.namespace_ = quota.namespace_;
    out.name = quota.name;
    out.parent = quota.parent_name;
    out.is_parent = quota.is_parent;
    out.is_tree_root = quota.is_root;
    out.allow_force_update = quota.allow_force_update;
    out.tree_id = quota.tree_id;
    out.min = quota.min;
    out.max = quota.max;
    out.namespaces = quota.namespaces;
  }
  out.observed = true;
  return out;
}

}  // namespace

QuotaTopology::QuotaTopology(QuotaTopologyOptions options) : options_(std::move(options)) {}

void QuotaTopology::putLocked(QuotaNode node) {
  if (auto it = nodes_.find(node.name); it != nodes_.end())
    eraseLocked(node.name);
  children_[node.parent].insert(node.name);
  children_.try_emplace(node.name);
  for (const auto& ns : node.namespaces)
    namespace_to_quota_[ns] = node.name;
  std::string name = node.name;
  nodes_.insert_or_assign(std::move(name), std::move(node));
}

void QuotaTopology::eraseLocked(const std::string& name) {
  auto it = nodes_.find(name);
  if (it == nodes_.end())
    return;
  if (auto p = children_.find(it->second.parent); p != children_.end())
    p->second.erase(name);
  for (const auto& ns : it->second.namespaces) {
    if (auto m = namespace_to_quota_.find(ns); m != namespace_to_quota_.end() && m->second == name)
      namespace_to_quota_.erase(m);
  }
  // The children set stays while children remain: they still name this quota as their parent.
  if (auto c = children_.find(name); c != children_.end() && c->second.empty())
    children_.erase(c);
  nodes_.erase(it);
}

void QuotaTopology::onAdd(const apis::ElasticQuota& quota) {
  Lock lock(mu_);
  putLocked(observedNode(quota));
}

void QuotaTopology::onUpdate(const apis::ElasticQuota&, const apis::ElasticQuota& quota) {
  Lock lock(mu_);
  putLocked(observedNode(quota));
}

void QuotaTopology::onDelete(const apis::ElasticQuota& quota) {
  Lock lock(mu_);
  eraseLocked(quota.name);
}

Expected<void> QuotaTopology::validateAdd(const apis::ElasticQuota& quota, bool commit) {
  auto node = quotaNodeOf(quota);
  if (!node)
    return node.error();
  Lock lock(mu_);
  if (auto it = nodes_.find(quota.name); it != nodes_.end() && it->second.observed)
    return makeKubeError(fmt::format("quota {} already exists", quota.name));
  for (const auto& ns : node->namespaces) {
    auto m = namespace_to_quota_.find(ns);
    if (m != namespace_to_quota_.end() && m->second != quota.name)
      return makeKubeError(fmt::format("quota {}: namespace {} is already bound to quota {}",
                                       quota.name, ns, m->second));
  }
  if (auto ok = validateSelf(quota); !ok)
    return ok;
  if (auto ok = checkTopologyLocked(nullptr, *node); !ok)
    return ok;
  if (commit)
    putLocked(std::move(*node));
  return {};
}

Expected<void> QuotaTopology::validateUpdate(const apis::ElasticQuota& old_quota,
                                             const apis::ElasticQuota& quota, bool commit) {
  if (treeFieldsEqual(old_quota, quota))
    return {};
  if (quota.name == apis::kSystemQuotaName || quota.name == kRoot)
    return makeKubeError(
        fmt::format("quota {} is Koordinator's own and cannot be changed", quota.name));
  auto node = quotaNodeOf(quota);
  if (!node)
    return node.error();
  Lock lock(mu_);
  for (const auto& ns : node->namespaces) {
    auto m = namespace_to_quota_.find(ns);
    if (m != namespace_to_quota_.end() && m->second != quota.name)
      return makeKubeError(fmt::format("quota {}: namespace {} is already bound to quota {}",
                                       quota.name, ns, m->second));
  }
  auto old = nodes_.find(quota.name);
  if (old == nodes_.end())
    return makeKubeError(
        fmt::format("quota {} is not in the quota tree yet; try again shortly", quota.name));
  if (auto ok = validateSelf(quota); !ok)
    return ok;
  if (auto ok = checkTopologyLocked(&old->second, *node); !ok)
    return ok;
  if (commit) {
    node->observed = old->second.observed;
    putLocked(std::move(*node));
  }
  return {};
}

Expected<void> QuotaTopology::validateDelete(const apis::ElasticQuota& quota, bool commit) {
  if (quota.name == apis::kSystemQuotaName || quota.name == kRoot ||
      quota.name == apis::kDefaultQuotaName)
    return makeKubeError(
        fmt::format("quota {} is Koordinator's own and cannot be deleted", quota.name));
  Lock lock(mu_);
  // Unlike Koordinator, a quota the tree never held (the informer could not read it) may go:
  // nothing in the tree hangs below it.
  if (nodes_.find(quota.name) == nodes_.end())
    return {};
  if (auto c = children_.find(quota.name); c != children_.end() && !c->second.empty())
    return makeKubeError(fmt::format("quota {} still has child quotas ({})", quota.name,
                                     fmt::join(c->second, ", ")));
  if (options_.has_labelled_pods && options_.has_labelled_pods(quota.name))
    return makeKubeError(fmt::format("quota {} still has pods labelled {}={}", quota.name,
                                     apis::kLabelQuotaName, quota.name));
  if (commit)
    eraseLocked(quota.name);
  return {};
}

Expected<void> QuotaTopology::checkTopologyLocked(const QuotaNode* old_node,
                                                  const QuotaNode& node) const {
  if (node.name == kRoot)
    return {};
  if (old_node != nullptr) {
    if (auto ok = checkIsParentChangeLocked(*old_node, node); !ok)
      return ok;
  }
  if (auto ok = checkTreeIdLocked(old_node, node); !ok)
    return ok;
  if (auto ok = checkNoCycleLocked(node); !ok)
    return ok;
  if (node.parent == kRoot && !node.is_parent)
    return {};
  if (node.parent != kRoot) {
    auto parent = nodes_.find(node.parent);
    if (parent == nodes_.end())
      return makeKubeError(
          fmt::format("quota {}: parent quota {} does not exist", node.name, node.parent));
    if (!parent->second.is_parent)
      return makeKubeError(fmt::format("quota {}: parent quota {} is not labelled {}=true",
                                       node.name, node.parent, apis::kLabelQuotaIsParent));
  }
  if (auto ok = checkMaxKeysLocked(node); !ok)
    return ok;
  if (auto ok = checkMinSumLocked(node); !ok)
    return ok;
  if (options_.guarantee_usage) {
    if (auto ok = checkGuaranteedLocked(node); !ok)
      return ok;
  }
  return {};
}

Expected<void> QuotaTopology::checkIsParentChangeLocked(const QuotaNode& old_node,
                                                        const QuotaNode& node) const {
  if (old_node.is_parent == node.is_parent)
    return {};
  auto c = children_.find(old_node.name);
  if (!node.is_parent && c != children_.end() && !c->second.empty())
    return makeKubeError(fmt::format("quota {} has child quotas: {} cannot change to false",
                                     node.name, apis::kLabelQuotaIsParent));
  if (node.is_parent) {
    // Pods charged to it by label, by the namespace named after it, or by its namespaces.
    bool has_pods = options_.has_labelled_pods && options_.has_labelled_pods(old_node.name);
    if (!has_pods && options_.has_pods_in_namespace) {
      has_pods = options_.has_pods_in_namespace(old_node.name);
      for (std::size_t i = 0; !has_pods && i < old_node.namespaces.size(); ++i)
        has_pods = options_.has_pods_in_namespace(old_node.namespaces[i]);
    }
    if (has_pods)
      return makeKubeError(fmt::format("quota {} has pods: {} cannot change to true", node.name,
                                       apis::kLabelQuotaIsParent));
  }
  return {};
}

Expected<void> QuotaTopology::checkTreeIdLocked(const QuotaNode* old_node,
                                                const QuotaNode& node) const {
  if (old_node != nullptr && old_node->tree_id != node.tree_id)
    return makeKubeError(fmt::format("quota {}: {} cannot change (\"{}\" to \"{}\")", node.name,
                                     apis::kLabelQuotaTreeID, old_node->tree_id, node.tree_id));
  if (node.parent != kRoot) {
    auto parent = nodes_.find(node.parent);
    if (parent != nodes_.end() && parent->second.tree_id != node.tree_id)
      return makeKubeError(fmt::format("quota {}: tree id \"{}\" differs from parent {}'s \"{}\"",
                                       node.name, node.tree_id, node.parent,
                                       parent->second.tree_id));
  }
  if (auto c = children_.find(node.name); c != children_.end()) {
    for (const auto& child : c->second) {
      auto it = nodes_.find(child);
      if (it != nodes_.end() && it->second.tree_id != node.tree_id)
        return makeKubeError(fmt::format("quota {}: tree id \"{}\" differs from child {}'s \"{}\"",
                                         node.name, node.tree_id, child, it->second.tree_id));
    }
  }
  return {};
}

Expected<void> QuotaTopology::checkNoCycleLocked(const QuotaNode& node) const {
  std::string at = node.parent;
  for (std::size_t depth = 0; at != kRoot && !at.empty(); ++depth) {
    if (at == node.name)
      return makeKubeError(fmt::format("quota {}: parent {} would make a cycle in the quota tree",
                                       node.name, node.parent));
    if (depth >= kMaxDepth)
      return makeKubeError(
          fmt::format("quota {}: the quota tree above it is deeper than {}", node.name, kMaxDepth));
    auto it = nodes_.find(at);
    if (it == nodes_.end())
      break;
    at = it->second.parent;
  }
  return {};
}

Expected<void> QuotaTopology::checkMaxKeysLocked(const QuotaNode& node) const {
  if (node.parent != kRoot) {
    const QuotaNode& parent = nodes_.find(node.parent)->second;
    if (!sameKeys(parent.max, node.max))
      return makeKubeError(
          fmt::format("quota {}: spec.max names other resources than parent {}'s ({} vs {})",
                      node.name, node.parent, listText(node.max), listText(parent.max)));
  }
  if (auto c = children_.find(node.name); c != children_.end()) {
    for (const auto& child : c->second) {
      auto it = nodes_.find(child);
      if (it == nodes_.end())
        continue;
      if (!sameKeys(node.max, it->second.max))
        return makeKubeError(
            fmt::format("quota {}: spec.max names other resources than child {}'s ({} vs {})",
                        node.name, child, listText(node.max), listText(it->second.max)));
    }
  }
  return {};
}

ResourceList QuotaTopology::childMinSumLocked(const std::string& parent,
                                              std::string_view skip) const {
  ResourceList sum;
  auto c = children_.find(parent);
  if (c == children_.end())
    return sum;
  for (const auto& child : c->second) {
    if (child == skip)
      continue;
    if (auto it = nodes_.find(child); it != nodes_.end())
      sum = add(std::move(sum), it->second.min);
  }
  return sum;
}

Expected<void> QuotaTopology::checkMinSumLocked(const QuotaNode& node) const {
  if (node.allow_force_update || node.is_tree_root)
    return {};
  if (node.parent != kRoot) {
    ResourceList with_self = add(childMinSumLocked(node.parent, node.name), node.min);
    const QuotaNode& parent = nodes_.find(node.parent)->second;
    if (!fitsWithin(with_self, parent.min))
      return makeKubeError(
          fmt::format("quota {}: the children of {} would ask for min {}, more than its min {}",
                      node.name, node.parent, listText(with_self), listText(parent.min)));
  }
  ResourceList children = childMinSumLocked(node.name, "");
  if (!fitsWithin(children, node.min))
    return makeKubeError(
        fmt::format("quota {}: its children ask for min {}, more than its new min {}", node.name,
                    listText(children), listText(node.min)));
  return {};
}

Expected<void> QuotaTopology::checkGuaranteedLocked(const QuotaNode& node) const {
  if (node.allow_force_update || node.tree_id.empty() || node.is_tree_root)
    return {};
  if (fitsWithin(node.min, node.guaranteed))
    return {};
  // Raising a guarantee raises each ancestor's until one already covers it; a tree's root
  // cannot be raised.
  ResourceList wanted = maxOf(node.min, node.guaranteed);
  std::string self = node.name;
  std::string parent_name = node.parent;
  for (std::size_t depth = 0;; ++depth) {
    if (parent_name == kRoot || depth >= kMaxDepth)
      return makeKubeError(
          fmt::format("quota {}: min is more than the tree can guarantee ({} cannot guarantee "
                      "for min)",
                      node.name, self));
    auto parent = nodes_.find(parent_name);
    if (parent == nodes_.end())
      return makeKubeError(fmt::format("quota {}: parent {} not found", node.name, parent_name));
    ResourceList all = wanted;
    if (auto c = children_.find(parent_name); c != children_.end()) {
      for (const auto& child : c->second) {
        if (child == self)
          continue;
        if (auto it = nodes_.find(child); it != nodes_.end())
          all = add(std::move(all), it->second.guaranteed);
      }
    }
    ResourceList parent_wanted = maxOf(parent->second.min, all);
    if (fitsWithin(parent_wanted, parent->second.guaranteed))
      return {};
    wanted = std::move(parent_wanted);
    self = parent_name;
    parent_name = parent->second.parent;
  }
}

std::optional<std::string> QuotaTopology::parentTreeId(std::string_view parent) const {
  Lock lock(mu_);
  auto it = nodes_.find(parent);
  if (it == nodes_.end())
    return std::nullopt;
  return it->second.tree_id;
}

std::string QuotaTopology::podQuota(const kube::Labels& pod_labels,
                                    std::string_view pod_namespace) const {
  Lock lock(mu_);
  std::string name(apis::podQuotaName(pod_labels));
  if (name.empty() && !options_.disable_default_quota) {
    auto same = nodes_.find(pod_namespace);
    if (same != nodes_.end() && same->second.namespace_ == pod_namespace) {
      name = same->second.name;
    } else if (auto m = namespace_to_quota_.find(pod_namespace); m != namespace_to_quota_.end()) {
      name = m->second;
    }
  }
  if (nodes_.find(name) == nodes_.end())
    return std::string(apis::kDefaultQuotaName);
  return name;
}

Expected<void> QuotaTopology::validatePod(const kube::Labels& pod_labels,
                                          std::string_view pod_namespace) const {
  if (options_.parent_quota_submit_pod)
    return {};
  std::string quota = podQuota(pod_labels, pod_namespace);
  if (quota == apis::kDefaultQuotaName)
    return {};
  Lock lock(mu_);
  auto it = nodes_.find(quota);
  if (it != nodes_.end() && it->second.is_parent)
    return makeKubeError(
        fmt::format("pods cannot be charged to parent quota {}: it is labelled {}=true", quota,
                    apis::kLabelQuotaIsParent));
  return {};
}

std::size_t QuotaTopology::size() const {
  Lock lock(mu_);
  return nodes_.size();
}

std::optional<QuotaNode> QuotaTopology::node(std::string_view name) const {
  Lock lock(mu_);
  auto it = nodes_.find(name);
  if (it == nodes_.end())
    return std::nullopt;
  return it->second;
}

}  // namespace koord::manager::webhook
