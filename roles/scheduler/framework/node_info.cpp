#include "node_info.h"

#include <algorithm>

namespace koord::roles::scheduler {

namespace {

constexpr std::string_view kAnyIP = "0.0.0.0";

bool sameSlot(const HostPort& a, const HostPort& b) {
  return a.port == b.port && a.protocol == b.protocol && a.host_ip == b.host_ip;
}

}  // namespace

void HostPortUsage::add(const HostPort& p) {
  ports_.push_back(p);
}

void HostPortUsage::remove(const HostPort& p) {
  auto it =
      std::find_if(ports_.begin(), ports_.end(), [&](const auto& q) { return sameSlot(p, q); });
  if (it != ports_.end())
    ports_.erase(it);
}

bool HostPortUsage::conflicts(const HostPort& p) const {
  // kube-scheduler's HostPortInfo.CheckConflict: the same protocol and port, and either side
  // on 0.0.0.0 or both on one IP.
  return std::any_of(ports_.begin(), ports_.end(), [&](const HostPort& q) {
    return q.port == p.port && q.protocol == p.protocol &&
           (q.host_ip == p.host_ip || q.host_ip == kAnyIP || p.host_ip == kAnyIP);
  });
}

const std::string& NodeInfo::name() const {
  static const std::string kNone;
  return node ? node->name : kNone;
}

namespace {

void addRemaining(NodeInfo& info, const ReservationInfo& r, bool add) {
  const Resource room = r.remaining();
  if (add) {
    info.requested.add(room);
  } else {
    info.requested.subtract(room);
  }
  const std::int64_t sign = add ? 1 : -1;
  info.non_zero_requested.milli_cpu += sign * room.milli_cpu;
  info.non_zero_requested.memory += sign * room.memory;
}

using ReservationList = std::vector<std::shared_ptr<const ReservationInfo>>;

ReservationList::iterator findReservation(ReservationList& list, std::string_view uid) {
  return std::find_if(list.begin(), list.end(), [&](const auto& r) { return r->uid == uid; });
}

// The owner pod joins (or leaves) its reservation: the reservation's room left changes, and the
// node's requested with it, so that the pod's room is counted once.
void moveOwner(NodeInfo& info, const PodInfo& pod, bool join) {
  if (pod.reservation_uid.empty())
    return;
  auto it = findReservation(info.reservations, pod.reservation_uid);
  if (it == info.reservations.end())
    return;
  auto updated = std::make_shared<ReservationInfo>(**it);
  if (join) {
    if (std::find(updated->owner_uids.begin(), updated->owner_uids.end(), pod.uid) !=
        updated->owner_uids.end())
      return;
    updated->allocated.add(pod.requests);
    updated->owner_uids.push_back(pod.uid);
  } else {
    auto owner = std::find(updated->owner_uids.begin(), updated->owner_uids.end(), pod.uid);
    if (owner == updated->owner_uids.end())
      return;
    updated->owner_uids.erase(owner);
    updated->allocated.subtract(pod.requests);
  }
  addRemaining(info, **it, false);
  addRemaining(info, *updated, true);
  *it = std::move(updated);
}

}  // namespace

void NodeInfo::addReservation(std::shared_ptr<const ReservationInfo> reservation) {
  removeReservation(reservation->uid);
  auto counted = std::make_shared<ReservationInfo>(*reservation);
  counted->allocated = Resource{};
  counted->owner_uids.clear();
  for (const auto& pod : pods) {
    if (pod->reservation_uid == counted->uid) {
      counted->allocated.add(pod->requests);
      counted->owner_uids.push_back(pod->uid);
    }
  }
  addRemaining(*this, *counted, true);
  reservations.push_back(std::move(counted));
  ++generation;
}

bool NodeInfo::removeReservation(const std::string& uid) {
  auto it = findReservation(reservations, uid);
  if (it == reservations.end())
    return false;
  addRemaining(*this, **it, false);
  reservations.erase(it);
  ++generation;
  return true;
}

const ReservationInfo* NodeInfo::reservation(std::string_view uid) const {
  for (const auto& r : reservations) {
    if (r->uid == uid)
      return r.get();
  }
  return nullptr;
}

void NodeInfo::addPod(std::shared_ptr<const PodInfo> pod) {
  moveOwner(*this, *pod, true);
  requested.add(pod->requests);
  non_zero_requested.milli_cpu += pod->non_zero_requests.milli_cpu;
  non_zero_requested.memory += pod->non_zero_requests.memory;
  for (const auto& p : pod->host_ports)
    used_ports.add(p);
  if (!pod->pod_affinity.empty() || !pod->pod_anti_affinity.empty())
    pods_with_affinity.push_back(pod);
  if (!pod->pod_anti_affinity.required.empty())
    pods_with_required_anti_affinity.push_back(pod);
  pods.push_back(std::move(pod));
  ++generation;
}

bool NodeInfo::removePod(const std::string& uid) {
  auto it = std::find_if(pods.begin(), pods.end(), [&](const auto& p) { return p->uid == uid; });
  if (it == pods.end())
    return false;
  const auto pod = *it;
  pods.erase(it);
  auto drop = [&](auto& list) {
    std::erase_if(list, [&](const auto& p) { return p->uid == uid; });
  };
  drop(pods_with_affinity);
  drop(pods_with_required_anti_affinity);
  requested.subtract(pod->requests);
  moveOwner(*this, *pod, false);
  non_zero_requested.milli_cpu -= pod->non_zero_requests.milli_cpu;
  non_zero_requested.memory -= pod->non_zero_requests.memory;
  for (const auto& p : pod->host_ports)
    used_ports.remove(p);
  ++generation;
  return true;
}

}  // namespace koord::roles::scheduler
