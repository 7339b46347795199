// DeschedulerConfiguration as Koordinator's chart and users write it: defaults, the merge of
// Koordinator's default plugins with a profile's lists, args handed to each plugin, and every
// refusal naming its path.
#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <string>

#include "config/descheduler_config.h"
#include "koord/kube/strict_fields.h"

using namespace koord::roles::descheduler;
using namespace koord::roles::descheduler::config;
namespace json = boost::json;

namespace {

struct CountArgs final : PluginArgs {
  std::int32_t count = 7;  // the default
};

// A plugin that evicts and filters, standing in for MigrationController and LowNodeLoad.
class Stub final : public EvictPlugin, public FilterPlugin, public BalancePlugin {
 public:
  std::string_view name() const override { return "Stub"; }
  bool evict(const Pod&, const EvictOptions&) override { return false; }
  bool filter(const Pod&) const override { return false; }
  koord::Expected<void> balance(const std::vector<const Node*>&) override { return {}; }
};

koord::Expected<CountArgs> decodeCount(const json::value* v) {
  CountArgs a;
  if (v == nullptr)
    return a;
  const auto& o = v->get_object();
  if (auto known = koord::kube::strict::rejectUnknownFields(o, {"count"}, ""); !known)
    return known.error();
  auto c = koord::kube::strict::int32Field(o, "count", "");
  if (!c)
    return c.error();
  a.count = c->value_or(7);
  return a;
}

PluginFactory stubFactory() {
  return makePluginFactory<CountArgs>(
      decodeCount,
      [](std::shared_ptr<const CountArgs>, FrameworkHandle&) { return std::make_shared<Stub>(); },
      "wrong args");
}

PluginRegistry registry(bool with_migration = true) {
  PluginRegistry r;
  if (with_migration)
    r.add("MigrationController", stubFactory());
  r.add("LowNodeLoad", stubFactory());
  r.add("RemoveFailedPods", stubFactory());
  return r;
}

DeschedulerConfig parse(const std::string& text, bool with_migration = true) {
  auto c = parseDeschedulerConfigText(text, registry(with_migration));
  INFO((c ? std::string() : c.error().message));
  REQUIRE(c.has_value());
  return std::move(*c);
}

std::string errorOf(const std::string& text) {
  auto c = parseDeschedulerConfigText(text, registry());
  REQUIRE_FALSE(c.has_value());
  return c.error().message;
}

}  // namespace

TEST_CASE("an empty configuration is one koord-descheduler profile with Koordinator's defaults") {
  const auto c = parse("");
  REQUIRE(c.profiles.size() == 1);
  CHECK(c.profiles[0].name == "koord-descheduler");
  CHECK(c.profiles[0].at(ExtensionPoint::kEvict) ==
        std::vector<std::string>{"MigrationController"});
  CHECK(c.profiles[0].at(ExtensionPoint::kFilter) ==
        std::vector<std::string>{"MigrationController"});
  CHECK(c.profiles[0].at(ExtensionPoint::kBalance).empty());
  CHECK(c.leader_election.resource_name == "koord-descheduler");
  CHECK(c.leader_election.resource_namespace == "koordinator-system");
  CHECK(c.descheduling_interval.count() == 0);
  CHECK_FALSE(c.dry_run);
  CHECK(c.healthz_bind_address == "0.0.0.0:10251");
  CHECK(c.dropped_default_plugins.empty());
}

TEST_CASE("a default plugin this build lacks is dropped and listed") {
  const auto c = parse("", /*with_migration=*/false);
  CHECK(c.profiles[0].at(ExtensionPoint::kEvict).empty());
  CHECK(c.dropped_default_plugins == std::vector<std::string>{"MigrationController"});
}

TEST_CASE("Koordinator's shipped descheduler configuration decodes") {
  // The content of Koordinator's config/manager/descheduler-config.yaml (its ConfigMap key
  // koord-descheduler-config), as facts: field names and values.
  const auto c = parse(R"(
apiVersion: descheduler/v1alpha2
kind: DeschedulerConfiguration
enableContentionProfiling: true
enableProfiling: true
healthzBindAddress: 0.0.0.0:10251
metricsBindAddress: 0.0.0.0:10251
leaderElection:
  resourceLock: leases
  resourceName: koord-descheduler
  resourceNamespace: koordinator-system
deschedulingInterval: 10s
dryRun: false
profiles:
- name: koord-descheduler
  plugins:
    deschedule:
      disabled:
        - name: "*"
    evict:
      disabled:
        - name: "*"
      enabled:
        - name: MigrationController
  pluginConfig:
  - name: MigrationController
    args:
      apiVersion: descheduler/v1alpha2
      kind: MigrationControllerArgs
      count: 3
  - name: LowNodeLoad
    args:
      apiVersion: descheduler/v1alpha2
      kind: LowNodeLoadArgs
)");
  CHECK(c.descheduling_interval == std::chrono::seconds(10));
  const Profile& p = c.profiles[0];
  CHECK(p.at(ExtensionPoint::kEvict) == std::vector<std::string>{"MigrationController"});
  CHECK(p.at(ExtensionPoint::kFilter) == std::vector<std::string>{"MigrationController"});
  REQUIRE(p.args.contains("MigrationController"));
  CHECK(dynamic_cast<const CountArgs&>(*p.args.at("MigrationController")).count == 3);
  // Configured but not enabled: decoded (its errors would show), with its defaults.
  REQUIRE(p.args.contains("LowNodeLoad"));
  CHECK(dynamic_cast<const CountArgs&>(*p.args.at("LowNodeLoad")).count == 7);
}

