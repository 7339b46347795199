// The CPUs reservations hold on a node, as a pod matched to them may take them: Koordinator's
// reservation restore state for cpusets (what is left of each, and Restricted's bound).
#pragma once

#include <vector>

#include "framework/reservation_info.h"
#include "framework/reservation_nomination.h"
#include "koord/core/expected.h"
#include "plugins/nodenumaresource/cpu_set.h"
#include "plugins/nodenumaresource/node_allocation.h"
#include "plugins/nodenumaresource/pod_allocate.h"

namespace koord::roles::scheduler::nodenumaresource {

/// One matched reservation holding CPUs on the node.
struct ReservedCpus {
  const ReservationInfo* reservation = nullptr;
  /// Its CPUs that none of its owner pods holds yet.
  CpuSet remained;
  /// allocatePolicy Restricted: the pod's CPUs come from `remained` alone.
  bool restricted = false;
};

/// Of `matched`, those holding CPUs in `allocation` (recorded under the reservation's UID), in
/// the same order. Called under the node's lock.
std::vector<ReservedCpus> reservedCpusOf(const ReservationMatches::List& matched,
                                         const NodeAllocation& allocation);

/// The request of an owner pod of `reserved` (Koordinator v1.5's getResourceOptions): its
/// remaining CPUs are preferred, and on each NUMA node their cpu (amplified by the node's
/// ratio) is room the pod may take back, so a NUMA-aligned owner sees the reservation's NUMA
/// room as its own.
void reuseReservation(const NodeNumaView& node, const ReservedCpus& reserved,
                      AllocateRequest& request);

/// allocatePod with the reservation's remaining CPUs taken first (they count one hold fewer)
/// and their NUMA room reusable; a Restricted reservation refuses a pod needing more than
/// remain and binds it within them.
Expected<PodAllocation> allocateInReservation(const NodeNumaView& node, AllocateRequest request,
                                              const ReservedCpus& reserved);

}  // namespace koord::roles::scheduler::nodenumaresource
