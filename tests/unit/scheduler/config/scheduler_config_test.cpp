#include "config/scheduler_config.h"

#include <catch2/catch.hpp>

#include <boost/json.hpp>

#include <fmt/format.h>

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "catch_expected.h"
#include "config/expand_plugins.h"
#include "fake_plugins.h"
#include "koord/kube/config_file.h"
#include "log_lines.h"
#include "temp_tree.h"

namespace json = boost::json;
using namespace koord::roles::scheduler;
using namespace koord::roles::scheduler::config;
using configtest::FakeArgs;
using EP = ExtensionPoint;
using Names = std::vector<std::string>;
using Weighted = std::vector<std::pair<std::string, std::int32_t>>;

namespace {

const PluginRegistry& registry() {
  static const PluginRegistry r = [] {
    std::vector<std::string_view> names = configtest::koordUpstreamPlugins();
    for (std::string_view n : {"Alpha", "Beta", "Gamma"})
      names.push_back(n);
    return configtest::fakeRegistry(names);
  }();
  return r;
}

std::string header(std::string_view version) {
  return fmt::format(
      "apiVersion: kubescheduler.config.k8s.io/{}\nkind: KubeSchedulerConfiguration\n", version);
}

SchedulerConfig parseOk(const std::string& text) {
  auto c = parseSchedulerConfigText(text, registry());
  INFO(text);
  REQUIRE(c);
  return std::move(*c);
}

Names names(const std::vector<PluginRef>& refs) {
  Names out;
  for (const auto& r : refs)
    out.push_back(r.name);
  return out;
}
Names names(const PluginSet& set) {
  return names(set.enabled);
}

Weighted weights(const std::vector<PluginRef>& refs) {
  Weighted out;
  for (const auto& r : refs)
    out.emplace_back(r.name, r.weight);
  return out;
}

const FakeArgs& argsOf(const Profile& p, std::string_view name) {
  const auto it = p.args.find(name);
  INFO(name);
  REQUIRE(it != p.args.end());
  const auto* args = dynamic_cast<const FakeArgs*>(it->second.get());
  REQUIRE(args != nullptr);
  return *args;
}

}  // namespace

TEST_CASE("v1beta1 with defaults only: Kubernetes 1.20's plugins less those not built",
          "[config]") {
  const SchedulerConfig c = parseOk(header("v1beta1"));
  CHECK(c.version == ApiVersion::kV1beta1);
  CHECK(c.api_version == "kubescheduler.config.k8s.io/v1beta1");
  CHECK(c.parallelism == 16);
  CHECK(c.percentage_of_nodes_to_score == 0);
  CHECK(c.pod_initial_backoff_seconds == 1);
  CHECK(c.pod_max_backoff_seconds == 10);
  CHECK(c.client_connection.qps == 50);
  CHECK(c.client_connection.burst == 100);
  CHECK(c.client_connection.content_type == "application/vnd.kubernetes.protobuf");
  CHECK(c.leader_election.leader_elect);
  CHECK(c.leader_election.lease_duration == std::chrono::seconds(15));
  CHECK(c.leader_election.renew_deadline == std::chrono::seconds(10));
  CHECK(c.leader_election.retry_period == std::chrono::seconds(2));
  CHECK(c.leader_election.resource_lock == "leases");
  CHECK(c.leader_election.resource_name == "kube-scheduler");
  CHECK(c.leader_election.resource_namespace == "kube-system");
  CHECK(c.healthz_bind_address == "0.0.0.0:10251");
  CHECK(c.metrics_bind_address == "0.0.0.0:10251");
  CHECK(c.enable_profiling);
  CHECK(c.enable_contention_profiling);

  REQUIRE(c.profiles.size() == 1);
  const Profile& p = c.profiles[0];
  CHECK(p.scheduler_name == "default-scheduler");
  CHECK(names(p.merged[EP::kQueueSort]) == Names{"PrioritySort"});
  CHECK(names(p.merged[EP::kPreFilter]) == Names{"NodeResourcesFit", "NodePorts",
                                                 "PodTopologySpread", "InterPodAffinity",
                                                 "VolumeBinding"});
  CHECK(names(p.merged[EP::kFilter]) ==
        Names{"NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity", "NodePorts",
              "NodeResourcesFit", "VolumeRestrictions", "EBSLimits", "GCEPDLimits",
              "NodeVolumeLimits", "AzureDiskLimits", "VolumeBinding", "VolumeZone",
              "PodTopologySpread", "InterPodAffinity"});
  CHECK(names(p.merged[EP::kPostFilter]) == Names{"DefaultPreemption"});
  CHECK(names(p.merged[EP::kPreScore]) ==
        Names{"InterPodAffinity", "PodTopologySpread", "TaintToleration"});
  CHECK(weights(p.merged[EP::kScore].enabled) == Weighted{{"NodeResourcesBalancedAllocation", 1},
                                                          {"ImageLocality", 1},
                                                          {"InterPodAffinity", 1},
                                                          {"NodeResourcesLeastAllocated", 1},
                                                          {"NodeAffinity", 1},
                                                          {"NodePreferAvoidPods", 10000},
                                                          {"PodTopologySpread", 2},
                                                          {"TaintToleration", 1}});
  CHECK(names(p.merged[EP::kReserve]) == Names{"VolumeBinding"});
  CHECK(names(p.merged[EP::kPreBind]) == Names{"VolumeBinding"});
  CHECK(names(p.merged[EP::kBind]) == Names{"DefaultBinder"});
  CHECK(p.merged[EP::kMultiPoint].enabled.empty());

  // Every enabled plugin got its default args, told the file's version.
  const FakeArgs& fit = argsOf(p, "NodeResourcesFit");
  CHECK(fit.x == 7);
  CHECK(fit.api_version == "kubescheduler.config.k8s.io/v1beta1");
  CHECK(fit.raw.is_null());
  CHECK(p.args.size() == 22);

  const std::string line = describe(c);
  CHECK_THAT(line, Catch::Matchers::StartsWith("kubescheduler.config.k8s.io/v1beta1 profile "
                                               "\"default-scheduler\" {queueSort: PrioritySort; "));
  CHECK_THAT(line, Catch::Matchers::Contains("score: NodeResourcesBalancedAllocation(1), "
                                             "ImageLocality(1), InterPodAffinity(1)"));
}

