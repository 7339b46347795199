// ReservationArgs: the Reservation plugin's pluginConfig args with Koordinator's field names and
// defaults (the lifecycle controller's intervals among them), decoded strictly.
#pragma once

#include <boost/json/fwd.hpp>

#include <cstdint>
#include <string_view>

#include "framework/plugin.h"
#include "koord/kube/error.h"

namespace koord::roles::scheduler::reservation {

inline constexpr std::string_view kPluginName = "Reservation";
inline constexpr std::string_view kArgsKind = "ReservationArgs";

/// Default-constructed, it holds Koordinator's defaults (what decoding `null` gives).
struct ReservationArgs : PluginArgs {
  /// Preempting pods to make room for a reservation (not built: refused when true).
  bool enable_preemption = false;
  std::int32_t min_candidate_nodes_percentage = 10;
  std::int32_t min_candidate_nodes_absolute = 100;
  std::int32_t controller_workers = 1;
  /// How long a finished (Succeeded or Failed) reservation is kept before it is deleted.
  std::int64_t gc_duration_seconds = 86400;
  std::int64_t gc_interval_seconds = 60;
  bool disable_garbage_collection = false;
  /// How often the lifecycle controller walks every reservation (expiry, owners, lost nodes).
  std::int64_t resync_interval_seconds = 60;
};

/// Errors name the field ("gcDurationSeconds: must be positive"); unknown fields are errors.
kube::Expected<ReservationArgs> decodeReservationArgs(const boost::json::value* args,
                                                      std::string_view api_version);

}  // namespace koord::roles::scheduler::reservation