TEST_CASE("a profile's lists merge with the defaults as Koordinator merges them") {
  const auto c = parse(R"(
profiles:
- name: a
  plugins:
    balance:
      enabled: [{name: LowNodeLoad}]
    filter:
      disabled: [{name: MigrationController}]
      enabled: [{name: LowNodeLoad}]
- name: b
  nodeSelector: {matchLabels: {pool: x}}
  plugins:
    deschedule:
      enabled: [{name: RemoveFailedPods}]
maxNoOfPodsToEvictPerNode: 2
maxNoOfPodsToEvictTotal: 5
)");
  REQUIRE(c.profiles.size() == 2);
  CHECK(c.profiles[0].at(ExtensionPoint::kBalance) == std::vector<std::string>{"LowNodeLoad"});
  CHECK(c.profiles[0].at(ExtensionPoint::kFilter) == std::vector<std::string>{"LowNodeLoad"});
  CHECK(c.profiles[0].at(ExtensionPoint::kEvict) ==
        std::vector<std::string>{"MigrationController"});
  CHECK(c.profiles[1].at(ExtensionPoint::kDeschedule) ==
        std::vector<std::string>{"RemoveFailedPods"});
  REQUIRE(c.profiles[1].node_selector);
  CHECK(c.profiles[1].node_selector->match_labels.at("pool") == "x");
  CHECK(c.max_pods_to_evict_per_node == 2u);
  CHECK_FALSE(c.max_pods_to_evict_per_namespace);
  CHECK(c.max_pods_to_evict_total == 5u);
}

TEST_CASE("bad configurations are refused, naming the field") {
  struct Case {
    const char* name;
    const char* text;
    const char* expect;
  };
  const Case cases[] = {
      {"unknown top-level field", "deschedulingIntervall: 10s", "unknown field"},
      {"wrong kind", "kind: KubeSchedulerConfiguration", "kind"},
      {"wrong apiVersion", "apiVersion: descheduler/v1alpha1", "apiVersion"},
      {"bad interval", "deschedulingInterval: soon", "deschedulingInterval"},
      {"negative per-node cap", "maxNoOfPodsToEvictPerNode: -1", "maxNoOfPodsToEvictPerNode"},
      {"dryRun not a bool", "dryRun: [1]", "dryRun"},
      {"bad node selector operator", "nodeSelector: {matchExpressions: [{key: a, operator: Near}]}",
       "nodeSelector"},
      {"unknown plugin", "profiles: [{name: a, plugins: {balance: {enabled: [{name: Nope}]}}}]",
       "profiles[0].plugins.balance.enabled"},
      {"unknown plugin field", "profiles: [{name: a, plugins: {balance: {on: []}}}]",
       "profiles[0].plugins.balance"},
      {"duplicate profile", "profiles: [{name: a}, {name: a}]", "profiles[1].name"},
      {"profile without a name", "profiles: [{name: a}, {}]", "profiles[1].name"},
      {"duplicate pluginConfig",
       "profiles: [{name: a, pluginConfig: [{name: LowNodeLoad}, {name: LowNodeLoad}]}]",
       "profiles[0].pluginConfig"},
      {"args of another kind",
       "profiles: [{name: a, pluginConfig: [{name: LowNodeLoad, args: {kind: FooArgs}}]}]",
       "profiles[0].pluginConfig[0].args.kind"},
      {"args field unknown to the plugin",
       "profiles: [{name: a, pluginConfig: [{name: LowNodeLoad, args: {counts: 1}}]}]",
       "profiles[0].pluginConfig[0].args"},
      {"pluginConfig for a plugin not built",
       "profiles: [{name: a, pluginConfig: [{name: Nope, args: {}}]}]",
       "profiles[0].pluginConfig[0]"},
      {"leader election lease shorter than the renew deadline",
       "leaderElection: {leaseDuration: 5s, renewDeadline: 10s}", "leaderElection"},
  };
  for (const auto& tc : cases) {
    SECTION(tc.name) {
      const std::string message = errorOf(tc.text);
      INFO(message);
      CHECK(message.find(tc.expect) != std::string::npos);
    }
  }
}

TEST_CASE("the --write-config-to output reads back to the same configuration") {
  const auto c = parse(R"(
deschedulingInterval: 30s
dryRun: true
maxNoOfPodsToEvictPerNamespace: 3
profiles:
- name: a
  plugins:
    balance:
      enabled: [{name: LowNodeLoad}]
  pluginConfig:
  - name: LowNodeLoad
    args: {count: 4}
)");
  const std::string text = encodeDeschedulerConfig(c);
  const auto back = parse(text);
  CHECK(back.descheduling_interval == std::chrono::seconds(30));
  CHECK(back.dry_run);
  CHECK(back.max_pods_to_evict_per_namespace == 3u);
  REQUIRE(back.profiles.size() == 1);
  CHECK(back.profiles[0].at(ExtensionPoint::kBalance) == std::vector<std::string>{"LowNodeLoad"});
  CHECK(dynamic_cast<const CountArgs&>(*back.profiles[0].args.at("LowNodeLoad")).count == 4);
  CHECK(encodeDeschedulerConfig(back) == text);
}