TEST_CASE(
    "disabled \"*\" drops a point's defaults, and enabled ones follow, replacing a default in "
    "place",
    "[config]") {
  const SchedulerConfig c = parseOk(header("v1beta1") + R"(
profiles:
- plugins:
    filter:
      disabled: [{name: "*"}]
      enabled: [{name: NodeName}, {name: Alpha}]
    score:
      disabled: [{name: NodeResourcesLeastAllocated}, {name: ImageLocality}]
      enabled:
      - {name: Alpha, weight: 5}
      - {name: TaintToleration, weight: 3}
      - {name: Beta}
      - {name: Gamma, weight: 0}
    bind:
      enabled: [{name: Alpha}]
)");
  const Profile& p = c.profiles[0];
  CHECK(names(p.plugins[EP::kFilter]) == Names{"NodeName", "Alpha"});
  CHECK(p.plugins[EP::kFilter].disabled == Names{"*"});
  CHECK(names(p.merged[EP::kFilter]) == Names{"NodeName", "Alpha"});
  CHECK(weights(p.merged[EP::kScore].enabled) == Weighted{{"NodeResourcesBalancedAllocation", 1},
                                                          {"InterPodAffinity", 1},
                                                          {"NodeAffinity", 1},
                                                          {"NodePreferAvoidPods", 10000},
                                                          {"PodTopologySpread", 2},
                                                          {"TaintToleration", 3},
                                                          {"Alpha", 5},
                                                          {"Beta", 0},
                                                          {"Gamma", 0}});
  CHECK(p.merged[EP::kScore].enabled[5].origin == "profiles[0].plugins.score.enabled[1]");
  CHECK(p.merged[EP::kScore].enabled[0].origin.empty());
  CHECK(names(p.merged[EP::kBind]) == Names{"DefaultBinder", "Alpha"});
  // Points the profile does not name keep their defaults.
  CHECK(names(p.merged[EP::kPostFilter]) == Names{"DefaultPreemption"});
}

TEST_CASE(
    "pluginConfig args go through the plugin's decoder, and enabled plugins without one get "
    "their defaults",
    "[config]") {
  const SchedulerConfig c = parseOk(header("v1") + R"(
profiles:
- schedulerName: s
  plugins:
    score:
      enabled: [{name: Alpha, weight: 1}]
  pluginConfig:
  - name: Alpha
    args: {x: 3}
  - name: Beta
    args:
      apiVersion: kubescheduler.config.k8s.io/v1beta3
      kind: BetaArgs
      x: 4
  - name: Gamma
)");
  const Profile& p = c.profiles[0];
  REQUIRE(p.plugin_config.size() == 3);
  CHECK(p.plugin_config[1].args.at("kind").as_string() == "BetaArgs");  // kept as written
  CHECK(p.plugin_config[2].args.is_null());

  const FakeArgs& alpha = argsOf(p, "Alpha");
  CHECK(alpha.x == 3);
  CHECK(alpha.api_version == "kubescheduler.config.k8s.io/v1");
  const FakeArgs& beta = argsOf(p, "Beta");
  CHECK(beta.x == 4);
  CHECK(beta.api_version == "kubescheduler.config.k8s.io/v1beta3");
  CHECK(beta.raw == json::parse(R"({"x":4})"));  // TypeMeta is the envelope's, not the plugin's
  const FakeArgs& gamma = argsOf(p, "Gamma");
  CHECK(gamma.x == 7);
  CHECK(gamma.raw.is_null());
  // MultiPoint defaults are enabled plugins too.
  CHECK(argsOf(p, "NodeResourcesFit").x == 7);
  CHECK(argsOf(p, "SchedulingGates").api_version == "kubescheduler.config.k8s.io/v1");
}

