#include "koord/app/leader_election_flags.h"

#include <catch2/catch.hpp>

using namespace koord;
using namespace std::chrono_literals;

TEST_CASE("leader election timings follow client-go's safety rule", "[roles][leaderelection]") {
  app::LeaderElectionOptions o;
  FlagSet flags("x");
  app::addLeaderElectionFlags(flags, o, "koord-descheduler", "koordinator-system");
  REQUIRE(flags.parse(std::vector<std::string>{}) == FlagSet::Outcome::kRun);
  CHECK(o.lease_duration == 15s);
  CHECK(o.renew_deadline == 10s);
  CHECK(o.retry_period == 2s);
  CHECK_NOTHROW(app::validateLeaderElection(o));

  flags.parse({"--leader-elect-lease-duration=10s"});
  CHECK_THROWS_WITH(app::validateLeaderElection(o), Catch::Contains("lease-duration"));
  flags.parse({"--leader-elect-retry-period=9s"});
  CHECK_THROWS_WITH(app::validateLeaderElection(o), Catch::Contains("1.2"));
  flags.parse({"--leader-elect-retry-period=8s"});  // 10s > 9.6s: allowed
  CHECK_NOTHROW(app::validateLeaderElection(o));
  flags.parse({"--leader-elect-resource-lock=endpoints"});
  CHECK_THROWS_WITH(app::validateLeaderElection(o), Catch::Contains("leases"));
  flags.parse({"--leader-elect=false", "--leader-elect-lease-duration=1s"});
  CHECK_NOTHROW(app::validateLeaderElection(o));
}
