#include "koord/app/leader_election_flags.h"

#include <unistd.h>

#include <random>

#include <fmt/format.h>

#include "koord/core/duration.h"

namespace koord::app {

std::string hostName() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0 || buf[0] == '\0')
    return "koord";
  return buf;
}

std::string leaderIdentity() {
  std::random_device rd;
  std::uniform_int_distribution<unsigned> hex(0, 15);
  std::string uuid;
  for (int i = 0; i < 32; ++i) {
    if (i == 8 || i == 12 || i == 16 || i == 20)
      uuid += '-';
    uuid += "0123456789abcdef"[hex(rd)];
  }
  return hostName() + "_" + uuid;
}

void addLeaderElectionFlags(FlagSet& flags, LeaderElectionOptions& o, std::string default_name,
                            std::string default_namespace) {
  flags.addBool("leader-elect", &o.leader_elect, true,
                "Start a leader election client and gain leadership before executing the main "
                "loop. Enable this when running replicated components for high availability.");
  flags.addDuration("leader-elect-lease-duration", &o.lease_duration, std::chrono::seconds(15),
                    "The duration that non-leader candidates will wait after observing a "
                    "leadership renewal until attempting to acquire leadership.");
  flags.addDuration("leader-elect-renew-deadline", &o.renew_deadline, std::chrono::seconds(10),
                    "The interval between attempts by the acting master to renew a leadership "
                    "slot before it stops leading. Must be less than the lease duration.");
  flags.addDuration("leader-elect-retry-period", &o.retry_period, std::chrono::seconds(2),
                    "The duration the clients should wait between attempting acquisition and "
                    "renewal of a leadership.");
  flags.addString("leader-elect-resource-lock", &o.resource_lock, "leases",
                  "The type of resource object that is used for locking during leader election.");
  flags.addString("leader-elect-resource-name", &o.resource_name, std::move(default_name),
                  "The name of resource object that is used for locking during leader election.");
  flags.addString("leader-elect-resource-namespace", &o.resource_namespace,
                  std::move(default_namespace),
                  "The namespace of resource object that is used for locking during leader "
                  "election.");
}

void validateLeaderElection(const LeaderElectionOptions& o) {
  if (o.resource_lock != "leases") {
    throw FlagError(fmt::format("--leader-elect-resource-lock={:?}: only \"leases\" is supported",
                                o.resource_lock));
  }
  if (!o.leader_elect)
    return;
  if (o.lease_duration <= o.renew_deadline) {
    throw FlagError(fmt::format(
        "--leader-elect-lease-duration ({}) must be greater than --leader-elect-renew-deadline "
        "({})",
        formatGoDuration(o.lease_duration), formatGoDuration(o.renew_deadline)));
  }
  // client-go's JitterFactor is 1.2: a renew deadline at or under it could expire between two
  // retries even on a healthy leader.
  if (o.renew_deadline.count() * 10 <= o.retry_period.count() * 12) {
    throw FlagError(
        fmt::format("--leader-elect-renew-deadline ({}) must be greater than 1.2 x "
                    "--leader-elect-retry-period ({})",
                    formatGoDuration(o.renew_deadline), formatGoDuration(o.retry_period)));
  }
  if (o.resource_name.empty() || o.resource_namespace.empty()) {
    throw FlagError(
        "--leader-elect-resource-name and --leader-elect-resource-namespace are required");
  }
}

}  // namespace koord::app
