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
  // Koordinator's secure serving: 0.0.0.0:10258.
  CHECK(o.secure_serving.bind_address == "0.0.0.0");
  CHECK(o.secure_serving.secure_port == 10258);
  CHECK(o.secure_serving.cert_dir.empty());
  CHECK_NOTHROW(validate(o));
  // Koordinator's descheduler has no --kubeconfig: its config file names it.
  CHECK_THROWS_WITH(flags.parse({"--kubeconfig=/x"}), Catch::Contains("--kubeconfig"));
}

TEST_CASE("descheduler secure-serving flags are checked", "[roles][descheduler]") {
  DeschedulerOptions o;
  FeatureGate gates(apis::managerFeatures());
  FlagSet flags("koord-descheduler");
  registerFlags(flags, o, gates);
  REQUIRE(flags.parse({"--secure-port=70000"}) == FlagSet::Outcome::kRun);
  CHECK_THROWS_WITH(validate(o), Catch::Contains("--secure-port=70000"));
  o.secure_serving.secure_port = 10258;
  o.secure_serving.tls_private_key_file = "/k.pem";
  CHECK_THROWS_WITH(validate(o), Catch::Contains("--tls-cert-file"));
  o.secure_serving.tls_cert_file = "/c.pem";
  CHECK_NOTHROW(validate(o));
}
