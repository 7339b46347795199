#include "plugins/reservation/owner_index.h"

#include <algorithm>
#include <functional>

namespace koord::roles::scheduler::reservation {

namespace {

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

std::size_t OwnerIndex::KeyHash::operator()(const KeyView& k) const {
  const std::hash<std::string_view> h;
  std::size_t seed = static_cast<std::size_t>(k.kind);
  seed ^= h(k.a) + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2);
  seed ^= h(k.b) + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2);
  return seed;
}

// An owner naming nothing indexable (only matchExpressions, or nothing at all) goes under kAny
// and is matched against every pod.
OwnerIndex::Key OwnerIndex::ownerKey(const apis::ReservationOwner& o) {
  if (o.object) {
    if (!o.object->uid.empty())
      return {KeyKind::kPodUid, o.object->uid, {}};
    if (!o.object->name.empty())
      return {KeyKind::kPodName, o.object->namespace_, o.object->name};
  }
  if (o.controller) {
    if (!o.controller->uid.empty())
      return {KeyKind::kControllerUid, o.controller->uid, {}};
    if (!o.controller->name.empty())
      return {KeyKind::kControllerName, o.controller->name, {}};
  }
  if (o.label_selector && !o.label_selector->match_labels.empty()) {
    const auto& [k, v] = *o.label_selector->match_labels.begin();
    return {KeyKind::kLabel, k, v};
  }
  return {KeyKind::kAny, {}, {}};
}

void OwnerIndex::add(std::shared_ptr<const apis::Reservation> r) {
  std::lock_guard lock(mu_);
  removeLocked(r->uid);
  const std::string uid = r->uid;
  Entry& e = by_uid_[uid];
  for (const auto& owner : r->owners) {
    Key key = ownerKey(owner);
    auto same = [&](const Key& k) { return KeyEq::same(k.view(), key.view()); };
    if (std::none_of(e.keys.begin(), e.keys.end(), same))
      e.keys.push_back(std::move(key));
  }
  e.reservation = std::move(r);
  for (const auto& key : e.keys) {
    auto [it, inserted] = postings_.try_emplace(key);
    if (inserted)
      ++keys_of_kind_[static_cast<std::size_t>(key.kind)];
    it->second.push_back(&e);
  }
}

void OwnerIndex::remove(const std::string& uid) {
  std::lock_guard lock(mu_);
  removeLocked(uid);
}

void OwnerIndex::removeLocked(const std::string& uid) {
  auto it = by_uid_.find(uid);
  if (it == by_uid_.end())
    return;
  const Entry* entry = &it->second;
  for (const auto& key : entry->keys) {
    auto p = postings_.find(key);
    if (p == postings_.end())
      continue;
    std::erase(p->second, entry);
    if (p->second.empty()) {
      --keys_of_kind_[static_cast<std::size_t>(key.kind)];
      postings_.erase(p);
    }
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
  std::vector<const Entry*> candidates;
  auto look = [&](KeyKind kind, std::string_view a, std::string_view b) {
    if (keys_of_kind_[static_cast<std::size_t>(kind)] == 0)
      return;
    auto p = postings_.find(KeyView{kind, a, b});
    if (p != postings_.end())
      candidates.insert(candidates.end(), p->second.begin(), p->second.end());
  };
  look(KeyKind::kPodUid, pod.uid, {});
  look(KeyKind::kPodName, pod.namespace_, pod.name);
  // An object owner without a namespace names the pod in any namespace.
  if (!pod.namespace_.empty())
    look(KeyKind::kPodName, {}, pod.name);
  if (!pod.controller_uid.empty())
    look(KeyKind::kControllerUid, pod.controller_uid, {});
  if (!pod.controller_name.empty())
    look(KeyKind::kControllerName, pod.controller_name, {});
  if (keys_of_kind_[static_cast<std::size_t>(KeyKind::kLabel)] != 0) {
    for (const auto& [k, v] : pod.labels)
      look(KeyKind::kLabel, k, v);
  }
  look(KeyKind::kAny, {}, {});
  if (candidates.empty())
    return out;
  std::sort(candidates.begin(), candidates.end());
  candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());
  const apis::OwnerMatchPod view = matchView(pod);
  for (const Entry* e : candidates) {
    if (apis::matchesOwners(e->reservation->owners, view))
      out.push_back(e->reservation);
  }
  return out;
}

}  // namespace koord::roles::scheduler::reservation
