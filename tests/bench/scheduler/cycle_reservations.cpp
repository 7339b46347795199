#include "cycle_reservations.h"

#include <fmt/format.h>

#include <algorithm>

#include "framework/reservation_info.h"
#include "koord/apis/reservation.h"
#include "koord/kube/labels.h"
#include "koord/kube/quantity.h"

namespace koord::bench::scheduler {

namespace apis = koord::apis;
namespace kube = koord::kube;
using koord::roles::scheduler::ReservationState;

std::string ownerValue(std::size_t k) {
  return fmt::format("r-{:05}", k);
}

void labelOwner(PodInfo& pod, std::size_t i, std::size_t count) {
  if (count == 0 || i % 2 != 0)
    return;
  pod.labels[kOwnerLabel] = ownerValue((i / 2) % count);
}

namespace {

std::shared_ptr<const apis::Reservation> makeReservation(std::size_t k, const std::string& node,
                                                         const Resource& room) {
  auto r = std::make_shared<apis::Reservation>();
  r->name = fmt::format("bench-reservation-{:05}", k);
  r->uid = fmt::format("00000000-0000-0000-0001-{:012}", k);
  // As the API server's decoder compiles it: the selector beside the written labelSelector.
  apis::ReservationOwner owner;
  kube::LabelSelector selector;
  selector.match_labels[kOwnerLabel] = ownerValue(k);
  owner.selector = kube::Selector::fromSet(selector.match_labels);
  owner.label_selector = std::move(selector);
  r->owners.push_back(std::move(owner));
  // Several owners share one: an allocate-once reservation would be spent by the first.
  r->allocate_once = false;
  r->phase = apis::ReservationPhase::kAvailable;
  r->node_name = node;
  r->allocatable["cpu"] = kube::Quantity::fromMilli(room.milli_cpu);
  r->allocatable["memory"] = kube::Quantity::fromInt(room.memory);
  return r;
}

}  // namespace

std::size_t placeReservations(std::vector<std::shared_ptr<NodeInfo>>& nodes, std::size_t count,
                              const Resource& room, ReservationListener& listener) {
  count = std::min(count, nodes.size());
  for (std::size_t k = 0; k < count; ++k) {
    NodeInfo& node = *nodes[k * nodes.size() / count];
    auto object = makeReservation(k, node.name(), room);
    auto state = std::make_shared<ReservationState>();
    state->object = object;
    state->reserve_pod =
        std::make_shared<const PodInfo>(koord::roles::scheduler::reservePodOf(*object).value());
    // The cache's path for an Available reservation: its room withheld on its node.
    node.addReservation(koord::roles::scheduler::reservationInfoOf(*state));
    listener.onReservationAvailable(state);
  }
  return count;
}

}  // namespace koord::bench::scheduler
