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

// kubeadm's kube-scheduler manifest, as an operator switching the image passes it.
TEST_CASE("scheduler accepts the flags of kube-scheduler's manifests", "[roles][scheduler]") {
  SchedulerOptions o;
  FeatureGate gates(apis::schedulerFeatures());
  FlagSet flags("koord-scheduler");
  registerFlags(flags, o, gates);
  CHECK(o.secure_serving.secure_port == 10259);
  CHECK(o.secure_serving.bind_address == "0.0.0.0");
  REQUIRE(flags.parse({"--authentication-kubeconfig=/etc/kubernetes/scheduler.conf",
                       "--authorization-kubeconfig=/etc/kubernetes/scheduler.conf",
                       "--bind-address=127.0.0.1", "--kubeconfig=/etc/kubernetes/scheduler.conf",
                       "--leader-elect=true", "--port=0", "--secure-port=10259",
                       "--authentication-skip-lookup=true", "--profiling=false"}) ==
          FlagSet::Outcome::kRun);
  CHECK(o.secure_serving.bind_address == "127.0.0.1");
  CHECK(o.port == 0);
  CHECK(o.authentication_kubeconfig == "/etc/kubernetes/scheduler.conf");
  CHECK(o.authentication_skip_lookup);
  CHECK_FALSE(o.profiling);
  CHECK(flags.changed("authorization-kubeconfig"));
  CHECK_NOTHROW(validate(o));
  flags.parse({"--secure-port=-1"});
  CHECK_THROWS(validate(o));
}
