#include "plugins/coscheduling/gang.h"

#include <utility>

namespace koord::roles::scheduler::coscheduling {

GangGroup::ChildRound& GangGroup::child(const std::string& pod, const Gang& owner) {
  auto& slot = children[pod];
  if (!slot)
    slot = std::make_shared<ChildRound>();
  slot->gang = &owner;
  return *slot;
}

void GangGroup::forgetPod(const std::string& pod) {
  auto it = children.find(pod);
  if (it == children.end())
    return;
  it->second->gang = nullptr;
  children.erase(it);
}

void GangGroup::detachGang(const Gang& gang) {
  for (auto& [pod, c] : children) {
    if (c->gang == &gang)
      c->gang = nullptr;
  }
}

void GangGroup::trySetScheduleCycleValid() {
  int reached = 0;
  for (const auto& [pod, child] : children) {
    if (child->cycle == schedule_cycle)
      ++reached;
  }
  int expected = 0;
  for (const auto& [gang, total] : gang_total_children)
    expected += total;
  if (reached == expected) {
    ++schedule_cycle;
    cycle_valid = true;
  }
}

void GangGroup::resetPodLastScheduleTime(const std::string& pod, const Gang& owner,
                                         SteadyTime now) {
  bool all_current = true;
  for (const auto& [key, c] : children) {
    if (c->has_schedule_time && c->last_schedule_time != last_schedule_time) {
      all_current = false;
      break;
    }
  }
  if (all_current)
    last_schedule_time = now;
  ChildRound& c = child(pod, owner);
  c.has_schedule_time = true;
  c.last_schedule_time = last_schedule_time;
}

Gang::Gang(std::string gang_id) : id(std::move(gang_id)) {
  // Until its settings are read the gang is a group of its own, Strict and once-satisfied, as
  // Koordinator's NewGang leaves it.
  spec.id = id;
  spec.groups = {id};
  spec.group_id = id;
}

bool Gang::validForPermit() const {
  if (!initialized)
    return false;
  const auto waiting = static_cast<std::int64_t>(waiting_for_bind.size());
  const std::int64_t min = spec.min_available;
  switch (spec.match_policy) {
    case apis::GangMatchPolicy::kOnlyWaiting:
      return waiting >= min;
    case apis::GangMatchPolicy::kWaitingAndRunning:
      return waiting + static_cast<std::int64_t>(bound.size()) >= min;
    case apis::GangMatchPolicy::kOnceSatisfied:
      break;
  }
  return waiting >= min || once_resource_satisfied;
}

void Gang::addBound(const std::string& pod) {
  waiting_for_bind.erase(pod);
  bound.insert(pod);
  if (static_cast<std::int64_t>(bound.size()) >= spec.min_available)
    once_resource_satisfied = true;
}

}  // namespace koord::roles::scheduler::coscheduling
