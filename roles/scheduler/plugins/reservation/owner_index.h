// The Available reservations by the keys their owners name (pod UID or name, controller UID or
// name, a matchLabels pair), so that finding a pod's reservations looks up a few keys rather
// than matching every reservation's owners.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "framework/pod_info.h"
#include "koord/apis/reservation.h"

namespace koord::roles::scheduler::reservation {

class OwnerIndex {
 public:
  /// Adds or replaces (by UID).
  void add(std::shared_ptr<const apis::Reservation> r);
  void remove(const std::string& uid);
  /// The reservations whose owners match the pod (Koordinator's MatchReservationOwners), in
  /// no particular order.
  std::vector<std::shared_ptr<const apis::Reservation>> match(const PodInfo& pod) const;
  std::size_t size() const;

 private:
  struct Entry {
    std::shared_ptr<const apis::Reservation> reservation;
    std::vector<std::string> keys;
  };
  void removeLocked(const std::string& uid);

  mutable std::mutex mu_;
  std::unordered_map<std::string, Entry> by_uid_;
  /// Index key -> reservation UIDs.
  std::unordered_map<std::string, std::unordered_set<std::string>> postings_;
};

}  // namespace koord::roles::scheduler::reservation
