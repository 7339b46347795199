// What the scheduler's main derives from its flags and configuration file before it runs: the
// checked configuration, the API client's settings, the lease and the Scheduler itself.
#pragma once

#include <memory>

#include "config/scheduler_config.h"
#include "koord/app/leader_gate.h"
#include "koord/core/metrics.h"
#include "koord/kube/rest_client.h"
#include "reservation/reservation_controller.h"
#include "scheduler_options.h"

namespace koord::roles::scheduler {

class Plugin;
class Scheduler;
class SchedulerApi;

/// The configuration file, checked in full before anything starts (the defaults without
/// --config). Throws app::ConfigError naming an unknown plugin, extension point, field or arg.
config::SchedulerConfig loadConfig(const SchedulerOptions& o);

/// The API client's settings; throws app::ConfigError when there is no API server to talk to.
kube::RestConfig restConfig(const SchedulerOptions& o, const config::SchedulerConfig& cfg);

/// The lease from --leader-elect* without --config, from the file's leaderElection with it.
app::LeaderGateOptions leaderGateOptions(const SchedulerOptions& o,
                                         const config::SchedulerConfig& cfg);

/// The Scheduler of `cfg`'s profiles; throws app::ConfigError for a profile it cannot build.
std::unique_ptr<Scheduler> makeScheduler(const config::SchedulerConfig& cfg, SchedulerApi& api,
                                         metrics::Registry& metrics);

/// The reservation controller's intervals from the Reservation plugin's args (`plugin`, null when
/// no profile enables it: Koordinator's defaults then).
reservation::ControllerOptions reservationControllerOptions(const Plugin* plugin);

}  // namespace koord::roles::scheduler
