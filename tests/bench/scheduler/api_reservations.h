// The API driver's reservations (--reservations N): N Reservations spread over the run's nodes,
// each made Available before the pods come, half the pods owners of one by label. The room each
// keeps is what its owner pods request, up to half a node (api_bench.cpp sizes them).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "koord/kube/error.h"
#include "koord/kube/rest_client.h"

namespace koord::bench::scheduler_api {

inline const koord::kube::ResourceRef kReservations{
    "scheduling.koordinator.sh", "v1alpha1", "reservations", "", "", ""};

/// The label owner pods carry; reservation k selects <run>-r<k>.
inline constexpr const char* kOwnerLabel = "bench-owner";
std::string ownerValue(const std::string& run, int k);
/// Pod i's reservation among `count` (even pods own reservation (i / 2) % count), -1 for none.
int ownedReservation(int i, int count);

struct ReservationPlan {
  std::string name;
  std::string node;
  std::string owner;  // the owner label's value
  std::int64_t cpu_milli = 0;
  std::int64_t memory = 0;
};

/// How the reservations become Available.
enum class Availability {
  /// The scheduler under test places each (its template's spec.nodeName pins it to plan.node)
  /// and writes the status itself: its reservation path is part of the setup.
  kScheduled,
  /// The driver writes phase Available, nodeName, allocatable and the Scheduled/Ready
  /// conditions through the status subresource; the template names a scheduler nobody runs,
  /// so that no scheduler races the write.
  kWritten,
};

/// Creates the planned reservations (labels bench=sched, bench-run=<run>) with `inflight` in
/// flight and waits up to `timeout_s` until the apiserver lists every one Available on its
/// planned node. Returns the seconds from the first create to that, or what went wrong.
koord::kube::Expected<double> makeAvailable(koord::kube::RestClient& c,
                                            const std::vector<ReservationPlan>& plan,
                                            const std::string& run,
                                            const std::string& scheduler_name, Availability how,
                                            int inflight, double timeout_s);

/// Deletes every bench reservation (label bench=sched) until none is listed; true also when the
/// apiserver serves no Reservation API. Returns how many it deleted in `deleted`.
bool deleteReservations(koord::kube::RestClient& c, int window, std::size_t& deleted);

}  // namespace koord::bench::scheduler_api
