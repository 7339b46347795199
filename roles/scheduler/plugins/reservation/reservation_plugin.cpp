#include "plugins/reservation/reservation_plugin.h"

#include <algorithm>
#include <charconv>
#include <limits>

#include <fmt/format.h>

#include "framework/pod_changes.h"
#include "framework/reservation_nomination.h"
#include "framework/snapshot.h"
#include "koord/core/log.h"

namespace koord::roles::scheduler::reservation {

namespace {

using Matched = ReservationMatches::List;

constexpr std::string_view kNoMatch = "node(s) had no reservation matching the pod";
constexpr std::string_view kNoRoom = "node(s) had no reservation with room for the pod";

// allocatable - requested per resource, the room the NodeInfo says is free.
bool fitsFree(const Resource& request, const NodeInfo& node, const Resource& withheld) {
  const Resource& alloc = node.node->allocatable;
  auto ok = [](std::int64_t want, std::int64_t total, std::int64_t used, std::int64_t held) {
    return want <= 0 || want <= total - used - held;
  };
  if (!ok(request.milli_cpu, alloc.milli_cpu, node.requested.milli_cpu, withheld.milli_cpu) ||
      !ok(request.memory, alloc.memory, node.requested.memory, withheld.memory) ||
      !ok(request.ephemeral_storage, alloc.ephemeral_storage, node.requested.ephemeral_storage,
          withheld.ephemeral_storage))
    return false;
  for (const auto& [name, want] : request.scalar) {
    if (!ok(want, alloc.scalarValue(name), node.requested.scalarValue(name),
            withheld.scalarValue(name)))
      return false;
  }
  return true;
}

Resource remainingOf(const Matched& matched, const ReservationInfo* except) {
  Resource out;
  for (const auto& m : matched) {
    if (m.get() != except)
      out.add(m->remaining());
  }
  return out;
}

// The pod's request with the resources r reserves taken out (Restricted: those come only from r).
Resource outsideOf(const Resource& request, const ReservationInfo& r) {
  Resource out = request;
  if (r.allocatable.milli_cpu > 0)
    out.milli_cpu = 0;
  if (r.allocatable.memory > 0)
    out.memory = 0;
  if (r.allocatable.ephemeral_storage > 0)
    out.ephemeral_storage = 0;
  for (const auto& [name, value] : r.allocatable.scalar) {
    if (value > 0)
      out.setScalar(name, 0);
  }
  return out;
}

bool withinReservation(const Resource& request, const ReservationInfo& r) {
  const Resource room = r.remaining();
  auto ok = [](std::int64_t want, std::int64_t reserved, std::int64_t left) {
    return reserved <= 0 || want <= left;
  };
  if (!ok(request.milli_cpu, r.allocatable.milli_cpu, room.milli_cpu) ||
      !ok(request.memory, r.allocatable.memory, room.memory) ||
      !ok(request.ephemeral_storage, r.allocatable.ephemeral_storage, room.ephemeral_storage))
    return false;
  for (const auto& [name, reserved] : r.allocatable.scalar) {
    if (!ok(request.scalarValue(name), reserved, room.scalarValue(name)))
      return false;
  }
  return true;
}

std::int64_t orderOf(const ReservationInfo& r) {
  const auto& labels = r.object->labels;
  auto it = labels.find(apis::kLabelReservationOrder);
  std::int64_t order = std::numeric_limits<std::int64_t>::max();
  if (it != labels.end()) {
    const std::string& v = it->second;
    std::int64_t parsed = 0;
    auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), parsed);
    if (ec == std::errc() && end == v.data() + v.size())
      order = parsed;
  }
  return order;
}

// Whether the pod may use the reservation, as Koordinator decides it: without reservation
// affinity any open reservation (its taints are not looked at: they bind only pods that ask for
// reservations); with it, what the affinity accepts (a name decides alone), and an unschedulable
// or terminating reservation only for a pod tolerating node.kubernetes.io/unschedulable.
bool accepts(const PodInfo& pod, const apis::Reservation& r, const kube::Labels& node_labels) {
  const bool open = !r.unschedulable && !r.terminating;
  const auto& affinity = pod.reservation_affinity;
  if (!affinity)
    return open;
  if (!affinity->matches(r, node_labels))
    return false;
  return !affinity->name.empty() || open || affinity->toleratesUnschedulable();
}

