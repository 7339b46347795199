// The cycle bench's reservations: Available Reservations built by hand as the informer would
// project them, put into the NodeInfos (their room counted in requested, as the cache does) and
// into the Reservation plugin's owner index (as the scheduler's informer handlers do), so that
// the cycle pays what a real one pays: the owner lookup, the NodeInfo swap, Filter and Score.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "framework/node_info.h"
#include "framework/pod_info.h"
#include "framework/reservation_listener.h"
#include "framework/resource.h"

namespace koord::bench::scheduler {

using koord::roles::scheduler::NodeInfo;
using koord::roles::scheduler::PodInfo;
using koord::roles::scheduler::ReservationListener;
using koord::roles::scheduler::Resource;

/// The owner label pods carry and reservation k selects (matchLabels bench-owner=r-NNNN).
inline constexpr const char* kOwnerLabel = "bench-owner";
std::string ownerValue(std::size_t k);

/// Pod i's reservation: even pods are owners of reservation (i/2) % count, odd pods of none.
/// The same labels go on the pods of the run without reservations, so both runs schedule the
/// very same pods.
void labelOwner(PodInfo& pod, std::size_t i, std::size_t count);

/// Reservation k of `count`, on nodes[k * nodes.size() / count], Available, allocateOnce false,
/// keeping `room` for its owners. Each is added to its NodeInfo and handed to `listener` (the
/// plugin's index). Returns how many went in (count, unless there are fewer nodes).
std::size_t placeReservations(std::vector<std::shared_ptr<NodeInfo>>& nodes, std::size_t count,
                              const Resource& room, ReservationListener& listener);

}  // namespace koord::bench::scheduler
