#include "manager_options.h"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <map>

#include "koord/apis/features.h"
#include "koord/core/log.h"

using namespace koord;
using namespace koord::roles::manager;

namespace {
std::map<std::string, std::string> g_env;
const char* fakeEnv(const char* name) {
  auto it = g_env.find(name);
  return it == g_env.end() ? nullptr : it->second.c_str();
}
}  // namespace

TEST_CASE("manager flags carry Koordinator's names and defaults", "[roles][manager]") {
  ManagerOptions o;
  FeatureGate gates(apis::managerFeatures());
  FlagSet flags("koord-manager");
  registerFlags(flags, o, gates);
  REQUIRE(flags.parse(std::vector<std::string>{}) == FlagSet::Outcome::kRun);
  CHECK(o.metrics_addr == ":8080");
  CHECK(o.health_probe_addr == ":8000");
  CHECK(o.enable_leader_election);
  CHECK(o.leader_election_namespace == "koordinator-system");
  CHECK(o.config_namespace == "koordinator-system");
  CHECK(o.slo_config_name == "slo-controller-config");
  CHECK(o.rest_config_qps == 30);
  CHECK(o.rest_config_burst == 50);
  CHECK(o.controllers == std::vector<std::string>{"*"});
  CHECK(enabledControllers(o.controllers) == knownControllers());
  CHECK(gates.enabled("PodMutatingWebhook"));
  CHECK(gates.enabled("PodValidatingWebhook"));
  CHECK_FALSE(gates.enabled("ConfigMapValidatingWebhook"));
}

TEST_CASE("manager accepts its install guide's command line", "[roles][manager]") {
  ManagerOptions o;
  FeatureGate gates(apis::managerFeatures());
  FlagSet flags("koord-manager");
  registerFlags(flags, o, gates);
  REQUIRE(
      flags.parse({"--enable-leader-election", "--metrics-addr=:8080", "--health-probe-addr=:8000",
                   "--logtostderr=true", "--leader-election-namespace=koord",
                   "--config-namespace=koord", "-v=4", "--feature-gates=PodMutatingWebhook=false",
                   "--sync-period=0", "--controllers=*,-quotaprofile"}) == FlagSet::Outcome::kRun);
  app::applyCommonOptions(o.common, &gates);
  CHECK_NOTHROW(validate(o));
  CHECK_FALSE(gates.enabled("PodMutatingWebhook"));
  CHECK(o.common.verbosity == 4);
  auto on = enabledControllers(o.controllers);
  CHECK(std::find(on.begin(), on.end(), "quotaprofile") == on.end());
  CHECK(on.size() == knownControllers().size() - 1);
  koord::log::setVerbosity(0);
}

TEST_CASE("manager refuses unknown controllers, plugins and gates by name", "[roles][manager]") {
  CHECK_THROWS_WITH(enabledControllers({"nodemetric", "bogus"}), Catch::Contains("bogus"));
  CHECK_THROWS_WITH(enabledControllers({"-nope"}), Catch::Contains("nope"));
  CHECK(enabledControllers({"nodemetric", "nodeslo"}) ==
        std::vector<std::string>{"nodemetric", "nodeslo"});
  ManagerOptions o;
  o.noderesource_plugins = {"BatchResource", "Turbo"};
  CHECK_THROWS_WITH(validate(o), Catch::Contains("Turbo"));
  // Koordinator's "*" and "-Name" forms; a "-" before an unknown name is still unknown.
  o.noderesource_plugins = {"*", "-BatchResource"};
  CHECK_NOTHROW(validate(o));
  o.noderesource_plugins = {"*", "-Turbo"};
  CHECK_THROWS_WITH(validate(o), Catch::Contains("-Turbo"));
  o.noderesource_plugins = {"-"};
  CHECK_THROWS(validate(o));
  o = {};
  o.sync_period = "soon";
  CHECK_THROWS_WITH(validate(o), Catch::Contains("sync-period"));
  FeatureGate gates(apis::managerFeatures());
  o = {};
  o.common.feature_gates = "Bogus=true";
  CHECK_THROWS_AS(app::applyCommonOptions(o.common, &gates), FlagError);
}

TEST_CASE("manager reads the webhook environment strictly", "[roles][manager]") {
  ManagerOptions o;
  g_env = {{"WEBHOOK_PORT", "19876"}, {"POD_NAMESPACE", "koord"}};
  readEnvironment(o, &fakeEnv);
  CHECK(o.webhook_port == 19876);
  CHECK(o.pod_namespace == "koord");
  CHECK(o.secret_name == "koordinator-webhook-certs");
  // The scheduler's service account follows the install's namespace unless named.
  CHECK(schedulerUsernames(o) ==
        std::vector<std::string>{"system:serviceaccount:koord:koord-scheduler"});
  o.scheduler_usernames = {"system:serviceaccount:x:my-scheduler"};
  CHECK(schedulerUsernames(o) == std::vector<std::string>{"system:serviceaccount:x:my-scheduler"});
  for (const char* bad : {"abc", "0", "70000", "9876x"}) {
    g_env = {{"WEBHOOK_PORT", bad}};
    ManagerOptions fresh;
    CHECK_THROWS_AS(readEnvironment(fresh, &fakeEnv), app::ConfigError);
    CHECK(fresh.webhook_port == 9876);
  }
  g_env.clear();
}

TEST_CASE("manager takes the apiserver's webhook client CA and names", "[roles][manager]") {
  {
    ManagerOptions o;
    FeatureGate gates(apis::managerFeatures());
    FlagSet flags("koord-manager");
    registerFlags(flags, o, gates);
    REQUIRE(flags.parse({"--webhook-client-ca-file=/etc/koord/apiserver-ca.pem",
                         "--webhook-client-cn=kube-apiserver,front-proxy-client"}) ==
            FlagSet::Outcome::kRun);
    CHECK(o.webhook_client_ca_file == "/etc/koord/apiserver-ca.pem");
    CHECK(o.webhook_client_cn == std::vector<std::string>{"kube-apiserver", "front-proxy-client"});
    CHECK_NOTHROW(validate(o));
  }
  {
    // The environment, in the WEBHOOK_* style of the rest; the command line wins over it.
    ::setenv("WEBHOOK_CLIENT_CA_FILE", "/env/ca.pem", 1);
    ::setenv("WEBHOOK_CLIENT_CN", "kube-apiserver", 1);
    ManagerOptions o;
    FeatureGate gates(apis::managerFeatures());
    FlagSet flags("koord-manager");
    registerFlags(flags, o, gates);
    REQUIRE(flags.parse({"--webhook-client-cn=other"}) == FlagSet::Outcome::kRun);
    ::unsetenv("WEBHOOK_CLIENT_CA_FILE");
    ::unsetenv("WEBHOOK_CLIENT_CN");
    CHECK(o.webhook_client_ca_file == "/env/ca.pem");
    CHECK(o.webhook_client_cn == std::vector<std::string>{"other"});
  }
  ManagerOptions names_only;
  names_only.webhook_client_cn = {"kube-apiserver"};
  CHECK_THROWS_WITH(validate(names_only), Catch::Contains("--webhook-client-ca-file"));
}