const Matched* matchedOn(const ReservationMatches* s, const NodeInfo& node) {
  return s == nullptr ? nullptr : s->find(node);
}

const ReservationInfo* bestFit(const PodInfo& pod, const NodeInfo& node, const Matched& matched) {
  const ReservationInfo* best = nullptr;
  for (const auto& m : matched) {
    if (!fitsReservation(pod, node, matched, *m))
      continue;
    if (best == nullptr) {
      best = m.get();
      continue;
    }
    const auto a = orderOf(*m);
    const auto b = orderOf(*best);
    if (a != b) {
      if (a < b)
        best = m.get();
      continue;
    }
    // The tightest fit leaves the larger reservations for larger pods.
    const Resource ra = m->remaining();
    const Resource rb = best->remaining();
    if (std::tie(ra.milli_cpu, ra.memory, m->name) < std::tie(rb.milli_cpu, rb.memory, best->name))
      best = m.get();
  }
  return best;
}

}  // namespace

bool fitsReservation(const PodInfo& pod, const NodeInfo& node, const Matched& matched,
                     const ReservationInfo& r) {
  if (r.object->allocate_policy == apis::ReservationAllocatePolicy::kRestricted) {
    return withinReservation(pod.requests, r) &&
           fitsFree(outsideOf(pod.requests, r), node, remainingOf(matched, nullptr));
  }
  return fitsFree(pod.requests, node, remainingOf(matched, &r));
}

ReservationPlugin::ReservationPlugin(std::shared_ptr<const ReservationArgs> args,
                                     const FrameworkHandle& handle)
    : args_(std::move(args)), handle_(handle) {
  if (args_->enable_preemption)
    KOORD_LOG_WARNING(
        "scheduler: Reservation args enablePreemption=true is accepted but has no effect: "
        "preempting pods for a reservation is not built");
  if (args_->controller_workers > 1)
    KOORD_LOG_WARNING(
        "scheduler: Reservation args controllerWorkers={} has no effect: one worker runs the "
        "reservation controller",
        args_->controller_workers);
}

Status ReservationPlugin::beforePreFilter(
    CycleState& state, const PodInfo& pod, const Snapshot& snapshot,
    std::vector<std::shared_ptr<const NodeInfo>>& replacements) {
  if (pod.reserve_pod || pod.reservation_ignored)
    return Status::success();
  if (!pod.reservation_affinity_error.empty())
    return Status::unresolvable(fmt::format("{}: {}", apis::kAnnotationReservationAffinity,
                                            pod.reservation_affinity_error));
  const bool required = pod.reservation_affinity.has_value();
  auto candidates = index_.match(pod);
  if (candidates.empty() && !required)
    return Status::success();
  std::sort(candidates.begin(), candidates.end(),
            [](const auto& a, const auto& b) { return a->node_name < b->node_name; });
  auto matched = std::make_unique<ReservationMatches>();
  matched->required = required;
  for (const auto& r : candidates) {
    const NodeInfo* node = snapshot.get(r->node_name);
    if (node == nullptr || !accepts(pod, *r, node->node->labels))
      continue;
    for (const auto& info : node->reservations) {
      if (info->uid != r->uid)
        continue;
      // An allocate-once reservation with an owner is spent, whatever its phase says yet.
      if (info->object->allocate_once && !info->owner_uids.empty())
        break;
      // Candidates come sorted by node: a node's group, if it has one yet, is the last.
      if (matched->by_node.empty() || matched->by_node.back().node_name != r->node_name) {
        matched->group_of.emplace_back(node->node.get(), matched->by_node.size());
        matched->by_node.push_back({r->node_name, node->node, {}});
      }
      matched->by_node.back().reservations.push_back(info);
      break;
    }
  }
  std::sort(matched->group_of.begin(), matched->group_of.end());
  for (const auto& group : matched->by_node) {
    state.preferred_nodes.push_back(group.node_name);
    const NodeInfo* node = snapshot.get(group.node_name);
    auto restored = std::make_shared<NodeInfo>(*node);
    const Resource room = remainingOf(group.reservations, nullptr);
    restored->requested.subtract(room);
    restored->non_zero_requested.milli_cpu -= room.milli_cpu;
    restored->non_zero_requested.memory -= room.memory;
    replacements.push_back(std::move(restored));
  }
  if (required && matched->by_node.empty())
    return Status::unresolvable("no reservation matches the pod's owners and reservation affinity");
  writeReservationMatches(state, std::move(matched));
  return Status::success();
}

