// Plugins that keep their own view of the reservations holding room (the Reservation plugin's
// owner index) implement this; the scheduler finds them among the built plugins, as
// AssignedPodListener, and calls them from the Reservation informer's events.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "framework/reservation_info.h"

namespace koord::roles::scheduler {

class ReservationListener {
 public:
  virtual ~ReservationListener() = default;
  /// An Available reservation appeared or changed; it holds room on r->object->node_name (its
  /// reserve pod carries the Reservation's annotations).
  virtual void onReservationAvailable(std::shared_ptr<const ReservationState> r) = 0;
  /// The reservation of this UID holds no room any more (finished, deleted, not Available).
  virtual void onReservationGone(const std::string& uid) = 0;
};

/// The node each reservation a listener counts something for is on, by UID: the listener is told
/// only the UID when one goes. Thread-safe.
class ReservationNodes {
 public:
  /// Records `uid` on `node`; the node it was on before when that differs (the caller releases
  /// what it counted there).
  std::optional<std::string> place(const std::string& uid, const std::string& node) {
    std::lock_guard lock(mu_);
    auto [it, added] = nodes_.try_emplace(uid, node);
    if (added || it->second == node)
      return std::nullopt;
    return std::exchange(it->second, node);
  }
  /// Forgets `uid`; the node it was on, if any.
  std::optional<std::string> forget(std::string_view uid) {
    std::lock_guard lock(mu_);
    auto it = nodes_.find(uid);
    if (it == nodes_.end())
      return std::nullopt;
    std::string node = std::move(it->second);
    nodes_.erase(it);
    return node;
  }

 private:
  std::mutex mu_;
  std::map<std::string, std::string, std::less<>> nodes_;
};

}  // namespace koord::roles::scheduler
