// The reservations the Reservation plugin matched for a pod, by node, and the one it nominated
// on the chosen node: what plugins keeping CPUs or devices inside reservations read.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "framework/cycle_state.h"
#include "framework/node_info.h"
#include "framework/pod_info.h"
#include "framework/reservation_info.h"

namespace koord::roles::scheduler {

/// Written at BeforePreFilter (the matches) and at Reserve's nomination (the chosen one); read
/// by Filter on many threads in between.
struct ReservationMatches final : StateData {
  using List = std::vector<std::shared_ptr<const ReservationInfo>>;

  std::unique_ptr<StateData> clone() const override {
    return std::make_unique<ReservationMatches>(*this);
  }

  /// reservation-affinity: the pod may only go into a reservation.
  bool required = false;
  /// The matched reservations grouped by node, nodes in name order.
  struct Group {
    std::string node_name;
    /// The node's object, shared by its NodeInfo, the copy the transform made of it and any
    /// copy a later point makes: what Filter and Score recognise the node by.
    std::shared_ptr<const Node> node;
    List reservations;
  };
  std::vector<Group> by_node;
  /// Each group's Node -> its index in by_node, sorted by address. Filter and Score run on
  /// every node: comparing the Node pointer the NodeInfo holds touches no memory beyond the
  /// NodeInfo (the node's name or its reservation list would each be one more cache line).
  std::vector<std::pair<const Node*, std::size_t>> group_of;
  /// The reservation the pod takes on the node Reserve runs for; null when it takes none.
  std::shared_ptr<const ReservationInfo> nominated;

  /// The node's matched reservations; null when none matched there.
  const List* find(const NodeInfo& node) const;
};

/// The pod's matches; null when the pod matched no reservation (most pods) or the profile has
/// no Reservation plugin.
const ReservationMatches* reservationMatches(const CycleState& state);
ReservationMatches* reservationMatchesMutable(CycleState& state);
void writeReservationMatches(CycleState& state, std::unique_ptr<ReservationMatches> matches);

/// A plugin that picks, on the node the pod was placed on, the reservation it takes. The
/// framework asks it before the Reserve plugins run, so each of them reads the same choice
/// (Koordinator's ReservationNominator).
class ReservationNominator {
 public:
  virtual ~ReservationNominator() = default;
  virtual void nominateReservation(CycleState& state, const PodInfo& pod,
                                   const std::string& node) = 0;
};

}  // namespace koord::roles::scheduler