Status ReservationPlugin::preFilter(CycleState& state, const PodInfo& /*pod*/) {
  // Pods without a matched reservation (most of them) leave Filter and Score out entirely.
  const auto* s = reservationMatches(state);
  if (s == nullptr)
    return Status::skip();
  // With one matched reservation per node and no Restricted one, Filter would only repeat
  // NodeResourcesFit's check on the node the transform gave the reservation's room back to
  // (Koordinator skips that check too, enableSkipReservationFitsNode); a pod that must go into a
  // reservation still needs Filter to refuse the other nodes.
  auto simple = [](const ReservationMatches::Group& g) {
    return g.reservations.size() == 1 && g.reservations.front()->object->allocate_policy !=
                                             apis::ReservationAllocatePolicy::kRestricted;
  };
  if (!s->required && std::all_of(s->by_node.begin(), s->by_node.end(), simple))
    return Status::skip();
  return Status::success();
}

Status ReservationPlugin::filter(const CycleState& state, const PodInfo& pod,
                                 const NodeInfo& node) const {
  const auto* s = reservationMatches(state);
  const Matched* matched = matchedOn(s, node);
  if (matched == nullptr)
    return s != nullptr && s->required ? Status::unresolvable(std::string(kNoMatch))
                                       : Status::success();
  for (const auto& r : *matched) {
    if (fitsReservation(pod, node, *matched, *r))
      return Status::success();
  }
  // No reservation takes it; without reservation affinity it may still use the node's own room.
  if (!s->required && fitsFree(pod.requests, node, remainingOf(*matched, nullptr)))
    return Status::success();
  return Status::unschedulable(std::string(kNoRoom));
}

Status ReservationPlugin::preScore(CycleState& state, const PodInfo& /*pod*/,
                                   const std::vector<const NodeInfo*>& /*nodes*/) {
  const auto* s = reservationMatches(state);
  return s == nullptr || s->by_node.empty() ? Status::skip() : Status::success();
}

Status ReservationPlugin::score(const CycleState& state, const PodInfo& pod, const NodeInfo& node,
                                std::int64_t& score) const {
  const Matched* matched = matchedOn(reservationMatches(state), node);
  score = matched != nullptr && bestFit(pod, node, *matched) != nullptr ? kMaxNodeScore : 0;
  return Status::success();
}

void ReservationPlugin::nominateReservation(CycleState& state, const PodInfo& pod,
                                            const std::string& node) {
  auto* s = reservationMatchesMutable(state);
  if (pod.reserve_pod || s == nullptr)
    return;
  s->nominated.reset();
  const NodeInfo* info = handle_.snapshot().get(node);
  const Matched* matched = info == nullptr ? nullptr : s->find(*info);
  if (matched == nullptr)
    return;
  const ReservationInfo* chosen = bestFit(pod, *info, *matched);
  for (const auto& r : *matched) {
    if (r.get() == chosen)
      s->nominated = r;
  }
}

Status ReservationPlugin::reserve(CycleState& state, const PodInfo& pod, const std::string& node) {
  const auto* s = reservationMatches(state);
  if (pod.reserve_pod || s == nullptr)
    return Status::success();
  const ReservationInfo* chosen = s->nominated.get();
  if (chosen == nullptr || chosen->node_name != node) {
    if (s->required)
      return Status::unschedulable(std::string(kNoRoom));
    return Status::success();
  }
  podChanges(state).setAnnotation(apis::kAnnotationReservationAllocated,
                                  apis::reservationAllocatedValue(chosen->name, chosen->uid));
  return Status::success();
}

void ReservationPlugin::unreserve(CycleState& state, const PodInfo& /*pod*/,
                                  const std::string& /*node*/) {
  if (findPodChanges(state) != nullptr)
    podChanges(state).removeAnnotation(apis::kAnnotationReservationAllocated);
}

void ReservationPlugin::onReservationAvailable(std::shared_ptr<const ReservationState> r) {
  index_.add(r->object);
}

void ReservationPlugin::onReservationGone(const std::string& uid) {
  index_.remove(uid);
}

}  // namespace koord::roles::scheduler::reservation
