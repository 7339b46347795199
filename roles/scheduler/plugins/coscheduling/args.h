// CoschedulingArgs: the Coscheduling plugin's pluginConfig args with Koordinator's field names
// and defaults (a gang's default Permit wait, the PodGroup controller's workers), decoded strictly.
#pragma once

#include <boost/json/fwd.hpp>

#include <chrono>
#include <cstdint>
#include <string_view>

#include "framework/plugin.h"
#include "koord/kube/error.h"

namespace koord::roles::scheduler::coscheduling {

inline constexpr std::string_view kPluginName = "Coscheduling";
inline constexpr std::string_view kArgsKind = "CoschedulingArgs";

/// Default-constructed, it holds Koordinator's defaults (what decoding `null` gives).
struct CoschedulingArgs : PluginArgs {
  /// How long a gang's members wait at Permit for the rest, unless the gang says otherwise.
  std::chrono::nanoseconds default_timeout = std::chrono::seconds(600);
  /// The PodGroup status controller's workers.
  std::int64_t controller_workers = 1;
  /// Strict gangs normally let a member through PreFilter once per gang scheduling cycle; this
  /// turns that check off.
  bool skip_check_schedule_cycle = false;
  /// Accepted as later Koordinator releases name it; koord does not preempt for gangs, and the
  /// plugin says so at startup when it is true.
  bool enable_preemption = false;
  /// Koordinator v1.8's network-topology-aware gang placement (its chart sets it); accepted and
  /// named at startup as having no effect.
  bool aware_network_topology = false;
};

/// Errors name the field ("defaultTimeout: must not be negative"); unknown fields are errors.
kube::Expected<CoschedulingArgs> decodeCoschedulingArgs(const boost::json::value* args,
                                                        std::string_view api_version);

}  // namespace koord::roles::scheduler::coscheduling