TEST_CASE("each apiVersion has its own defaults and fields", "[config]") {
  SECTION("v1beta2: per-point defaults, MultiPoint allowed, bind addresses only off") {
    const SchedulerConfig c = parseOk(header("v1beta2") + R"(
healthzBindAddress: "0.0.0.0:0"
metricsBindAddress: ""
profiles:
- plugins:
    multiPoint:
      enabled: [{name: Alpha}]
)");
    CHECK(c.version == ApiVersion::kV1beta2);
    CHECK(c.healthz_bind_address.empty());
    const Profile& p = c.profiles[0];
    CHECK(names(p.merged[EP::kPreFilter]) ==
          Names{"NodeResourcesFit", "NodePorts", "VolumeRestrictions", "PodTopologySpread",
                "InterPodAffinity", "VolumeBinding", "NodeAffinity"});
    CHECK(weights(p.merged[EP::kScore].enabled) == Weighted{{"NodeResourcesBalancedAllocation", 1},
                                                            {"ImageLocality", 1},
                                                            {"InterPodAffinity", 1},
                                                            {"NodeResourcesFit", 1},
                                                            {"NodeAffinity", 1},
                                                            {"PodTopologySpread", 2},
                                                            {"TaintToleration", 1}});
    CHECK(names(p.merged[EP::kMultiPoint]) == Names{"Alpha"});
  }
  SECTION("v1beta3: the MultiPoint list, SchedulingGates last") {
    const SchedulerConfig c = parseOk(header("v1beta3") + "delayCacheUntilActive: true\n");
    CHECK(c.version == ApiVersion::kV1beta3);
    CHECK(c.delay_cache_until_active);
    const Profile& p = c.profiles[0];
    CHECK(p.merged[EP::kFilter].enabled.empty());
    CHECK(weights(p.merged[EP::kMultiPoint].enabled) ==
          Weighted{{"PrioritySort", 0},      {"NodeUnschedulable", 0},
                   {"NodeName", 0},          {"TaintToleration", 3},
                   {"NodeAffinity", 2},      {"NodePorts", 0},
                   {"NodeResourcesFit", 1},  {"VolumeRestrictions", 0},
                   {"EBSLimits", 0},         {"GCEPDLimits", 0},
                   {"NodeVolumeLimits", 0},  {"AzureDiskLimits", 0},
                   {"VolumeBinding", 0},     {"VolumeZone", 0},
                   {"PodTopologySpread", 2}, {"InterPodAffinity", 2},
                   {"DefaultPreemption", 0}, {"NodeResourcesBalancedAllocation", 1},
                   {"ImageLocality", 1},     {"DefaultBinder", 0},
                   {"SchedulingGates", 0}});
  }
  SECTION("v1: SchedulingGates first") {
    const SchedulerConfig c = parseOk(header("v1") + R"(
profiles:
- schedulerName: a
  percentageOfNodesToScore: 30
  plugins:
    preEnqueue:
      enabled: [{name: Gamma}]
)");
    CHECK(c.version == ApiVersion::kV1);
    const Profile& p = c.profiles[0];
    CHECK(p.percentage_of_nodes_to_score == 30);
    CHECK(names(p.merged[EP::kMultiPoint]).front() == "SchedulingGates");
    CHECK(names(p.merged[EP::kPreEnqueue]) == Names{"Gamma"});
  }
  SECTION("v1beta2's per-point filter list and v1's MultiPoint expansion agree") {
    const auto both = [](std::string_view version) {
      const SchedulerConfig c = parseOk(header(version));
      auto e = expandPlugins(c.profiles[0], [](std::string_view name, ExtensionPoint point) {
        return configtest::implementsIn(configtest::realPointTable(), name, point);
      });
      REQUIRE(e);
      return names((*e)[EP::kFilter]);
    };
    CHECK(both("v1beta2") == both("v1"));
    CHECK(both("v1") == Names{"NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity",
                              "NodePorts", "NodeResourcesFit", "VolumeRestrictions", "EBSLimits",
                              "GCEPDLimits", "NodeVolumeLimits", "AzureDiskLimits", "VolumeBinding",
                              "VolumeZone", "PodTopologySpread", "InterPodAffinity"});
  }
}

TEST_CASE("top-level fields are read with their Go types and defaults", "[config]") {
  const SchedulerConfig c = parseOk(header("v1beta1") + R"(
parallelism: 8
percentageOfNodesToScore: 50
podInitialBackoffSeconds: 2
podMaxBackoffSeconds: 2
enableProfiling: no
healthzBindAddress: ":10259"
metricsBindAddress: 127.0.0.1
clientConnection:
  kubeconfig: /etc/kubernetes/scheduler.conf
  qps: 12.5
  burst: 0
  contentType: application/json
leaderElection:
  leaderElect: yes
  leaseDuration: 30s
  renewDeadline: 0s
  retryPeriod: 1500ms
  resourceNamespace: koordinator-system
)");
  CHECK(c.parallelism == 8);
  CHECK(c.percentage_of_nodes_to_score == 50);
  CHECK(c.pod_initial_backoff_seconds == 2);
  CHECK(c.pod_max_backoff_seconds == 2);
  CHECK_FALSE(c.enable_profiling);
  CHECK_FALSE(c.enable_contention_profiling);  // follows profiling when unset
  CHECK(c.healthz_bind_address == "0.0.0.0:10259");
  CHECK(c.metrics_bind_address == "127.0.0.1:10251");
  CHECK(c.client_connection.kubeconfig == "/etc/kubernetes/scheduler.conf");
  CHECK(c.client_connection.qps == 12.5);
  CHECK(c.client_connection.burst == 100);  // 0 means the default
  CHECK(c.client_connection.content_type == "application/json");
  CHECK(c.leader_election.leader_elect);
  CHECK(c.leader_election.lease_duration == std::chrono::seconds(30));
  CHECK(c.leader_election.renew_deadline == std::chrono::seconds(10));
  CHECK(c.leader_election.retry_period == std::chrono::milliseconds(1500));
  CHECK(c.leader_election.resource_namespace == "koordinator-system");
  CHECK(c.leader_election.resource_name == "kube-scheduler");
}

TEST_CASE("YAML scalar typing reaches the config: quoted \"10\" is no integer, yes is a boolean",
          "[config]") {
  CHECK(parseOk(header("v1") + "parallelism: 10\n").parallelism == 10);
  CHECK(parseOk(header("v1") + "parallelism: 0x10\n").parallelism == 16);
  CHECK_FALSE(
      parseOk(header("v1") + "leaderElection: {leaderElect: no}\n").leader_election.leader_elect);
  CHECK(
      parseOk(header("v1") + "leaderElection: {leaderElect: yes}\n").leader_election.leader_elect);
  struct Row {
    std::string body;
    std::string error;
  };
  const Row rows[] = {
      {"parallelism: \"10\"\n", "parallelism: expected integer, got string"},
      {"parallelism: 1.5\n", "parallelism: expected an integer, got 1.5"},
      {"parallelism: 3000000000\n", "parallelism: 3000000000 is out of range for int32"},
      {"leaderElection: {leaderElect: \"yes\"}\n",
       "leaderElection.leaderElect: expected boolean, got string"},
      {"leaderElection: {leaseDuration: 15}\n",
       "leaderElection.leaseDuration: expected string, got number"},
      {"profiles: [{schedulerName: 10}]\n",
       "profiles[0].schedulerName: expected string, got number"},
  };
  for (const Row& row : rows) {
    auto c = parseSchedulerConfigText(header("v1") + row.body, registry());
    CAPTURE(row.body);
    REQUIRE_FALSE(c);
    CHECK(c.error().message == row.error);
  }
}

