#include "framework/reservation_nomination.h"

#include <algorithm>

namespace koord::roles::scheduler {

namespace {

// The Reservation plugin's state key since before other plugins read it.
const StateKey kMatchesKey("Reservation/matched");

}  // namespace

const ReservationMatches::List* ReservationMatches::find(const NodeInfo& node) const {
  const Node* key = node.node.get();
  auto it = std::lower_bound(group_of.begin(), group_of.end(), key,
                             [](const auto& e, const Node* p) { return e.first < p; });
  return it != group_of.end() && it->first == key ? &by_node[it->second].reservations : nullptr;
}

const ReservationMatches* reservationMatches(const CycleState& state) {
  return state.read<ReservationMatches>(kMatchesKey);
}

ReservationMatches* reservationMatchesMutable(CycleState& state) {
  return state.readMutable<ReservationMatches>(kMatchesKey);
}

void writeReservationMatches(CycleState& state, std::unique_ptr<ReservationMatches> matches) {
  state.write(kMatchesKey, std::move(matches));
}

}  // namespace koord::roles::scheduler
