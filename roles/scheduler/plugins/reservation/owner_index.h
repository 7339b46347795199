// The Available reservations by the keys their owners name (pod UID or name, controller UID or
// name, a matchLabels pair), so that finding a pod's reservations looks up a few keys rather
// than matching every reservation's owners.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
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

  /// What an owner is indexed under: the most selective part it names.
  enum class KeyKind : std::uint8_t {
    kPodUid,
    kPodName,
    kControllerUid,
    kControllerName,
    kLabel,
    kAny
  };
  static constexpr std::size_t kKeyKinds = 6;

 private:
  /// A pod's side of a key, looked up without building a string: every pod is matched once per
  /// cycle, owner or not.
  struct KeyView {
    KeyKind kind;
    std::string_view a, b;
  };
  struct Key {
    KeyKind kind;
    std::string a, b;
    KeyView view() const { return {kind, a, b}; }
  };
  struct KeyHash {
    using is_transparent = void;
    std::size_t operator()(const KeyView& k) const;
    std::size_t operator()(const Key& k) const { return (*this)(k.view()); }
  };
  struct KeyEq {
    using is_transparent = void;
    static bool same(const KeyView& x, const KeyView& y) {
      return x.kind == y.kind && x.a == y.a && x.b == y.b;
    }
    bool operator()(const Key& x, const Key& y) const { return same(x.view(), y.view()); }
    bool operator()(const KeyView& x, const Key& y) const { return same(x, y.view()); }
    bool operator()(const Key& x, const KeyView& y) const { return same(x.view(), y); }
  };
  struct Entry {
    std::shared_ptr<const apis::Reservation> reservation;
    std::vector<Key> keys;
  };
  static Key ownerKey(const apis::ReservationOwner& o);
  void removeLocked(const std::string& uid);

  mutable std::mutex mu_;
  std::unordered_map<std::string, Entry> by_uid_;
  /// Index key -> the entries (in by_uid_, whose nodes do not move) indexed under it.
  std::unordered_map<Key, std::vector<const Entry*>, KeyHash, KeyEq> postings_;
  /// Keys per kind, so that a pod skips the lookups no owner can answer.
  std::array<std::size_t, kKeyKinds> keys_of_kind_{};
};

}  // namespace koord::roles::scheduler::reservation