TEST_CASE("configuration faults are startup errors naming the field path", "[config]") {
  struct Row {
    std::string version;
    std::string body;
    std::string error;
  };
  const Row rows[] = {
      {"v1", "profiles: [{plugins: {filter: {enabled: [{name: NodeName}, {name: Foo}]}}}]\n",
       "profiles[0].plugins.filter.enabled[1].name: unknown plugin \"Foo\""},
      {"v1", "profiles: [{plugins: {filter: {enabled: [{name: ServiceAffinity}]}}}]\n",
       "profiles[0].plugins.filter.enabled[0].name: unknown plugin \"ServiceAffinity\" (a "
       "kube-scheduler plugin this build does not have)"},
      {"v1", "profiles: [{plugins: {filter: {disabled: [{name: Nope}]}}}]\n",
       "profiles[0].plugins.filter.disabled[0].name: unknown plugin \"Nope\""},
      {"v1", "profiles: [{plugins: {multiPoint: {enabled: [{name: \"*\"}]}}}]\n",
       "profiles[0].plugins.multiPoint.enabled[0].name: unknown plugin \"*\""},
      {"v1", "profiles: [{plugins: {fliter: {}}}]\n",
       "profiles[0].plugins: unknown extension point \"fliter\""},
      {"v1beta1", "profiles: [{plugins: {multiPoint: {}}}]\n",
       "profiles[0].plugins: unknown extension point \"multiPoint\" (not in "
       "kubescheduler.config.k8s.io/v1beta1)"},
      {"v1beta2", "profiles: [{plugins: {preEnqueue: {}}}]\n",
       "profiles[0].plugins: unknown extension point \"preEnqueue\" (not in "
       "kubescheduler.config.k8s.io/v1beta2)"},
      {"v1", "parallelizm: 4\n", "unknown field \"parallelizm\""},
      {"v1", "healthzBindAddress: \"0.0.0.0:10251\"\n", "unknown field \"healthzBindAddress\""},
      {"v1beta1", "delayCacheUntilActive: true\n", "unknown field \"delayCacheUntilActive\""},
      {"v1", "leaderElection: {leaderelect: true}\n",
       "leaderElection: unknown field \"leaderelect\""},
      {"v1", "clientConnection: {QPS: 5}\n", "clientConnection: unknown field \"QPS\""},
      {"v1", "profiles: [{SchedulerName: a}]\n", "profiles[0]: unknown field \"SchedulerName\""},
      {"v1beta1", "profiles: [{percentageOfNodesToScore: 5}]\n",
       "profiles[0]: unknown field \"percentageOfNodesToScore\""},
      {"v1", "profiles: [{plugins: {filter: {enable: []}}}]\n",
       "profiles[0].plugins.filter: unknown field \"enable\""},
      {"v1", "profiles: [{plugins: {score: {enabled: [{name: Alpha, wieght: 2}]}}}]\n",
       "profiles[0].plugins.score.enabled[0]: unknown field \"wieght\""},
      {"v1", "profiles: [{pluginConfig: [{name: Alpha, arg: {}}]}]\n",
       "profiles[0].pluginConfig[0]: unknown field \"arg\""},
      {"v1", "profiles: [{pluginConfig: [{name: Foo, args: {}}]}]\n",
       "profiles[0].pluginConfig[0].name: unknown plugin \"Foo\""},
      {"v1", "profiles: [{pluginConfig: [{name: Alpha}, {name: Alpha}]}]\n",
       "profiles[0].pluginConfig[1].name: duplicate pluginConfig for \"Alpha\" (first at "
       "profiles[0].pluginConfig[0])"},
      {"v1", "profiles: [{pluginConfig: [{name: Alpha, args: {z: 1}}]}]\n",
       "profiles[0].pluginConfig[0].args: unknown field \"z\""},
      {"v1", "profiles: [{pluginConfig: [{name: Alpha, args: {x: \"3\"}}]}]\n",
       "profiles[0].pluginConfig[0].args: x: expected an integer"},
      {"v1", "profiles: [{pluginConfig: [{name: Alpha, args: [1]}]}]\n",
       "profiles[0].pluginConfig[0].args: expected object, got array"},
      {"v1", "profiles: [{pluginConfig: [{name: Alpha, args: {kind: BetaArgs}}]}]\n",
       "profiles[0].pluginConfig[0].args.kind: must be \"AlphaArgs\", got \"BetaArgs\""},
      {"v1", "profiles: [{pluginConfig: [{name: Alpha, args: {apiVersion: example.com/v1}}]}]\n",
       "profiles[0].pluginConfig[0].args.apiVersion: unsupported \"example.com/v1\" (want "
       "kubescheduler.config.k8s.io/v1beta1, v1beta2, v1beta3 or v1)"},
      {"v1", "profiles: [{schedulerName: a}, {schedulerName: b}, {schedulerName: a}]\n",
       "profiles[2].schedulerName: duplicate value \"a\" (also profiles[0].schedulerName)"},
      {"v1", "profiles: [{schedulerName: a}, {}]\n", "profiles[1].schedulerName: required"},
      {"v1", "profiles: [{schedulerName: \"\"}]\n", "profiles[0].schedulerName: required"},
      {"v1", "profiles: [{plugins: {score: {enabled: [{name: Alpha, weight: -1}]}}}]\n",
       "profiles[0].plugins.score.enabled[0].weight: must not be negative, got -1"},
      {"v1", "profiles: [{plugins: {multiPoint: {enabled: [{name: Alpha, weight: -3}]}}}]\n",
       "profiles[0].plugins.multiPoint.enabled[0].weight: must not be negative, got -3"},
      {"v1", "profiles: [{plugins: {filter: {enabled: [{name: Alpha}, {name: Alpha}]}}}]\n",
       "profiles[0].plugins.filter.enabled[1].name: plugin \"Alpha\" is already enabled at "
       "profiles[0].plugins.filter.enabled[0]"},
      {"v1", "profiles: [{plugins: {filter: {enabled: [{weight: 1}]}}}]\n",
       "profiles[0].plugins.filter.enabled[0].name: required"},
      {"v1beta1", "profiles: [{plugins: {queueSort: {enabled: [{name: Alpha}]}}}]\n",
       "profiles[0].plugins.queueSort.enabled: only one queue sort plugin can be enabled, got 2"},
      {"v1beta1",
       "profiles:\n- {schedulerName: a}\n- schedulerName: b\n  plugins:\n    queueSort:\n"
       "      disabled: [{name: \"*\"}]\n      enabled: [{name: Alpha}]\n",
       "profiles[1].plugins.queueSort: must be the same for all profiles"},
      {"v1beta1",
       "profiles:\n- {schedulerName: a}\n- schedulerName: b\n  pluginConfig: [{name: PrioritySort, "
       "args: {x: 1}}]\n",
       "profiles[1].pluginConfig[0].args: the queue sort plugin \"PrioritySort\" must have the "
       "same args in all profiles"},
      {"v1", "parallelism: 0\n",
       "parallelism: should be an integer value greater than zero, got 0"},
      {"v1", "percentageOfNodesToScore: 101\n",
       "percentageOfNodesToScore: 101 is not in the valid range [0-100]"},
      {"v1", "profiles: [{percentageOfNodesToScore: -1}]\n",
       "profiles[0].percentageOfNodesToScore: -1 is not in the valid range [0-100]"},
      {"v1", "podInitialBackoffSeconds: 0\n",
       "podInitialBackoffSeconds: must be greater than 0, got 0"},
      {"v1", "podInitialBackoffSeconds: 5\npodMaxBackoffSeconds: 4\n",
       "podMaxBackoffSeconds: must be greater than or equal to podInitialBackoffSeconds (5), got "
       "4"},
      {"v1", "clientConnection: {burst: -1}\n",
       "clientConnection.burst: must be non-negative, got -1"},
      {"v1", "leaderElection: {resourceLock: endpoints}\n",
       "leaderElection.resourceLock: must be \"leases\", got \"endpoints\""},
      {"v1", "leaderElection: {leaseDuration: 5s}\n",
       "leaderElection.leaseDuration: must be greater than renewDeadline"},
      {"v1", "leaderElection: {retryPeriod: -1s}\n",
       "leaderElection.retryPeriod: must be greater than zero"},
      {"v1", "leaderElection: {renewDeadline: 2s}\n",
       "leaderElection.renewDeadline: must be greater than 1.2 x retryPeriod"},
      {"v1", "leaderElection: {leaseDuration: 15}\n",
       "leaderElection.leaseDuration: expected string, got number"},
      {"v1", "leaderElection: {leaseDuration: fifteen}\n",
       "leaderElection.leaseDuration: invalid duration \"fifteen\" (want Go syntax such as "
       "\"15s\")"},
      {"v1beta1", "healthzBindAddress: localhost:10251\n",
       "healthzBindAddress: \"localhost:10251\": host must be a valid IP address (e.g. 10.9.8.7 or "
       "2001:db8::ffff)"},
      {"v1beta1", "metricsBindAddress: \"0.0.0.0:0\"\n",
       "metricsBindAddress: \"0.0.0.0:0\": port must be between 1 and 65535, inclusive"},
      {"v1beta1", "metricsBindAddress: nonsense\n",
       "metricsBindAddress: expected an IP address with an optional port, got \"nonsense\""},
      {"v1beta2", "healthzBindAddress: \":10251\"\n",
       "healthzBindAddress: \":10251\": must be empty or with an explicit 0 port"},
      {"v1", "extenders: [{urlPrefix: \"http://x\", prioritizeVerb: p}]\n",
       "extenders[0].weight: must have a positive weight applied to it, got 0"},
      {"v1", "profiles: {schedulerName: a}\n", "profiles: expected array, got object"},
      {"v1", "profiles:\n- schedulerName: a\n  schedulerName: b\n",
       "profiles[0]: duplicate key \"schedulerName\" (line 5)"},
  };
  for (const Row& row : rows) {
    const std::string text = header(row.version) + row.body;
    auto c = parseSchedulerConfigText(text, registry());
    CAPTURE(text);
    REQUIRE_FALSE(c);
    CHECK(c.error().message == row.error);
  }
}

