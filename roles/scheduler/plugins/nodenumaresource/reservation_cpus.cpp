#include "plugins/nodenumaresource/reservation_cpus.h"

#include <cstdint>
#include <string>

#include "koord/apis/reservation.h"
#include "plugins/nodenumaresource/cpu_accumulator.h"

namespace koord::roles::scheduler::nodenumaresource {

std::vector<ReservedCpus> reservedCpusOf(const ReservationMatches::List& matched,
                                         const NodeAllocation& allocation) {
  std::vector<ReservedCpus> out;
  for (const auto& r : matched) {
    const PodAllocation* held = allocation.find(r->uid);
    if (held == nullptr || held->cpus.empty())
      continue;
    ReservedCpus entry;
    entry.reservation = r.get();
    entry.remained = held->cpus;
    for (const std::string& owner : r->owner_uids) {
      if (const PodAllocation* p = allocation.find(owner))
        entry.remained.subtract(p->cpus);
    }
    entry.restricted = r->object != nullptr &&
                       r->object->allocate_policy == apis::ReservationAllocatePolicy::kRestricted;
    out.push_back(std::move(entry));
  }
  return out;
}

void reuseReservation(const NodeNumaView& node, const ReservedCpus& reserved,
                      AllocateRequest& request) {
  request.preferred_cpus = reserved.remained;
  request.reusable.clear();
  for (int numa : node.topology.numaNodeIds()) {
    const int cpus = reserved.remained.intersectionSize(node.topology.cpusInNode(numa));
    if (cpus == 0)
      continue;
    NumaNodeResources room{.node = numa, .resources = {}};
    room.resources.set(NumaResource::kCpu,
                       amplify(std::int64_t{cpus} * 1000, node.cpu_amplification_ratio));
    request.reusable.push_back(std::move(room));
  }
}

Expected<PodAllocation> allocateInReservation(const NodeNumaView& node, AllocateRequest request,
                                              const ReservedCpus& reserved) {
  reuseReservation(node, reserved, request);
  if (!reserved.restricted)
    return allocatePod(node, request);
  if (request.request_cpu_bind && request.num_cpus_needed > reserved.remained.size())
    return invalidArgument(std::string(kErrNotEnoughCpus));
  // Every CPU outside the reservation is one the pod may not be bound to.
  CpuSet off_limits = node.topology.cpus() - reserved.remained;
  off_limits.unionWith(node.reserved_cpus);
  const NodeNumaView within{node.topology,      node.allocation, off_limits,
                            node.max_ref_count, node.zones,      node.cpu_amplification_ratio,
                            node.numa_strategy};
  return allocatePod(within, request);
}

}  // namespace koord::roles::scheduler::nodenumaresource
