// Koordinator's Reservation plugin: an owner pod is given back the room of the reservations it
// matches (BeforePreFilter), fits into one of them (Filter, by its allocatePolicy), prefers
// nodes where one fits (Score) and takes it at Reserve (the reservation-allocated annotation).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "framework/framework_handle.h"
#include "framework/plugin.h"
#include "framework/reservation_listener.h"
#include "framework/reservation_nomination.h"
#include "plugins/reservation/args.h"
#include "plugins/reservation/owner_index.h"

namespace koord::roles::scheduler::reservation {

class ReservationPlugin final : public PreFilterTransformer,
                                public PreFilterPlugin,
                                public FilterPlugin,
                                public PreScorePlugin,
                                public ScorePlugin,
                                public ReservePlugin,
                                public ReservationNominator,
                                public ReservationListener {
 public:
  ReservationPlugin(std::shared_ptr<const ReservationArgs> args, const FrameworkHandle& handle);

  std::string_view name() const override { return kPluginName; }
  const ReservationArgs& args() const { return *args_; }

  Status beforePreFilter(CycleState& state, const PodInfo& pod, const Snapshot& snapshot,
                         std::vector<std::shared_ptr<const NodeInfo>>& replacements) override;
  Status preFilter(CycleState& state, const PodInfo& pod) override;
  Status filter(const CycleState& state, const PodInfo& pod, const NodeInfo& node) const override;
  Status preScore(CycleState& state, const PodInfo& pod,
                  const std::vector<const NodeInfo*>& nodes) override;
  Status score(const CycleState& state, const PodInfo& pod, const NodeInfo& node,
               std::int64_t& score) const override;
  /// The tightest-fitting matched reservation on `node` (by order label, then remaining room).
  void nominateReservation(CycleState& state, const PodInfo& pod, const std::string& node) override;
  Status reserve(CycleState& state, const PodInfo& pod, const std::string& node) override;
  void unreserve(CycleState& state, const PodInfo& pod, const std::string& node) override;

  void onReservationAvailable(std::shared_ptr<const ReservationState> r) override;
  void onReservationGone(const std::string& uid) override;

  const OwnerIndex& index() const { return index_; }

 private:
  std::shared_ptr<const ReservationArgs> args_;
  const FrameworkHandle& handle_;
  OwnerIndex index_;
};

/// Whether `pod` fits into reservation `r` on `node` (a NodeInfo whose matched reservations'
/// room was given back, `matched` those reservations): Default and Aligned take from r's room
/// and the node's free room; Restricted takes what r reserves only from r.
bool fitsReservation(const PodInfo& pod, const NodeInfo& node,
                     const std::vector<std::shared_ptr<const ReservationInfo>>& matched,
                     const ReservationInfo& r);

}  // namespace koord::roles::scheduler::reservation