// kube-scheduler's default profile is what koord must match: a build without one of its plugins
// refuses to start with that profile rather than place pods without it.
TEST_CASE("a default plugin this build lacks is a startup error unless the profile disables it",
          "[config]") {
  std::vector<std::string_view> names;
  for (std::string_view n : configtest::koordUpstreamPlugins()) {
    if (n != "VolumeZone")
      names.push_back(n);
  }
  const PluginRegistry without = configtest::fakeRegistry(names);
  for (std::string_view version : {"v1beta1", "v1beta2", "v1beta3", "v1"}) {
    CAPTURE(version);
    auto c = parseSchedulerConfigText(header(version), without);
    REQUIRE_FALSE(c.has_value());
    const std::string point = version == "v1beta3" || version == "v1" ? "multiPoint" : "filter";
    CHECK(c.error().message ==
          fmt::format("profiles[0].plugins.{}: default plugin \"VolumeZone\" of "
                      "kubescheduler.config.k8s.io/{} is not in this build of koord (disable it "
                      "there to run without it)",
                      point, version));
    const std::string disabled = header(version) + "profiles: [{plugins: {" + point +
                                 ": {disabled: [{name: VolumeZone}]}}}]\n";
    CHECK(parseSchedulerConfigText(disabled, without).has_value());
  }
}

