#include "config/expand_plugins.h"

#include <catch2/catch.hpp>

#include <boost/json.hpp>

#include <fmt/format.h>

#include <string>
#include <utility>
#include <vector>

#include "catch_expected.h"
#include "config/scheduler_config.h"
#include "fake_plugins.h"

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

// The real plugins' points plus the test's: Alpha and Beta filter and score, Gamma reserves.
const configtest::PointTable& points() {
  static const configtest::PointTable t = [] {
    configtest::PointTable out = configtest::realPointTable();
    out["Alpha"] = {EP::kFilter, EP::kScore};
    out["Beta"] = {EP::kFilter, EP::kScore};
    out["Gamma"] = {EP::kReserve};
    return out;
  }();
  return t;
}

bool implements(std::string_view name, ExtensionPoint p) {
  return configtest::implementsIn(points(), name, p);
}

SchedulerConfig parseOk(const std::string& text, const PluginRegistry& reg = registry()) {
  auto c = parseSchedulerConfigText(text, reg);
  INFO(text);
  REQUIRE(c);
  return std::move(*c);
}

std::string v1(std::string_view body) {
  return fmt::format(
      "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n{}", body);
}

Names names(const std::vector<PluginRef>& refs) {
  Names out;
  for (const auto& r : refs)
    out.push_back(r.name);
  return out;
}

Weighted weights(const std::vector<PluginRef>& refs) {
  Weighted out;
  for (const auto& r : refs)
    out.emplace_back(r.name, r.weight);
  return out;
}

const Names kDefaultFilters = {"NodeUnschedulable",  "NodeName",          "TaintToleration",
                               "NodeAffinity",       "NodePorts",         "NodeResourcesFit",
                               "VolumeRestrictions", "EBSLimits",         "GCEPDLimits",
                               "NodeVolumeLimits",   "AzureDiskLimits",   "VolumeBinding",
                               "VolumeZone",         "PodTopologySpread", "InterPodAffinity"};
const Weighted kDefaultScores = {{"TaintToleration", 3},  {"NodeAffinity", 2},
                                 {"NodeResourcesFit", 1}, {"PodTopologySpread", 2},
                                 {"InterPodAffinity", 2}, {"NodeResourcesBalancedAllocation", 1},
                                 {"ImageLocality", 1}};

}  // namespace

TEST_CASE("v1 defaults expand from MultiPoint into the points each plugin implements",
          "[config][expand]") {
  const SchedulerConfig c = parseOk(v1(""));
  auto e = expandPlugins(c.profiles[0], implements);
  REQUIRE(e);
  CHECK(names((*e)[EP::kPreEnqueue]) == Names{"SchedulingGates"});
  CHECK(names((*e)[EP::kQueueSort]) == Names{"PrioritySort"});
  CHECK(names((*e)[EP::kPreFilter]) ==
        Names{"NodeAffinity", "NodePorts", "NodeResourcesFit", "VolumeRestrictions", "EBSLimits",
              "GCEPDLimits", "NodeVolumeLimits", "AzureDiskLimits", "VolumeBinding", "VolumeZone",
              "PodTopologySpread", "InterPodAffinity", "DynamicResources"});
  CHECK(names((*e)[EP::kFilter]) == kDefaultFilters);
  CHECK(names((*e)[EP::kPostFilter]) == Names{"DefaultPreemption"});
  CHECK(weights((*e)[EP::kScore]) == kDefaultScores);
  CHECK(names((*e)[EP::kBind]) == Names{"DefaultBinder"});
  CHECK(names((*e)[EP::kReserve]) == Names{"VolumeBinding"});
  CHECK(names((*e)[EP::kPreBind]) == Names{"VolumeBinding"});
  CHECK((*e)[EP::kMultiPoint].empty());
  CHECK_THAT(describe(*e),
             Catch::Matchers::StartsWith("preEnqueue: SchedulingGates; queueSort: PrioritySort; "
                                         "preFilter: NodeAffinity, NodePorts, NodeResourcesFit, "
                                         "VolumeRestrictions, "));
  CHECK_THAT(describe(*e), Catch::Matchers::EndsWith(
                               "NodeResourcesBalancedAllocation(1), ImageLocality(1); reserve: "
                               "VolumeBinding; preBind: VolumeBinding; bind: DefaultBinder"));
}

