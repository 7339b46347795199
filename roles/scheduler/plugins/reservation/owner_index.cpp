#include "plugins/reservation/owner_index.h"

#include <algorithm>

namespace koord::roles::scheduler::reservation {

namespace {

// The one key an owner is found under: the most selective part it names. An owner naming
// nothing indexable (only matchExpressions, or nothing at all) goes under kAny and is matched
// against every pod.
constexpr std::string_view kAny = "*";

std::string ownerKey(const apis::ReservationOwner& o) {
  if (o.object) {
    if (!o.object->uid.empty())
      return "u:" + o.object->uid;
    if (!o.object->name.empty())
      return "n:" + o.object->namespace_ + "/" + o.object->name;
  }
  if (o.controller) {
    if (!o.controller->uid.empty())
      return "cu:" + o.controller->uid;
    if (!o.controller->name.empty())
      return "cn:" + o.controller->name;
  }
  if (o.label_selector && !o.label_selector->match_labels.empty()) {
    const auto& [k, v] = *o.label_selector->match_labels.begin();
    return "l:" + k + "=" + v;
  }
  return std::string(kAny);
}

apis::OwnerMatchPod matchView(const PodInfo& pod) {
  return {pod.namespace_,
          pod.name,
          pod.uid,
          &pod.labels,
          pod.controller_api_version,
          pod.controller_kind,
          pod.controller_name,
          pod.controller_uid};
}

}  // namespace

void OwnerIndex::add(std::shared_ptr<const apis::Reservation> r) {
  std::lock_guard lock(mu_);
  removeLocked(r->uid);
  Entry e;
  for (const auto& owner : r->owners) {
    std::string key = ownerKey(owner);
    if (std::find(e.keys.begin(), e.keys.end(), key) == e.keys.end())
      e.keys.push_back(std::move(key));
  }
  for (const auto& key : e.keys)
    postings_[key].insert(r->uid);
  const std::string uid = r->uid;
  e.reservation = std::move(r);
  by_uid_.emplace(uid, std::move(e));
}

void OwnerIndex::remove(const std::string& uid) {
  std::lock_guard lock(mu_);
  removeLocked(uid);
}

void OwnerIndex::removeLocked(const std::string& uid) {
  auto it = by_uid_.find(uid);
  if (it == by_uid_.end())
    return;
  for (const auto& key : it->second.keys) {
    auto p = postings_.find(key);
    if (p == postings_.end())
      continue;
    p->second.erase(uid);
    if (p->second.empty())
      postings_.erase(p);
  }
  by_uid_.erase(it);
}

std::size_t OwnerIndex::size() const {
  std::lock_guard lock(mu_);
  return by_uid_.size();
}

std::vector<std::shared_ptr<const apis::Reservation>> OwnerIndex::match(const PodInfo& pod) const {
  std::vector<std::shared_ptr<const apis::Reservation>> out;
  std::lock_guard lock(mu_);
  if (by_uid_.empty())
    return out;
  std::vector<const std::string*> candidates;
  auto look = [&](const std::string& key) {
    auto p = postings_.find(key);
    if (p == postings_.end())
      return;
    for (const auto& uid : p->second)
      candidates.push_back(&uid);
  };
  look("u:" + pod.uid);
  look("n:" + pod.namespace_ + "/" + pod.name);
  look("n:/" + pod.name);
  if (!pod.controller_uid.empty())
    look("cu:" + pod.controller_uid);
  if (!pod.controller_name.empty())
    look("cn:" + pod.controller_name);
  for (const auto& [k, v] : pod.labels)
    look("l:" + k + "=" + v);
  look(std::string(kAny));
  if (candidates.empty())
    return out;
  std::sort(candidates.begin(), candidates.end(),
            [](const std::string* a, const std::string* b) { return *a < *b; });
  candidates.erase(std::unique(candidates.begin(), candidates.end(),
                               [](const std::string* a, const std::string* b) { return *a == *b; }),
                   candidates.end());
  const apis::OwnerMatchPod view = matchView(pod);
  for (const std::string* uid : candidates) {
    const auto& r = by_uid_.at(*uid).reservation;
    if (apis::matchesOwners(r->owners, view))
      out.push_back(r);
  }
  return out;
}

}  // namespace koord::roles::scheduler::reservation