TEST_CASE("extenders decode with every field in every apiVersion", "[config][extender]") {
  const std::string extenders =
      "extenders:\n"
      "- urlPrefix: https://gpu-extender.kube-system:8443/scheduler/\n"
      "  filterVerb: filter\n"
      "  prioritizeVerb: prioritize\n"
      "  preemptVerb: preempt\n"
      "  bindVerb: bind\n"
      "  weight: 3\n"
      "  enableHTTPS: true\n"
      "  tlsConfig:\n"
      "    insecure: false\n"
      "    serverName: gpu-extender.local\n"
      "    certData: Q0VSVA==\n"  // "CERT"
      "    keyData: S0VZ\n"       // "KEY"
      "    caFile: /etc/ca.crt\n"
      "  httpTimeout: 2s\n"
      "  nodeCacheCapable: true\n"
      "  managedResources:\n"
      "  - name: example.com/gpu\n"
      "  - {name: example.com/fpga, ignoredByScheduler: true}\n"
      "  ignorable: true\n"
      "- urlPrefix: http://127.0.0.1:8888\n"
      "  filterVerb: filter\n"
      "- {urlPrefix: \"http://b\", httpTimeout: 0s, tlsConfig: null, managedResources: null}\n";
  // The fake NodeResourcesFit must take the ignoredResources the extenders give it.
  const PluginRegistry any =
      configtest::fakeRegistry(configtest::koordUpstreamPlugins(), configtest::Decoder::kAnyObject);
  for (const char* version : {"v1beta1", "v1beta2", "v1beta3", "v1"}) {
    INFO(version);
    auto parsed = parseSchedulerConfigText(header(version) + extenders, any);
    REQUIRE(parsed);
    const SchedulerConfig& c = *parsed;
    REQUIRE(c.extenders.size() == 3);
    const Extender& e = c.extenders[0];
    CHECK(e.url_prefix == "https://gpu-extender.kube-system:8443/scheduler/");
    CHECK(e.filter_verb == "filter");
    CHECK(e.prioritize_verb == "prioritize");
    CHECK(e.preempt_verb == "preempt");
    CHECK(e.bind_verb == "bind");
    CHECK(e.weight == 3);
    CHECK(e.enable_https);
    REQUIRE(e.tls_config.has_value());
    CHECK_FALSE(e.tls_config->insecure);
    CHECK(e.tls_config->server_name == "gpu-extender.local");
    CHECK(e.tls_config->cert_data == "CERT");
    CHECK(e.tls_config->key_data == "KEY");
    CHECK(e.tls_config->ca_file == "/etc/ca.crt");
    CHECK(e.tls_config->ca_data.empty());
    CHECK(e.http_timeout == std::chrono::seconds(2));
    CHECK(e.node_cache_capable);
    REQUIRE(e.managed_resources.size() == 2);
    CHECK(e.managed_resources[0].name == "example.com/gpu");
    CHECK_FALSE(e.managed_resources[0].ignored_by_scheduler);
    CHECK(e.managed_resources[1].ignored_by_scheduler);
    CHECK(e.ignorable);
    // Unset fields: kube-scheduler's defaults (DefaultExtenderTimeout for an unset or zero
    // httpTimeout).
    const Extender& plain = c.extenders[1];
    CHECK(plain.prioritize_verb.empty());
    CHECK(plain.weight == 0);
    CHECK_FALSE(plain.enable_https);
    CHECK_FALSE(plain.tls_config.has_value());
    CHECK(plain.http_timeout == std::chrono::seconds(5));
    CHECK_FALSE(plain.node_cache_capable);
    CHECK_FALSE(plain.ignorable);
    CHECK(c.extenders[2].http_timeout == std::chrono::seconds(5));
    CHECK_THAT(describe(c),
               Catch::Contains("; extenders: https://gpu-extender.kube-system:8443/scheduler/ "
                               "{filter, prioritize(3), bind, preempt}, http://127.0.0.1:8888 "
                               "{filter}, http://b {}"));
  }
  CHECK(parseOk(header("v1")).extenders.empty());
  CHECK(parseOk(header("v1") + "extenders: []\n").extenders.empty());
}