TEST_CASE("a point's own entry overrides MultiPoint's, goes first, and keeps its weight",
          "[config][expand]") {
  const SchedulerConfig c = parseOk(v1(R"(
profiles:
- plugins:
    multiPoint:
      enabled: [{name: Alpha, weight: 4}, {name: Gamma}]
    filter:
      enabled: [{name: Beta}, {name: Alpha}]
    score:
      enabled: [{name: Alpha}]
)"));
  auto e = expandPlugins(c.profiles[0], implements);
  REQUIRE(e);
  Names filters = {"Alpha"};
  filters.insert(filters.end(), kDefaultFilters.begin(), kDefaultFilters.end());
  filters.push_back("Beta");
  CHECK(names((*e)[EP::kFilter]) == filters);
  // The score entry names no weight: it weighs 1, MultiPoint's 4 does not apply.
  Weighted scores = {{"Alpha", 1}};
  scores.insert(scores.end(), kDefaultScores.begin(), kDefaultScores.end());
  CHECK(weights((*e)[EP::kScore]) == scores);
  CHECK(names((*e)[EP::kReserve]) == Names{"VolumeBinding", "Gamma"});
}

TEST_CASE("MultiPoint weights apply where no score entry is given, and 0 weighs 1",
          "[config][expand]") {
  const SchedulerConfig c = parseOk(v1(R"(
profiles:
- plugins:
    multiPoint:
      enabled: [{name: Alpha, weight: 4}, {name: Beta, weight: 0}]
    filter:
      disabled: [{name: Alpha}, {name: NodeName}]
)"));
  auto e = expandPlugins(c.profiles[0], implements);
  REQUIRE(e);
  Weighted scores = kDefaultScores;
  scores.emplace_back("Alpha", 4);
  scores.emplace_back("Beta", 1);
  CHECK(weights((*e)[EP::kScore]) == scores);
  // Disabled at filter, still scored.
  Names filters = kDefaultFilters;
  filters.erase(filters.begin() + 1);  // NodeName
  filters.push_back("Beta");
  CHECK(names((*e)[EP::kFilter]) == filters);
}

TEST_CASE(
    "disabled \"*\" at a point keeps MultiPoint out of it, and at MultiPoint drops the defaults",
    "[config][expand]") {
  const SchedulerConfig c = parseOk(v1(R"(
profiles:
- plugins:
    multiPoint:
      disabled: [{name: "*"}]
      enabled: [{name: PrioritySort}, {name: DefaultBinder}, {name: Alpha}]
    score:
      disabled: [{name: "*"}]
      enabled: [{name: Beta, weight: 7}]
)"));
  auto e = expandPlugins(c.profiles[0], implements);
  REQUIRE(e);
  CHECK(names((*e)[EP::kQueueSort]) == Names{"PrioritySort"});
  CHECK(names((*e)[EP::kFilter]) == Names{"Alpha"});
  CHECK(weights((*e)[EP::kScore]) == Weighted{{"Beta", 7}});
  CHECK(names((*e)[EP::kBind]) == Names{"DefaultBinder"});
  CHECK((*e)[EP::kPreEnqueue].empty());
}

TEST_CASE("v1beta1 per-point lists pass through, and Score weights 0 become 1",
          "[config][expand]") {
  const SchedulerConfig c = parseOk(R"(apiVersion: kubescheduler.config.k8s.io/v1beta1
kind: KubeSchedulerConfiguration
profiles:
- plugins:
    score:
      enabled: [{name: Alpha, weight: 0}, {name: Beta}]
)");
  auto e = expandPlugins(c.profiles[0], implements);
  REQUIRE(e);
  CHECK(weights((*e)[EP::kScore]) == Weighted{{"NodeResourcesBalancedAllocation", 1},
                                              {"ImageLocality", 1},
                                              {"InterPodAffinity", 1},
                                              {"NodeResourcesLeastAllocated", 1},
                                              {"NodeAffinity", 1},
                                              {"NodePreferAvoidPods", 10000},
                                              {"PodTopologySpread", 2},
                                              {"TaintToleration", 1},
                                              {"Alpha", 1},
                                              {"Beta", 1}});
}

TEST_CASE("expansion faults name the profile's point", "[config][expand]") {
  struct Row {
    std::string text;
    std::string error;
  };
  const Row rows[] = {
      {v1("profiles: [{plugins: {filter: {enabled: [{name: DefaultBinder}]}}}]\n"),
       "profiles[0].plugins.filter.enabled[0]: plugin \"DefaultBinder\" does not implement filter"},
      {v1("profiles: [{plugins: {multiPoint: {disabled: [{name: \"*\"}], enabled: [{name: "
          "DefaultBinder}]}}}]\n"),
       "profiles[0].plugins.queueSort: exactly one queue sort plugin is required for profile "
       "\"default-scheduler\", got 0"},
      {v1("profiles: [{schedulerName: x, plugins: {bind: {disabled: [{name: \"*\"}]}}}]\n"),
       "profiles[0].plugins.bind: at least one bind plugin is required for profile \"x\""},
      {"apiVersion: kubescheduler.config.k8s.io/v1beta1\nkind: KubeSchedulerConfiguration\n"
       "profiles: [{plugins: {reserve: {enabled: [{name: Alpha}]}}}]\n",
       "profiles[0].plugins.reserve.enabled[0]: plugin \"Alpha\" does not implement reserve"},
  };
  for (const Row& row : rows) {
    const SchedulerConfig c = parseOk(row.text);
    auto e = expandPlugins(c.profiles[0], implements);
    CAPTURE(row.text);
    REQUIRE_FALSE(e);
    CHECK(e.error().message == row.error);
  }
  // A default the built plugin does not implement is named as a default.
  const SchedulerConfig c = parseOk(
      "apiVersion: kubescheduler.config.k8s.io/v1beta1\nkind: KubeSchedulerConfiguration\n");
  auto e = expandPlugins(c.profiles[0], [](std::string_view name, ExtensionPoint p) {
    return name != "NodeName" && implements(name, p);
  });
  REQUIRE_FALSE(e);
  CHECK(e.error().message ==
        "profiles[0].plugins.filter: default plugin \"NodeName\" does not implement filter");
}

// Koordinator's koord-scheduler-config (config/manager/scheduler-config.yaml), as shipped.
constexpr std::string_view kKoordSchedulerConfig = R"(apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection:
  leaderElect: true
  resourceLock: leases
  resourceName: koord-scheduler
  resourceNamespace: koordinator-system
profiles:
  - pluginConfig:
    - name: NodeResourcesFit
      args:
        apiVersion: kubescheduler.config.k8s.io/v1
        kind: NodeResourcesFitArgs
        scoringStrategy:
          type: LeastAllocated
          resources:
            - name: cpu
              weight: 1
            - name: memory
              weight: 1
            - name: "kubernetes.io/batch-cpu"
              weight: 1
            - name: "kubernetes.io/batch-memory"
              weight: 1
    - name: LoadAwareScheduling
      args:
        apiVersion: kubescheduler.config.k8s.io/v1
        kind: LoadAwareSchedulingArgs
        filterExpiredNodeMetrics: false
        nodeMetricExpirationSeconds: 300
        resourceWeights:
          cpu: 1
          memory: 1
        usageThresholds:
          cpu: 0
          memory: 0
        estimatedScalingFactors:
          cpu: 85
          memory: 70
    - name: ElasticQuota
      args:
        apiVersion: kubescheduler.config.k8s.io/v1
        kind: ElasticQuotaArgs
        quotaGroupNamespace: koordinator-system
    plugins:
      preEnqueue:
        enabled:
          - name: Coscheduling
      queueSort:
        disabled:
          - name: "*"
        enabled:
          - name: PrioritySort
      preFilter:
        enabled:
          - name: SchedulingHint
          - name: Reservation
          - name: NodeNUMAResource
          - name: DeviceShare
          - name: Coscheduling
          - name: ElasticQuota
      filter:
        enabled:
          - name: LoadAwareScheduling
          - name: NodeNUMAResource
          - name: DeviceShare
          - name: Reservation
      postFilter:
        disabled:
          - name: "*"
        enabled:
          - name: Reservation
          - name: Coscheduling
          - name: ElasticQuota
          - name: DefaultPreemption
      preScore:
        enabled:
          - name: Reservation
          - name: Coscheduling
      score:
        enabled:
          - name: LoadAwareScheduling
            weight: 1
          - name: NodeNUMAResource
            weight: 1
          - name: DeviceShare
            weight: 1
          - name: Reservation
            weight: 5000
          - name: Coscheduling
            weight: 1
      reserve:
        enabled:
          - name: LoadAwareScheduling
          - name: NodeNUMAResource
          - name: DeviceShare
          - name: Reservation
          - name: Coscheduling
          - name: ElasticQuota
      permit:
        enabled:
          - name: Coscheduling
      preBind:
        enabled:
          - name: NodeNUMAResource
          - name: DeviceShare
          - name: Reservation
          - name: Coscheduling
          - name: DefaultPreBind
      bind:
        disabled:
          - name: "*"
        enabled:
          - name: Reservation
          - name: DefaultBinder
      postBind:
        enabled:
          - name: Coscheduling
    schedulerName: koord-scheduler
)";

TEST_CASE("Koordinator's shipped koord-scheduler-config parses and expands", "[config][expand]") {
  std::vector<std::string_view> known = configtest::koordUpstreamPlugins();
  for (std::string_view n :
       {"Coscheduling", "SchedulingHint", "Reservation", "NodeNUMAResource", "DeviceShare",
        "ElasticQuota", "LoadAwareScheduling", "DefaultPreBind"}) {
    known.push_back(n);
  }
  const PluginRegistry koord = configtest::fakeRegistry(known, configtest::Decoder::kAnyObject);
  const SchedulerConfig c = parseOk(std::string(kKoordSchedulerConfig), koord);

  CHECK(c.version == ApiVersion::kV1);
  CHECK(c.leader_election.resource_name == "koord-scheduler");
  CHECK(c.leader_election.resource_namespace == "koordinator-system");
  REQUIRE(c.profiles.size() == 1);
  const Profile& p = c.profiles[0];
  CHECK(p.scheduler_name == "koord-scheduler");

  const auto* load_aware = dynamic_cast<const FakeArgs*>(p.args.at("LoadAwareScheduling").get());
  REQUIRE(load_aware != nullptr);
  CHECK(load_aware->api_version == "kubescheduler.config.k8s.io/v1");
  CHECK(load_aware->raw == json::parse(R"({
      "filterExpiredNodeMetrics": false, "nodeMetricExpirationSeconds": 300,
      "resourceWeights": {"cpu": 1, "memory": 1}, "usageThresholds": {"cpu": 0, "memory": 0},
      "estimatedScalingFactors": {"cpu": 85, "memory": 70}})"));
  const auto* fit = dynamic_cast<const FakeArgs*>(p.args.at("NodeResourcesFit").get());
  REQUIRE(fit != nullptr);
  CHECK(fit->raw.at("scoringStrategy").at("resources").at(2).at("name").as_string() ==
        "kubernetes.io/batch-cpu");
  // Enabled without pluginConfig: decoded from no args.
  const auto* cosched = dynamic_cast<const FakeArgs*>(p.args.at("Coscheduling").get());
  REQUIRE(cosched != nullptr);
  CHECK(cosched->raw.is_null());

  auto e = expandPlugins(p, [](std::string_view name, ExtensionPoint point) {
    return configtest::implementsIn(configtest::realPointTable(), name, point);
  });
  REQUIRE(e);
  CHECK(names((*e)[EP::kPreEnqueue]) == Names{"SchedulingGates", "Coscheduling"});
  CHECK(names((*e)[EP::kQueueSort]) == Names{"PrioritySort"});
  CHECK(names((*e)[EP::kPreFilter]) ==
        Names{"NodeAffinity", "NodePorts", "NodeResourcesFit", "VolumeRestrictions", "EBSLimits",
              "GCEPDLimits", "NodeVolumeLimits", "AzureDiskLimits", "VolumeBinding", "VolumeZone",
              "PodTopologySpread", "InterPodAffinity", "DynamicResources", "SchedulingHint",
              "Reservation", "NodeNUMAResource", "DeviceShare", "Coscheduling", "ElasticQuota"});
  Names filters = kDefaultFilters;
  for (const char* n : {"LoadAwareScheduling", "NodeNUMAResource", "DeviceShare", "Reservation"})
    filters.push_back(n);
  CHECK(names((*e)[EP::kFilter]) == filters);
  CHECK(names((*e)[EP::kPostFilter]) ==
        Names{"Reservation", "Coscheduling", "ElasticQuota", "DefaultPreemption"});
  CHECK(names((*e)[EP::kPreScore]) == Names{"TaintToleration", "NodeAffinity", "NodeResourcesFit",
                                            "PodTopologySpread", "InterPodAffinity",
                                            "NodeResourcesBalancedAllocation", "Reservation",
                                            "Coscheduling"});
  Weighted scores = kDefaultScores;
  for (const auto& s : Weighted{{"LoadAwareScheduling", 1},
                                {"NodeNUMAResource", 1},
                                {"DeviceShare", 1},
                                {"Reservation", 5000},
                                {"Coscheduling", 1}}) {
    scores.push_back(s);
  }
  CHECK(weights((*e)[EP::kScore]) == scores);
  CHECK(names((*e)[EP::kReserve]) == Names{"VolumeBinding", "LoadAwareScheduling",
                                           "NodeNUMAResource", "DeviceShare", "Reservation",
                                           "Coscheduling", "ElasticQuota"});
  CHECK(names((*e)[EP::kPermit]) == Names{"Coscheduling"});
  CHECK(names((*e)[EP::kPreBind]) == Names{"VolumeBinding", "NodeNUMAResource", "DeviceShare",
                                           "Reservation", "Coscheduling", "DefaultPreBind"});
  CHECK(names((*e)[EP::kBind]) == Names{"Reservation", "DefaultBinder"});
  CHECK(names((*e)[EP::kPostBind]) == Names{"Coscheduling"});

  CHECK_THAT(describe(c),
             Catch::Matchers::StartsWith(
                 "kubescheduler.config.k8s.io/v1 profile \"koord-scheduler\" {multiPoint: "
                 "SchedulingGates, PrioritySort, NodeUnschedulable, NodeName, TaintToleration(3), "
                 "NodeAffinity(2)"));
}
