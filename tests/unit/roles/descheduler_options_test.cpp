#include "descheduler_options.h"

#include <catch2/catch.hpp>

#include "koord/apis/features.h"

using namespace koord;
using namespace koord::roles::descheduler;

TEST_CASE("descheduler flags and defaults", "[roles][descheduler]") {
  DeschedulerOptions o;
  FeatureGate gates(apis::managerFeatures());
  FlagSet flags("koord-descheduler");
  registerFlags(flags, o, gates);
  REQUIRE(flags.parse({"--config=/etc/d.yaml", "--feature-gates=DisablePVCReservation=true"}) ==
          FlagSet::Outcome::kRun);
  app::applyCommonOptions(o.common, &gates);
  CHECK(gates.enabled("DisablePVCReservation"));
  CHECK(o.config == "/etc/d.yaml");
  CHECK(o.leader_election.leader_elect);
  CHECK(o.leader_election.resource_name == "koord-descheduler");
  CHECK(o.leader_election.resource_namespace == "koordinator-system");
  CHECK(o.port == 10251);
  CHECK_NOTHROW(validate(o));
  // Koordinator's descheduler has no --kubeconfig: its config file names it.
  CHECK_THROWS_WITH(flags.parse({"--kubeconfig=/x"}), Catch::Contains("--kubeconfig"));
}