TEST_CASE("extenders are validated as kube-scheduler validates them, errors naming the field",
          "[config][extender]") {
  struct Row {
    std::string body;
    std::string error;
  };
  const Row rows[] = {
      {"extenders: {urlPrefix: http://x}\n", "extenders: expected array, got object"},
      {"extenders: [http://x]\n", "extenders[0]: expected object, got string"},
      {"extenders: [{urlPrefix: http://x, filterverb: f}]\n",
       "extenders[0]: unknown field \"filterverb\""},
      {"extenders: [{filterVerb: f}]\n",
       "extenders[0].urlPrefix: must be an http:// or https:// URL, got \"\""},
      {"extenders: [{urlPrefix: x.example.com}]\n",
       "extenders[0].urlPrefix: must be an http:// or https:// URL, got \"x.example.com\""},
      {"extenders: [{urlPrefix: http://x, prioritizeVerb: p, weight: -2}]\n",
       "extenders[0].weight: must have a positive weight applied to it, got -2"},
      {"extenders: [{urlPrefix: http://x, weight: \"2\"}]\n",
       "extenders[0].weight: expected integer, got string"},
      {"extenders: [{urlPrefix: http://x, bindVerb: b}, {urlPrefix: http://y, bindVerb: b}]\n",
       "extenders: only one extender can implement bind, found 2"},
      {"extenders:\n- {urlPrefix: http://x, managedResources: [{name: example.com/a}]}\n"
       "- {urlPrefix: http://y, managedResources: [{name: example.com/a}]}\n",
       "extenders[1].managedResources[0].name: duplicate extender managed resource name "
       "\"example.com/a\""},
      {"extenders: [{urlPrefix: http://x, managedResources: [{name: kubernetes.io/foo}]}]\n",
       "extenders[0].managedResources[0].name: \"kubernetes.io/foo\" is an invalid extended "
       "resource name"},
      {"extenders: [{urlPrefix: http://x, managedResources: [{name: cpu}]}]\n",
       "extenders[0].managedResources[0].name: \"cpu\" is an invalid extended resource name"},
      {"extenders: [{urlPrefix: http://x, managedResources: [{ignoredByScheduler: true}]}]\n",
       "extenders[0].managedResources[0].name: \"\": "},
      {"extenders: [{urlPrefix: http://x, managedResources: [{name: a.io/b, ignored: true}]}]\n",
       "extenders[0].managedResources[0]: unknown field \"ignored\""},
      {"extenders: [{urlPrefix: http://x, httpTimeout: 30}]\n",
       "extenders[0].httpTimeout: expected string, got number"},
      {"extenders: [{urlPrefix: http://x, httpTimeout: thirty}]\n",
       "extenders[0].httpTimeout: invalid duration \"thirty\" (want Go syntax such as \"15s\")"},
      {"extenders: [{urlPrefix: http://x, httpTimeout: -1s}]\n",
       "extenders[0].httpTimeout: must not be negative"},
      {"extenders: [{urlPrefix: http://x, enableHTTPS: \"true\"}]\n",
       "extenders[0].enableHTTPS: expected boolean, got string"},
      {"extenders: [{urlPrefix: http://x, tlsConfig: {insecure: true, caData: Q0E=}}]\n",
       "extenders[0].tlsConfig: specifying a root certificates file with the insecure flag is not "
       "allowed"},
      {"extenders: [{urlPrefix: http://x, tlsConfig: {certFile: /c.crt}}]\n",
       "extenders[0].tlsConfig: a client certificate (certFile or certData) and its key "
       "(keyFile or keyData) must be given together"},
      {"extenders: [{urlPrefix: http://x, tlsConfig: {caData: \"not base64!\"}}]\n",
       "extenders[0].tlsConfig.caData: not base64 data: "},
      {"extenders: [{urlPrefix: http://x, tlsConfig: {CAData: Q0E=}}]\n",
       "extenders[0].tlsConfig: unknown field \"CAData\""},
  };
  for (const char* version : {"v1beta1", "v1"}) {
    for (const Row& row : rows) {
      const std::string text = header(version) + row.body;
      auto c = parseSchedulerConfigText(text, registry());
      CAPTURE(text);
      REQUIRE_FALSE(c);
      CHECK_THAT(c.error().message, Catch::StartsWith(row.error));
    }
  }
  std::string many = "extenders:\n";
  for (int i = 0; i < 33; ++i)
    many += "- {urlPrefix: http://x}\n";
  auto c = parseSchedulerConfigText(header("v1") + many, registry());
  REQUIRE_FALSE(c);
  CHECK(c.error().message == "extenders: 33 entries, at most 32 allowed");
}

TEST_CASE("extenders' ignoredByScheduler resources become NodeResourcesFit's ignoredResources",
          "[config][extender]") {
  const PluginRegistry any =
      configtest::fakeRegistry(configtest::koordUpstreamPlugins(), configtest::Decoder::kAnyObject);
  const std::string extenders =
      "extenders:\n"
      "- urlPrefix: http://x\n"
      "  managedResources:\n"
      "  - {name: example.com/fpga, ignoredByScheduler: true}\n"
      "  - {name: example.com/gpu}\n"
      "- urlPrefix: http://y\n"
      "  managedResources: [{name: example.com/nic, ignoredByScheduler: true}]\n";
  const json::value want{"example.com/fpga", "example.com/nic"};
  auto fitArgs = [&](const Profile& p) {
    const auto it = p.args.find("NodeResourcesFit");
    REQUIRE(it != p.args.end());
    const auto* args = dynamic_cast<const FakeArgs*>(it->second.get());
    REQUIRE(args != nullptr);
    return args->raw;
  };
  SECTION("a profile without NodeResourcesFit args gets them") {
    auto c = parseSchedulerConfigText(header("v1beta3") + extenders, any);
    REQUIRE(c);
    CHECK(fitArgs(c->profiles[0]).at("ignoredResources") == want);
  }
  SECTION("the extenders' list replaces the args' own, the other args kept") {
    auto c = parseSchedulerConfigText(
        header("v1beta1") + extenders +
            "profiles:\n- schedulerName: a\n  pluginConfig:\n  - name: NodeResourcesFit\n"
            "    args: {ignoredResources: [example.com/old], ignoredResourceGroups: [x.io]}\n"
            "- schedulerName: b\n",
        any);
    REQUIRE(c);
    for (const Profile& p : c->profiles) {
      INFO(p.scheduler_name);
      CHECK(fitArgs(p).at("ignoredResources") == want);
    }
    CHECK(fitArgs(c->profiles[0]).at("ignoredResourceGroups") == json::array{"x.io"});
  }
  SECTION("without ignoredByScheduler nothing changes") {
    auto c = parseSchedulerConfigText(
        header("v1") + "extenders: [{urlPrefix: http://x, managedResources: [{name: a.io/b}]}]\n",
        any);
    REQUIRE(c);
    CHECK(fitArgs(c->profiles[0]).is_null());
  }
}

