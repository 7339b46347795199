#include "plugins/elasticquota/group_quota_manager.h"

#include <algorithm>
#include <deque>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "plugins/elasticquota/runtime_quota_calculator.h"

namespace koord::roles::scheduler::elasticquota {

namespace {

using apis::kDefaultQuotaName;
using apis::kRootQuotaName;
using apis::kSystemQuotaName;

std::string podKey(std::string_view ns, std::string_view name) {
  return fmt::format("{}/{}", ns, name);
}

bool isBuiltIn(std::string_view name) {
  return name == kRootQuotaName || name == kSystemQuotaName || name == kDefaultQuotaName;
}

// The system and default quotas sit beside the tree: their pods' usage comes off the root's
// total instead of being shared out.
bool isSideQuota(std::string_view name) {
  return name == kSystemQuotaName || name == kDefaultQuotaName;
}

QuotaSpec builtInSpec(std::string_view name, const kube::ResourceList& max) {
  QuotaSpec spec;
  spec.name = std::string(name);
  spec.parent_name = std::string(kRootQuotaName);
  spec.max = resourcesFromList(max);
  return spec;
}

}  // namespace

GroupQuotaManager::GroupQuotaManager(const ElasticQuotaArgs& args, bool scale_min_quota)
    : scale_min_quota_(scale_min_quota),
      enable_runtime_quota_(args.enable_runtime_quota),
      enable_check_parent_quota_(args.enable_check_parent_quota),
      delay_evict_time_(args.delay_evict_time) {
  QuotaSpec root;
  root.name = std::string(kRootQuotaName);
  root.is_parent = true;
  root.allow_lent_resource = false;
  quotas_[root.name].spec = std::move(root);
  quotas_[std::string(kSystemQuotaName)].spec =
      builtInSpec(kSystemQuotaName, args.system_quota_group_max);
  quotas_[std::string(kDefaultQuotaName)].spec =
      builtInSpec(kDefaultQuotaName, args.default_quota_group_max);
}

GroupQuotaManager::Quota* GroupQuotaManager::findNoLock(std::string_view name) {
  auto it = quotas_.find(name);
  return it == quotas_.end() ? nullptr : &it->second;
}

kube::Expected<void> GroupQuotaManager::updateQuota(const apis::ElasticQuota& quota) {
  std::lock_guard lock(mu_);
  if (quota.terminating || quota.name == kRootQuotaName)
    return {};
  QuotaSpec spec = quotaSpecFromElasticQuota(quota);
  if (isSideQuota(spec.name))
    spec.parent_name = std::string(kRootQuotaName);
  auto it = quotas_.find(spec.name);
  if (it == quotas_.end()) {
    if (quotas_.size() >= kMaxQuotas) {
      return kube::makeKubeError(
          fmt::format("ElasticQuota {}: more than {} quotas, not added", spec.name, kMaxQuotas));
    }
    it = quotas_.emplace(spec.name, Quota{}).first;
  }
  it->second.spec = std::move(spec);
  topology_dirty_ = true;
  figures_dirty_ = true;
  return {};
}

kube::Expected<void> GroupQuotaManager::deleteQuota(std::string_view name) {
  std::lock_guard lock(mu_);
  if (isBuiltIn(name))
    return kube::makeKubeError(fmt::format("ElasticQuota {}: built in, not deleted", name));
  auto it = quotas_.find(name);
  if (it == quotas_.end())
    return kube::makeKubeError(fmt::format("ElasticQuota {}: not found", name));
  Quota& fallback = quotas_.find(kDefaultQuotaName)->second;
  for (auto& [key, pod] : it->second.pods) {
    pod_quota_[key] = std::string(kDefaultQuotaName);
    fallback.pods[key] = std::move(pod);
  }
  quotas_.erase(it);
  topology_dirty_ = true;
  figures_dirty_ = true;
  return {};
}

bool GroupQuotaManager::hasQuota(std::string_view name) {
  std::lock_guard lock(mu_);
  return quotas_.contains(name);
}

std::vector<std::string> GroupQuotaManager::quotaNames() {
  std::lock_guard lock(mu_);
  std::vector<std::string> out;
  out.reserve(quotas_.size());
  for (const auto& [name, quota] : quotas_)
    out.push_back(name);
  return out;
}

void GroupQuotaManager::setClusterTotalResource(Resources total) {
  std::lock_guard lock(mu_);
  if (total == cluster_total_)
    return;
  cluster_total_ = std::move(total);
  runtime_dirty_ = true;
}

Resources GroupQuotaManager::clusterTotalResource() {
  std::lock_guard lock(mu_);
  return cluster_total_;
}

std::string GroupQuotaManager::podQuotaName(std::string_view pod_namespace,
                                            const kube::Labels& pod_labels) {
  std::lock_guard lock(mu_);
  std::string name(apis::podQuotaName(pod_labels));
  if (name.empty()) {
    if (const Quota* q = findNoLock(pod_namespace);
        q != nullptr && q->spec.namespace_ == pod_namespace) {
      name = q->spec.name;
    } else {
      for (const auto& [quota_name, quota] : quotas_) {
        const auto& ns = quota.spec.namespaces;
        if (std::find(ns.begin(), ns.end(), pod_namespace) != ns.end()) {
          name = quota_name;
          break;
        }
      }
    }
  }
  if (name.empty() || !quotas_.contains(name))
    name = std::string(kDefaultQuotaName);
  return name;
}

namespace {

void settleRequest(QuotaSummary& f) {
  f.request = f.allow_lent_resource ? f.child_request : maxResources(f.child_request, f.min);
}

}  // namespace

GroupQuotaManager::Quota* GroupQuotaManager::parentInTreeNoLock(const Quota& quota) {
  const std::string& name = quota.spec.name;
  if (name == kRootQuotaName || !quota.attached)
    return nullptr;
  // The system and default quotas count towards the root, beside its children.
  return findNoLock(isSideQuota(name) ? std::string_view(kRootQuotaName) : quota.spec.parent_name);
}

void GroupQuotaManager::chargeUsedNoLock(Quota& quota, const QuotaPod& pod, int sign) {
  if (topology_dirty_ || figures_dirty_)
    return;  // the full count to come includes it
  for (Quota* at = &quota; at != nullptr; at = parentInTreeNoLock(*at)) {
    QuotaSummary& f = at->figures;
    if (at == &quota)
      chargeResources(f.self_used, pod.request, sign);
    chargeResources(f.used, pod.request, sign);
    if (pod.non_preemptible)
      chargeResources(f.non_preemptible_used, pod.request, sign);
  }
  // The root's runtime is the total less what the system and default quotas use.
  if (isSideQuota(quota.spec.name))
    runtime_dirty_ = true;
}

void GroupQuotaManager::chargeNoLock(Quota& quota, const QuotaPod& pod, int sign) {
  if (topology_dirty_ || figures_dirty_)
    return;
  if (pod.assigned)
    chargeUsedNoLock(quota, pod, sign);
  chargeResources(quota.figures.self_request, pod.request, sign);
  for (Quota* at = &quota; at != nullptr; at = parentInTreeNoLock(*at)) {
    if (pod.non_preemptible)
      chargeResources(at->figures.non_preemptible_request, pod.request, sign);
  }
  // Each quota's request from its own pods and its children's, up to the root: what the
  // runtime calculation reads.
  for (Quota* at = &quota; at != nullptr; at = parentInTreeNoLock(*at)) {
    QuotaSummary& f = at->figures;
    f.child_request = f.self_request;
    for (const std::string& child : at->children) {
      const QuotaSummary& c = quotas_.find(child)->second.figures;
      chargeCapped(f.child_request, c.request, c.max);
    }
    if (at->spec.name == kRootQuotaName) {
      for (std::string_view side : {kSystemQuotaName, kDefaultQuotaName}) {
        QuotaSummary& s = quotas_.find(side)->second.figures;
        settleRequest(s);
        chargeCapped(f.child_request, s.request, s.max);
      }
      f.request = f.child_request;
    } else {
      settleRequest(f);
    }
  }
  runtime_dirty_ = true;
}

void GroupQuotaManager::addPodNoLock(Quota& quota, QuotaPod pod) {
  std::string key = podKey(pod.namespace_, pod.name);
  if (auto charged = pod_quota_.find(key); charged != pod_quota_.end()) {
    if (Quota* previous = findNoLock(charged->second)) {
      if (auto old = previous->pods.find(key); old != previous->pods.end()) {
        pod.assigned = pod.assigned || old->second.assigned;
        const QuotaPod& was = old->second;
        if (previous == &quota && was.request == pod.request &&
            was.non_preemptible == pod.non_preemptible) {
          // Only its usage may change (Reserve, or its binding seen): no request moves, so the
          // runtime quotas stay as they are.
          if (pod.assigned != was.assigned)
            chargeUsedNoLock(quota, pod, pod.assigned ? +1 : -1);
          old->second = std::move(pod);
          return;
        }
        chargeNoLock(*previous, was, -1);
        previous->pods.erase(old);
      }
    }
  }
  pod_quota_[key] = quota.spec.name;
  chargeNoLock(quota, pod, +1);
  quota.pods[std::move(key)] = std::move(pod);
}

void GroupQuotaManager::onPodAdd(std::string_view quota, const QuotaPod& pod) {
  std::lock_guard lock(mu_);
  if (Quota* q = findNoLock(quota))
    addPodNoLock(*q, pod);
}

void GroupQuotaManager::onPodDelete(std::string_view pod_namespace, std::string_view pod_name) {
  std::lock_guard lock(mu_);
  auto charged = pod_quota_.find(podKey(pod_namespace, pod_name));
  if (charged == pod_quota_.end())
    return;
  if (Quota* q = findNoLock(charged->second)) {
    if (auto it = q->pods.find(charged->first); it != q->pods.end()) {
      chargeNoLock(*q, it->second, -1);
      q->pods.erase(it);
    }
  }
  pod_quota_.erase(charged);
}

void GroupQuotaManager::reservePod(std::string_view quota, const QuotaPod& pod) {
  std::lock_guard lock(mu_);
  Quota* q = findNoLock(quota);
  if (q == nullptr)
    return;
  QuotaPod assigned = pod;
  assigned.assigned = true;
  addPodNoLock(*q, std::move(assigned));
}

void GroupQuotaManager::unreservePod(std::string_view pod_namespace, std::string_view pod_name) {
  std::lock_guard lock(mu_);
  const std::string key = podKey(pod_namespace, pod_name);
  auto charged = pod_quota_.find(key);
  if (charged == pod_quota_.end())
    return;
  if (Quota* q = findNoLock(charged->second)) {
    if (auto it = q->pods.find(key); it != q->pods.end() && it->second.assigned) {
      it->second.assigned = false;
      chargeUsedNoLock(*q, it->second, -1);
    }
  }
}

void GroupQuotaManager::refreshNoLock() {
  if (topology_dirty_) {
    rebuildTopologyNoLock();
    topology_dirty_ = false;
    figures_dirty_ = true;
  }
  if (figures_dirty_) {
    computeFiguresNoLock();
    figures_dirty_ = false;
    runtime_dirty_ = true;
  }
  if (runtime_dirty_) {
    computeRuntimeNoLock();
    runtime_dirty_ = false;
  }
}

void GroupQuotaManager::rebuildTopologyNoLock() {
  problems_.clear();
  order_.clear();
  std::set<std::string> keys;
  for (auto& [name, quota] : quotas_) {
    quota.children.clear();
    quota.attached = isBuiltIn(name);
    if (!isSideQuota(name)) {
      for (const auto& [resource, value] : quota.spec.max)
        keys.insert(resource);
    }
  }
  resource_keys_.assign(keys.begin(), keys.end());

  for (auto& [name, quota] : quotas_) {
    if (isBuiltIn(name))
      continue;
    // Walk up to the root; a bounded walk, as nothing stops the parent labels from looping.
    std::vector<std::string_view> path{name};
    std::string problem;
    std::string_view at = name;
    while (problem.empty()) {
      const Quota& here = quotas_.find(at)->second;
      std::string_view parent = here.spec.parent_name;
      if (parent == kRootQuotaName)
        break;
      if (isSideQuota(parent)) {
        problem = fmt::format("quota {}: parent {} cannot have child quotas", name, parent);
      } else if (!quotas_.contains(parent)) {
        problem = fmt::format("quota {}: {} {} not found", name,
                              path.size() == 1 ? "parent" : "ancestor", parent);
      } else if (std::find(path.begin(), path.end(), parent) != path.end()) {
        problem = fmt::format("quota {}: its parents loop through {}", name, parent);
      } else if (path.size() >= kMaxQuotaTreeDepth) {
        problem =
            fmt::format("quota {}: deeper than {} levels below the root", name, kMaxQuotaTreeDepth);
      } else {
        path.push_back(parent);
        at = parent;
      }
    }
    if (problem.empty())
      quota.attached = true;
    else
      problems_.push_back(std::move(problem));
  }
  std::sort(problems_.begin(), problems_.end());

  for (auto& [name, quota] : quotas_) {
    if (quota.attached && !isBuiltIn(name))
      quotas_.find(quota.spec.parent_name)->second.children.push_back(name);
  }
  std::deque<std::string> queue{std::string(kRootQuotaName)};
  while (!queue.empty()) {
    std::string name = std::move(queue.front());
    queue.pop_front();
    const Quota& quota = quotas_.find(name)->second;
    queue.insert(queue.end(), quota.children.begin(), quota.children.end());
    order_.push_back(std::move(name));
  }
}

void GroupQuotaManager::computeFiguresNoLock() {
  // Each quota's own pods first, then children into parents, deepest first.
  for (auto& [name, quota] : quotas_) {
    QuotaSummary& f = quota.figures;
    f = QuotaSummary{};
    f.name = name;
    f.parent_name = quota.spec.parent_name;
    f.is_parent = !quota.children.empty() || name == kRootQuotaName;
    f.allow_lent_resource = quota.spec.allow_lent_resource;
    f.detached = !quota.attached;
    f.max = quota.spec.max;
    f.min = quota.spec.min;
    f.auto_scale_min = quota.spec.min;
    f.shared_weight = quota.spec.shared_weight;
    for (const auto& [key, pod] : quota.pods) {
      f.self_request = addResources(f.self_request, pod.request);
      if (pod.non_preemptible)
        f.non_preemptible_request = addResources(f.non_preemptible_request, pod.request);
      if (pod.assigned) {
        f.self_used = addResources(f.self_used, pod.request);
        if (pod.non_preemptible)
          f.non_preemptible_used = addResources(f.non_preemptible_used, pod.request);
      }
    }
    f.child_request = f.self_request;
    f.used = f.self_used;
  }
  for (auto it = order_.rbegin(); it != order_.rend(); ++it) {
    Quota& quota = quotas_.find(*it)->second;
    QuotaSummary& f = quota.figures;
    if (*it == kRootQuotaName) {
      // The root also carries the system and default quotas' pods.
      for (std::string_view side : {kSystemQuotaName, kDefaultQuotaName}) {
        QuotaSummary& s = quotas_.find(side)->second.figures;
        settleRequest(s);
        f.child_request = addResources(f.child_request, capResources(s.request, s.max));
        f.used = addResources(f.used, s.used);
        f.non_preemptible_request =
            addResources(f.non_preemptible_request, s.non_preemptible_request);
        f.non_preemptible_used = addResources(f.non_preemptible_used, s.non_preemptible_used);
      }
    }
    if (*it == kRootQuotaName)
      f.request = f.child_request;
    else
      settleRequest(f);
    if (*it == kRootQuotaName)
      continue;
    QuotaSummary& parent = quotas_.find(quota.spec.parent_name)->second.figures;
    parent.child_request = addResources(parent.child_request, capResources(f.request, f.max));
    parent.used = addResources(parent.used, f.used);
    parent.non_preemptible_request =
        addResources(parent.non_preemptible_request, f.non_preemptible_request);
    parent.non_preemptible_used = addResources(parent.non_preemptible_used, f.non_preemptible_used);
  }
  for (auto& [name, quota] : quotas_) {
    if (!quota.attached)
      settleRequest(quota.figures);
  }
}

void GroupQuotaManager::computeRuntimeNoLock() {
  const Resources side_used = addResources(quotas_.find(kSystemQuotaName)->second.figures.used,
                                           quotas_.find(kDefaultQuotaName)->second.figures.used);
  quotas_.find(kRootQuotaName)->second.figures.runtime =
      subtractResources(cluster_total_, side_used);
  for (std::string_view side : {kSystemQuotaName, kDefaultQuotaName}) {
    QuotaSummary& f = quotas_.find(side)->second.figures;
    f.runtime = f.max;
  }
  std::vector<ChildQuota> children;
  for (const std::string& name : order_) {
    const Quota& parent = quotas_.find(name)->second;
    if (parent.children.empty())
      continue;
    const Resources& total = parent.figures.runtime;
    Resources sum_of_min;
    for (const std::string& child : parent.children)
      sum_of_min = addResources(sum_of_min, quotas_.find(child)->second.spec.min);
    children.clear();
    for (const std::string& child : parent.children) {
      QuotaSummary& f = quotas_.find(child)->second.figures;
      if (scale_min_quota_)
        f.auto_scale_min = scaledMinQuota(total, sum_of_min, f.min);
      children.push_back(ChildQuota{.shared_weight = f.shared_weight,
                                    .limited_request = capResources(f.request, f.max),
                                    .min = f.auto_scale_min,
                                    .guaranteed = {},
                                    .allow_lent_resource = f.allow_lent_resource});
    }
    std::vector<Resources> runtimes = calculateRuntime(children, total, resource_keys_);
    for (std::size_t i = 0; i < parent.children.size(); ++i)
      quotas_.find(parent.children[i])->second.figures.runtime = std::move(runtimes[i]);
  }
}

std::optional<QuotaSummary> GroupQuotaManager::summary(std::string_view name) {
  std::lock_guard lock(mu_);
  refreshNoLock();
  const Quota* q = findNoLock(name);
  if (q == nullptr)
    return std::nullopt;
  return q->figures;
}

std::optional<Resources> GroupQuotaManager::refreshRuntime(std::string_view name) {
  std::lock_guard lock(mu_);
  refreshNoLock();
  const Quota* q = findNoLock(name);
  if (q == nullptr)
    return std::nullopt;
  if (name == kRootQuotaName)
    return q->figures.runtime;
  return maskResources(q->figures.runtime, q->figures.max);
}

std::optional<QuotaCheckState> GroupQuotaManager::checkStateNoLock(std::string_view quota) {
  refreshNoLock();
  const Quota* q = findNoLock(quota);
  if (q == nullptr)
    return std::nullopt;
  return QuotaCheckState{
      .quota_name = q->spec.name,
      .used = q->figures.used,
      .non_preemptible_used = q->figures.non_preemptible_used,
      .used_limit = enable_runtime_quota_ ? q->figures.runtime : q->figures.max,
      .min = q->figures.min,
  };
}

std::optional<QuotaCheckState> GroupQuotaManager::checkState(std::string_view quota) {
  std::lock_guard lock(mu_);
  return checkStateNoLock(quota);
}

Status GroupQuotaManager::preFilter(std::string_view quota, const QuotaPod& pod,
                                    QuotaCheckState* checked) {
  std::lock_guard lock(mu_);
  auto state = checkStateNoLock(quota);
  if (!state)
    return Status::error(fmt::format("Could not find the specified ElasticQuota {}", quota));
  if (checked != nullptr)
    *checked = *state;
  if (auto refused = checkQuotaFit(*state, pod.request, pod.non_preemptible))
    return Status::unschedulable(std::move(*refused));
  if (!enable_check_parent_quota_)
    return Status::success();
  std::vector<std::string> topo{state->quota_name};
  const Quota* at = findNoLock(quota);
  while (at->attached && at->spec.parent_name != kRootQuotaName && !at->spec.parent_name.empty()) {
    at = findNoLock(at->spec.parent_name);
    topo.insert(topo.begin(), at->spec.name);
    const Resources& limit = enable_runtime_quota_ ? at->figures.runtime : at->figures.max;
    if (auto refused = checkAncestorFit(topo, at->figures.used, limit, pod.request))
      return Status::unschedulable(std::move(*refused));
  }
  return Status::success();
}

std::vector<QuotaPod> GroupQuotaManager::podsToRevokeNoLock(
    Quota& quota, std::chrono::system_clock::time_point now) {
  std::vector<QuotaPod> assigned;
  for (const auto& [key, pod] : quota.pods) {
    if (pod.assigned)
      assigned.push_back(pod);
  }
  return choosePodsToRevoke(quota.figures.used, quota.figures.runtime, std::move(assigned), now);
}

std::vector<QuotaPod> GroupQuotaManager::podsToRevoke(std::string_view quota,
                                                      std::chrono::system_clock::time_point now) {
  std::lock_guard lock(mu_);
  refreshNoLock();
  Quota* q = findNoLock(quota);
  if (q == nullptr)
    return {};
  return podsToRevokeNoLock(*q, now);
}

std::vector<QuotaPod> GroupQuotaManager::revokeOverUsedQuotas(
    std::chrono::system_clock::time_point now) {
  std::lock_guard lock(mu_);
  refreshNoLock();
  std::vector<std::string> watched;
  std::vector<QuotaPod> out;
  for (auto& [name, quota] : quotas_) {
    if (name == kRootQuotaName || name == kSystemQuotaName)
      continue;
    watched.push_back(name);
    const bool over = !fitsWithin(quota.figures.used, quota.figures.runtime);
    if (!over_use_.observe(name, over, now, delay_evict_time_))
      continue;
    auto pods = podsToRevokeNoLock(quota, now);
    out.insert(out.end(), std::make_move_iterator(pods.begin()),
               std::make_move_iterator(pods.end()));
  }
  over_use_.retain(watched);
  return out;
}

std::vector<std::string> GroupQuotaManager::treeProblems() {
  std::lock_guard lock(mu_);
  refreshNoLock();
  return problems_;
}

}  // namespace koord::roles::scheduler::elasticquota
