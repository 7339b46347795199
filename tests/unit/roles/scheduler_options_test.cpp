#include "scheduler_options.h"

#include <catch2/catch.hpp>

#include "koord/apis/features.h"

using namespace koord;
using namespace koord::roles::scheduler;

TEST_CASE("scheduler flags and defaults", "[roles][scheduler]") {
  SchedulerOptions o;
  FeatureGate gates(apis::schedulerFeatures());
  FlagSet flags("koord-scheduler");
  registerFlags(flags, o, gates);
  REQUIRE(flags.parse({"--config=/etc/koord/scheduler.yaml", "--leader-elect=false", "--kubeconfig",
                       "/root/.kube/config"}) == FlagSet::Outcome::kRun);
  CHECK(o.config == "/etc/koord/scheduler.yaml");
  CHECK_FALSE(o.leader_election.leader_elect);
  CHECK(o.kubeconfig == "/root/.kube/config");
  CHECK(o.port == 10251);
  CHECK(o.address == "0.0.0.0");
  CHECK(o.leader_election.resource_name == "kube-scheduler");
  CHECK_NOTHROW(validate(o));
  CHECK(gates.enabled("DynamicSchedulerCheck"));
  flags.parse({"--port=70000"});
  CHECK_THROWS_WITH(validate(o), Catch::Contains("port"));
}