TEST_CASE("apiVersion and kind must name a KubeSchedulerConfiguration", "[config]") {
  struct Row {
    std::string text;
    std::string error;
  };
  const Row rows[] = {
      {"kind: KubeSchedulerConfiguration\n", "apiVersion: required"},
      {"apiVersion: kubescheduler.config.k8s.io/v1alpha2\nkind: KubeSchedulerConfiguration\n",
       "apiVersion: unsupported \"kubescheduler.config.k8s.io/v1alpha2\" (want "
       "kubescheduler.config.k8s.io/v1beta1, v1beta2, v1beta3 or v1)"},
      {"apiVersion: kubescheduler.config.k8s.io/v1\n", "kind: required"},
      {"apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeProxyConfiguration\n",
       "kind: must be \"KubeSchedulerConfiguration\", got \"KubeProxyConfiguration\""},
      {"", "expected a KubeSchedulerConfiguration object, got null"},
      {"- a\n", "expected a KubeSchedulerConfiguration object, got array"},
  };
  for (const Row& row : rows) {
    auto c = parseSchedulerConfigText(row.text, registry());
    CAPTURE(row.text);
    REQUIRE_FALSE(c);
    CHECK(c.error().message == row.error);
  }
}

TEST_CASE("loadSchedulerConfig reads the file and names it in errors", "[config]") {
  koord::testing::TempTree tree("koord-sched-config");
  tree.write("good.yaml", header("v1beta3") + "parallelism: 4\n");
  tree.write("bad.yaml", header("v1beta3") + "parallelism: -4\n");
  auto good = loadSchedulerConfig(tree.path("good.yaml").string(), registry());
  REQUIRE(good);
  CHECK(good->parallelism == 4);
  const std::string bad_path = tree.path("bad.yaml").string();
  auto bad = loadSchedulerConfig(bad_path, registry());
  REQUIRE_FALSE(bad);
  CHECK(bad.error().message ==
        bad_path + ": parallelism: should be an integer value greater than zero, got -4");
  const std::string missing = tree.path("missing.yaml").string();
  auto gone = loadSchedulerConfig(missing, registry());
  REQUIRE_FALSE(gone);
  CHECK(gone.error().message == missing + ": cannot read: No such file or directory");
}

TEST_CASE("loadSchedulerConfig refuses a file over the size bound, naming the path and limit",
          "[config]") {
  koord::testing::TempTree tree("koord-sched-config");
  // Valid YAML either way: the bound alone refuses the larger file.
  std::string text = header("v1") + "#";
  text.append(koord::kube::kMaxConfigFileBytes - text.size(), 'x');
  tree.write("at-limit.yaml", text);
  tree.write("over-limit.yaml", text + "\n");
  auto at = loadSchedulerConfig(tree.path("at-limit.yaml").string(), registry());
  INFO((at ? std::string() : at.error().message));
  CHECK(at.has_value());
  const std::string over_path = tree.path("over-limit.yaml").string();
  auto over = loadSchedulerConfig(over_path, registry());
  REQUIRE_FALSE(over.has_value());
  CHECK(over.error().message ==
        over_path + ": larger than 4 MiB, the most a configuration file may hold");
}

TEST_CASE("fields koord does not act on are warned about when set to a non-default value",
          "[config]") {
  const std::string serving =
      "has no effect in koord, which serves /healthz and /metrics on "
      "--address/--port";
  const std::string profiling = "has no effect in koord, which serves no profiling endpoints";
  struct Row {
    std::string text;
    Names expected;
  };
  const Row rows[] = {
      {header("v1beta1"), {}},
      {header("v1beta1") + "healthzBindAddress: 0.0.0.0:10251\nmetricsBindAddress: \":10251\"\n"
                           "enableProfiling: true\nenableContentionProfiling: true\n",
       {}},
      {header("v1beta1") + "healthzBindAddress: 127.0.0.1:10259\nmetricsBindAddress: 10.0.0.1\n",
       {"healthzBindAddress: \"127.0.0.1:10259\" " + serving,
        "metricsBindAddress: \"10.0.0.1\" " + serving}},
      // v1beta2's only accepted values switch insecure serving off, as upstream did anyway.
      {header("v1beta2") + "healthzBindAddress: 0.0.0.0:0\nmetricsBindAddress: \"\"\n", {}},
      {header("v1") + "enableProfiling: false\n", {"enableProfiling: false " + profiling}},
      {header("v1") + "enableProfiling: false\nenableContentionProfiling: false\n",
       {"enableProfiling: false " + profiling}},
      {header("v1beta3") + "enableContentionProfiling: false\n",
       {"enableContentionProfiling: false " + profiling}},
  };
  for (const Row& row : rows) {
    CAPTURE(row.text);
    CHECK(parseOk(row.text).inert_fields == row.expected);
  }

  koord::testing::TempTree tree("koord-sched-config");
  tree.write("c.yaml", header("v1beta1") + "metricsBindAddress: 127.0.0.1:9000\n");
  const std::string path = tree.path("c.yaml").string();
  koord::testing::LogLines log;
  REQUIRE(loadSchedulerConfig(path, registry()).has_value());
  CHECK(log.problems() == 1);
  CHECK(log.count(path + ": metricsBindAddress: \"127.0.0.1:9000\" has no effect in koord") == 1);
}

TEST_CASE("PluginRegistry finds by name, lists names sorted, refuses a second registration",
          "[config][registry]") {
  PluginRegistry r = configtest::fakeRegistry({"Zeta", "Alpha"});
  CHECK(r.find("Alpha") != nullptr);
  CHECK(r.find("alpha") == nullptr);
  CHECK(r.names() == Names{"Alpha", "Zeta"});
  CHECK_THROWS_AS(r.add("Zeta", PluginFactory{}), std::logic_error);
}
