#include "plugins/coscheduling/gang_cache.h"

#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "koord/apis/gang.h"
#include "koord/core/log.h"

namespace koord::roles::scheduler::coscheduling {

namespace {

std::string podKey(const PodInfo& pod) {
  return pod.namespace_ + "/" + pod.name;
}

bool fromPodGroup(const PodInfo& pod) {
  auto it = pod.labels.find(apis::kLabelPodGroup);
  return it != pod.labels.end() && !it->second.empty();
}

void logIgnored(const apis::GangSpec& spec) {
  for (const auto& why : spec.ignored)
    KOORD_LOG_WARNING("coscheduling: gang {}: {}", spec.id, why);
}

}  // namespace

GangCache::GangCache(std::chrono::nanoseconds default_wait, Clock now)
    : default_wait_(default_wait), now_(std::move(now)) {}

Gang& GangCache::gangLocked(const std::string& id) {
  auto& slot = gangs_[id];
  if (!slot)
    slot = std::make_unique<Gang>(id);
  return *slot;
}

Gang* GangCache::findLocked(const std::string& id) const {
  auto it = gangs_.find(id);
  return it == gangs_.end() ? nullptr : it->second.get();
}

std::shared_ptr<GangGroup> GangCache::groupLocked(const apis::GangSpec& spec) {
  auto& slot = groups_[spec.group_id];
  if (!slot) {
    slot = std::make_shared<GangGroup>();
    slot->id = spec.group_id;
    slot->gangs = spec.groups;
    slot->last_schedule_time = now_();
    for (const auto& g : spec.groups)
      slot->gang_total_children[g] = 0;
  }
  return slot;
}

void GangCache::attachGroupLocked(Gang& gang) {
  // A gang keeps the first group it joined, as Koordinator's: a later change of its groups
  // annotation does not move it.
  if (!gang.group)
    gang.group = groupLocked(gang.spec);
  gang.group->gang_total_children[gang.id] = gang.spec.total_number;
}

void GangCache::dropGangLocked(const std::string& id) {
  auto it = gangs_.find(id);
  if (it == gangs_.end())
    return;
  std::unique_ptr<Gang> gang = std::move(it->second);
  gangs_.erase(it);
  waiting_ -= gang->waiting_for_bind.size();
  if (!gang->group)
    return;
  gang->group->detachGang(*gang);
  for (const auto& member : gang->group->gangs) {
    if (gangs_.contains(member))
      return;
  }
  groups_.erase(gang->group->id);
}

bool GangCache::readyLocked(const Gang& gang) const {
  return gang.initialized &&
         static_cast<std::int64_t>(gang.children.size()) >= gang.spec.min_available;
}

std::vector<std::string> GangCache::childrenIfCompleteLocked(const Gang& gang,
                                                             bool was_ready) const {
  std::vector<std::string> keys;
  if (was_ready || !readyLocked(gang))
    return keys;
  for (const auto& [key, phase] : gang.children) {
    if (!gang.bound.contains(key) && !gang.waiting_for_bind.contains(key))
      keys.push_back(key);
  }
  return keys;
}

std::unordered_set<std::string> GangCache::groupGangsLocked(const Gang& gang) const {
  return {gang.spec.groups.begin(), gang.spec.groups.end()};
}

void GangCache::invalidateGroupLocked(const Gang& gang) {
  for (const auto& id : gang.spec.groups) {
    if (Gang* g = findLocked(id); g != nullptr && g->group)
      g->group->cycle_valid = false;
  }
}

// ---- events ----

std::vector<std::string> GangCache::onPodAdd(const PodInfo& pod) {
  if (pod.gang_id.empty())
    return {};
  const std::string key = podKey(pod);
  std::lock_guard lock(mu_);
  Gang& gang = gangLocked(pod.gang_id);
  const bool was_ready = readyLocked(gang);
  if (!fromPodGroup(pod)) {
    if (!gang.initialized) {
      auto spec = apis::gangSpecFromPod(pod.namespace_, pod.labels, pod.annotations, default_wait_);
      if (spec) {
        gang.spec = std::move(*spec);
        gang.initialized = true;
        logIgnored(gang.spec);
      } else {
        KOORD_LOG_WARNING("coscheduling: gang {} of pod {}: {}", gang.id, key,
                          spec.error().message);
      }
    }
    attachGroupLocked(gang);
    gang.group->initPodLastScheduleTime(key, gang);
  } else if (gang.group) {
    gang.group->initPodLastScheduleTime(key, gang);
  }
  gang.children[key] = pod.phase;
  if (pod.assigned()) {
    waiting_ -= gang.waiting_for_bind.erase(key);
    gang.addBound(key);
    // A member found bound (a restart, or its binding seen by the informer) means the gang
    // was placed once.
    gang.once_resource_satisfied = true;
  }
  return childrenIfCompleteLocked(gang, was_ready);
}

std::vector<std::string> GangCache::onPodUpdate(const PodInfo& pod) {
  if (pod.gang_id.empty())
    return {};
  if (pod.finished()) {
    // A finished member stays one (the PodGroup counts it); only its phase changes.
    std::lock_guard lock(mu_);
    if (Gang* gang = findLocked(pod.gang_id)) {
      if (auto it = gang->children.find(podKey(pod)); it != gang->children.end())
        it->second = pod.phase;
    }
    return {};
  }
  return onPodAdd(pod);
}

void GangCache::onPodDelete(const PodInfo& pod) {
  if (pod.gang_id.empty())
    return;
  const std::string key = podKey(pod);
  std::lock_guard lock(mu_);
  Gang* gang = findLocked(pod.gang_id);
  if (gang == nullptr)
    return;
  gang->children.erase(key);
  waiting_ -= gang->waiting_for_bind.erase(key);
  gang->bound.erase(key);
  if (gang->group)
    gang->group->forgetPod(key);
  if (gang->spec.source == apis::GangSource::kPodAnnotations && gang->children.empty())
    dropGangLocked(pod.gang_id);
}

std::vector<std::string> GangCache::podGroupEventLocked(const apis::PodGroup& group, bool create) {
  Gang& gang = gangLocked(group.id());
  const bool was_ready = readyLocked(gang);
  auto spec = apis::gangSpecFromPodGroup(group, default_wait_);
  if (!spec) {
    KOORD_LOG_WARNING("coscheduling: PodGroup {}: {}", group.id(), spec.error().message);
    return {};
  }
  gang.spec = std::move(*spec);
  gang.initialized = true;
  logIgnored(gang.spec);
  attachGroupLocked(gang);
  if (create) {
    for (const auto& [key, phase] : gang.children)
      gang.group->initPodLastScheduleTime(key, gang);
  }
  return childrenIfCompleteLocked(gang, was_ready);
}

std::vector<std::string> GangCache::onPodGroupAdd(const apis::PodGroup& group) {
  std::lock_guard lock(mu_);
  return podGroupEventLocked(group, true);
}

std::vector<std::string> GangCache::onPodGroupUpdate(const apis::PodGroup& group) {
  std::lock_guard lock(mu_);
  return podGroupEventLocked(group, false);
}

void GangCache::onPodGroupDelete(const apis::PodGroup& group) {
  std::lock_guard lock(mu_);
  dropGangLocked(group.id());
}

// ---- extension points ----

PreFilterOutcome GangCache::preFilter(const PodInfo& pod, bool skip_cycle_check) {
  PreFilterOutcome out;
  if (!pod.gang_error.empty()) {
    out.error = pod.gang_error;
    out.skip_set_cycle_invalid = true;
    return out;
  }
  if (pod.gang_id.empty())
    return out;
  const std::string key = podKey(pod);
  std::lock_guard lock(mu_);
  Gang* gang = findLocked(pod.gang_id);
  if (gang == nullptr) {
    out.error = fmt::format("can't find gang, gangName: {}, podName: {}", pod.gang_id, key);
    out.skip_set_cycle_invalid = true;
    return out;
  }
  if (!gang->initialized) {
    out.error = fmt::format("gang has not init, gangName: {}, podName: {}", gang->id, key);
    out.skip_set_cycle_invalid = true;
    return out;
  }
  if (gang->satisfiedOnce())
    return out;
  if (static_cast<std::int64_t>(gang->children.size()) < gang->spec.min_available) {
    out.error =
        fmt::format("gang child pod not collect enough, gangName: {}, podName: {}", gang->id, key);
    out.skip_set_cycle_invalid = true;
    return out;
  }
  if (skip_cycle_check || !gang->group)
    return out;
  GangGroup& group = *gang->group;
  group.resetPodLastScheduleTime(key, *gang, now_());
  group.trySetScheduleCycleValid();
  const int cycle = group.schedule_cycle;
  int& child_cycle = group.child(key, *gang).cycle;
  const int pod_cycle = child_cycle;
  // The member has had its turn in this round, whatever the answer below.
  child_cycle = cycle;
  if (gang->spec.mode != apis::GangMode::kStrict || !pod.nominated_node_name.empty())
    return out;
  if (!group.cycle_valid) {
    out.error =
        fmt::format("gang scheduleCycle not valid, gangName: {}, podName: {}", gang->id, key);
    out.skip_reject = true;
    return out;
  }
  if (pod_cycle >= cycle) {
    out.error = fmt::format(
        "pod's schedule cycle too large, gangName: {}, podName: {}, podCycle: {}, gangCycle: {}",
        gang->id, key, pod_cycle, cycle);
  }
  return out;
}

std::optional<GroupRejection> GangCache::postFilter(const PodInfo& pod, const PreFilterOutcome* pre,
                                                    const std::string& reason) {
  if (pod.gang_id.empty())
    return std::nullopt;
  std::lock_guard lock(mu_);
  Gang* gang = findLocked(pod.gang_id);
  if (gang == nullptr || gang->satisfiedOnce() || gang->spec.mode != apis::GangMode::kStrict)
    return std::nullopt;
  if (pre != nullptr && pre->skip_reject)
    return std::nullopt;
  GroupRejection r;
  r.group_gangs = groupGangsLocked(*gang);
  r.message = fmt::format(
      "Gang \"{}\" gets rejected due to member Pod \"{}\" is unschedulable with "
      "reason \"{}\"",
      gang->id, pod.name, reason);
  if (pre == nullptr || !pre->skip_set_cycle_invalid)
    invalidateGroupLocked(*gang);
  return r;
}

PermitOutcome GangCache::permit(const PodInfo& pod) {
  PermitOutcome out;
  if (pod.gang_id.empty())
    return out;
  const std::string key = podKey(pod);
  std::lock_guard lock(mu_);
  Gang* gang = findLocked(pod.gang_id);
  if (gang == nullptr) {
    out.verdict = PermitVerdict::kGangNotFound;
    return out;
  }
  if (gang->waiting_for_bind.insert(key).second)
    ++waiting_;
  bool all_valid = true;
  for (const auto& id : gang->spec.groups) {
    const Gang* member = findLocked(id);
    if (member == nullptr || !member->validForPermit()) {
      all_valid = false;
      break;
    }
  }
  if (all_valid) {
    out.verdict = PermitVerdict::kAllow;
    out.group_gangs = groupGangsLocked(*gang);
    return out;
  }
  out.verdict = PermitVerdict::kWait;
  out.wait = gang->spec.wait_time;
  // The first member to wait brings the others forward; after it they are queued already (a
  // Strict gang's member that fails releases them all instead). A NonStrict gang's failed
  // member stays parked, so each waiting member brings it back, as Koordinator's does.
  if (gang->spec.mode == apis::GangMode::kStrict && gang->waiting_for_bind.size() > 1)
    return out;
  for (const auto& id : gang->spec.groups) {
    const Gang* member = findLocked(id);
    if (member == nullptr)
      continue;
    for (const auto& [child, phase] : member->children) {
      if (child != key && !member->waiting_for_bind.contains(child) &&
          !member->bound.contains(child))
        out.siblings.push_back(child);
    }
  }
  return out;
}

std::optional<GroupRejection> GangCache::unreserve(const PodInfo& pod) {
  if (pod.gang_id.empty())
    return std::nullopt;
  std::lock_guard lock(mu_);
  Gang* gang = findLocked(pod.gang_id);
  if (gang == nullptr)
    return std::nullopt;
  waiting_ -= gang->waiting_for_bind.erase(podKey(pod));
  if (gang->satisfiedOnce() || gang->spec.mode != apis::GangMode::kStrict)
    return std::nullopt;
  invalidateGroupLocked(*gang);
  GroupRejection r;
  r.group_gangs = groupGangsLocked(*gang);
  r.message =
      fmt::format("Gang \"{}\" gets rejected due to Pod \"{}\" in Unreserve", gang->id, pod.name);
  return r;
}

void GangCache::postBind(const PodInfo& pod) {
  if (pod.gang_id.empty())
    return;
  const std::string key = podKey(pod);
  std::lock_guard lock(mu_);
  Gang* gang = findLocked(pod.gang_id);
  if (gang == nullptr)
    return;
  waiting_ -= gang->waiting_for_bind.erase(key);
  gang->addBound(key);
}

// ---- queue order ----

bool GangCache::less(const QueuedPodInfo& a, const QueuedPodInfo& b) const {
  struct Key {
    SteadyTime time;
    std::string_view group;
    int cycle = 0;
  };
  std::lock_guard lock(mu_);
  auto keyOf = [this](const QueuedPodInfo& q) {
    const PodInfo& pod = *q.pod;
    Key k{q.timestamp, {}, 0};
    if (pod.gang_id.empty())
      return k;
    // The handle sortHandle gave: the member's entry, read without looking anything up. The
    // same answer as below, where the lookup finds that entry.
    if (q.sort_handle) {
      const auto* child = static_cast<const GangGroup::ChildRound*>(q.sort_handle.get());
      if (child->gang != nullptr) {
        k.group = child->gang->spec.group_id;
        k.time = child->has_schedule_time ? child->last_schedule_time : SteadyTime{};
        k.cycle = child->cycle;
        return k;
      }
    }
    const Gang* gang = findLocked(pod.gang_id);
    if (gang == nullptr)
      return k;
    k.group = gang->spec.group_id;
    k.time = SteadyTime{};
    if (gang->group) {
      // The queue compares often: the key is built in a buffer that keeps its capacity.
      thread_local std::string key;
      key.assign(pod.namespace_).append(1, '/').append(pod.name);
      if (auto it = gang->group->children.find(key); it != gang->group->children.end()) {
        if (it->second->has_schedule_time)
          k.time = it->second->last_schedule_time;
        k.cycle = it->second->cycle;
      }
    }
    return k;
  };
  const Key ka = keyOf(a);
  const Key kb = keyOf(b);
  if (ka.time != kb.time)
    return ka.time < kb.time;
  if (ka.group != kb.group)
    return ka.group < kb.group;
  if (a.pod->gang_id != b.pod->gang_id)
    return a.pod->gang_id < b.pod->gang_id;
  if (ka.cycle != kb.cycle)
    return ka.cycle < kb.cycle;
  if (a.pod->name != b.pod->name)
    return a.pod->name < b.pod->name;
  return a.pod->namespace_ < b.pod->namespace_;
}

std::shared_ptr<const void> GangCache::sortHandle(const PodInfo& pod) const {
  if (pod.gang_id.empty())
    return nullptr;
  const std::string key = podKey(pod);
  std::lock_guard lock(mu_);
  const Gang* gang = findLocked(pod.gang_id);
  if (gang == nullptr || !gang->group)
    return nullptr;
  auto it = gang->group->children.find(key);
  if (it == gang->group->children.end() || it->second->gang != gang)
    return nullptr;
  return it->second;
}

// ---- reads ----

std::optional<GangMembers> GangCache::members(const std::string& gang_id) const {
  std::lock_guard lock(mu_);
  const Gang* gang = findLocked(gang_id);
  if (gang == nullptr)
    return std::nullopt;
  GangMembers m;
  m.phases.insert(gang->children.begin(), gang->children.end());
  m.bound = static_cast<std::int32_t>(gang->bound.size());
  return m;
}

std::size_t GangCache::waitingCount() const {
  std::lock_guard lock(mu_);
  return waiting_;
}

std::optional<Gang> GangCache::gang(const std::string& gang_id) const {
  std::lock_guard lock(mu_);
  const Gang* gang = findLocked(gang_id);
  if (gang == nullptr)
    return std::nullopt;
  return *gang;
}

std::optional<std::pair<int, bool>> GangCache::scheduleCycle(const std::string& gang_id) const {
  std::lock_guard lock(mu_);
  const Gang* gang = findLocked(gang_id);
  if (gang == nullptr || !gang->group)
    return std::nullopt;
  return std::make_pair(gang->group->schedule_cycle, gang->group->cycle_valid);
}

}  // namespace koord::roles::scheduler::coscheduling
