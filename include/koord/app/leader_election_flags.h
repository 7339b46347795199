// The --leader-elect* flags kube-scheduler and koord-descheduler share (component-base names
// and defaults), with client-go's rule that lease > renew deadline > 1.2 x retry period.
#pragma once

#include <chrono>
#include <string>

#include "koord/core/flags.h"

namespace koord::app {

struct LeaderElectionOptions {
  bool leader_elect = true;
  std::chrono::milliseconds lease_duration{15000};
  std::chrono::milliseconds renew_deadline{10000};
  std::chrono::milliseconds retry_period{2000};
  std::string resource_lock = "leases";
  std::string resource_name;
  std::string resource_namespace;
};

void addLeaderElectionFlags(FlagSet& flags, LeaderElectionOptions& o, std::string default_name,
                            std::string default_namespace);

/// This machine's hostname ("koord" when it has none): Events' source host.
std::string hostName();
/// Koordinator's lease identity: hostname + "_" + a random UUID, unique per process so that a
/// restarted replica never mistakes the old lease record for its own.
std::string leaderIdentity();

/// Throws FlagError when the timings cannot give safe leadership or the lock type is not leases.
void validateLeaderElection(const LeaderElectionOptions& o);

}  // namespace koord::app
