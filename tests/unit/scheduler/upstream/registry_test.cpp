#include <catch2/catch.hpp>

#include "fixtures.h"
#include "framework/plugin_registry.h"
#include "plugins/upstream/defaultbinder/register.h"
#include "plugins/upstream/nodeaffinity/register.h"
#include "plugins/upstream/nodename/register.h"
#include "plugins/upstream/nodeports/register.h"
#include "plugins/upstream/noderesources/register.h"
#include "plugins/upstream/nodeunschedulable/register.h"
#include "plugins/upstream/queuesort/register.h"
#include "plugins/upstream/tainttoleration/register.h"
#include "scheduler/fake_handle.h"

namespace koord::roles::scheduler::upstream {
namespace {

using namespace testing;

constexpr std::string_view kV1beta1 = "kubescheduler.config.k8s.io/v1beta1";
constexpr std::string_view kV1beta2 = "kubescheduler.config.k8s.io/v1beta2";

// The upstream plugins never reach through the handle; create() only needs one to exist.
using StubHandle = testkit::FakeHandle;

// The node-local upstream plugins, as the in-tree table registers them.
void registerNodeLocalPlugins(PluginRegistry& registry) {
  registerPrioritySort(registry);
  registerNodeUnschedulable(registry);
  registerNodeName(registry);
  registerNodePorts(registry);
  registerNodeAffinity(registry);
  registerTaintToleration(registry);
  registerNodeResourcesFit(registry);
  registerNodeResourcesLeastAllocated(registry);
  registerNodeResourcesMostAllocated(registry);
  registerNodeResourcesBalancedAllocation(registry);
  registerDefaultBinder(registry);
}

struct Extends {
  bool queue_sort = false;
  bool pre_filter = false;
  bool filter = false;
  bool pre_score = false;
  bool score = false;

  friend bool operator==(const Extends&, const Extends&) = default;
};

Extends extends(const Plugin& p) {
  return {dynamic_cast<const QueueSortPlugin*>(&p) != nullptr,
          dynamic_cast<const PreFilterPlugin*>(&p) != nullptr,
          dynamic_cast<const FilterPlugin*>(&p) != nullptr,
          dynamic_cast<const PreScorePlugin*>(&p) != nullptr,
          dynamic_cast<const ScorePlugin*>(&p) != nullptr};
}

std::shared_ptr<Plugin> build(const PluginRegistry& registry, std::string_view name,
                              std::string_view version, const boost::json::value* args) {
  const PluginFactory* factory = registry.find(name);
  REQUIRE(factory != nullptr);
  auto decoded = factory->decode_args(args, version);
  INFO((decoded ? std::string() : decoded.error().message));
  REQUIRE(decoded.has_value());
  StubHandle handle;
  auto plugin = factory->create(*decoded, handle);
  INFO((plugin ? std::string() : plugin.error().message));
  REQUIRE(plugin.has_value());
  REQUIRE(*plugin != nullptr);
  return *plugin;
}

TEST_CASE("the upstream register functions add each plugin under its upstream name",
          "[scheduler][upstream]") {
  PluginRegistry registry;
  registerNodeLocalPlugins(registry);
  const std::vector<std::string> want = {
      "DefaultBinder",
      "NodeAffinity",
      "NodeName",
      "NodePorts",
      "NodeResourcesBalancedAllocation",
      "NodeResourcesFit",
      "NodeResourcesLeastAllocated",
      "NodeResourcesMostAllocated",
      "NodeUnschedulable",
      "PrioritySort",
      "TaintToleration",
  };
  CHECK(registry.names() == want);
  CHECK_THROWS_AS(registerNodeName(registry), std::logic_error);
}

TEST_CASE("upstream factories build plugins with the 1.20 extension points",
          "[scheduler][upstream]") {
  PluginRegistry registry;
  registerNodeLocalPlugins(registry);
  struct Case {
    std::string name;
    std::string_view version;
    Extends want;
  };
  const std::vector<Case> cases = {
      {"PrioritySort", kV1beta2, {.queue_sort = true}},
      {"NodeUnschedulable", kV1beta2, {.filter = true}},
      {"NodeName", kV1beta2, {.filter = true}},
      {"NodePorts", kV1beta2, {.pre_filter = true, .filter = true}},
      // PreFilter and PreScore are later upstream's (they only answer Skip or Success); 1.20
      // (v1beta1) profiles do not list NodeAffinity there, so they never call them.
      {"NodeAffinity",
       kV1beta2,
       {.pre_filter = true, .filter = true, .pre_score = true, .score = true}},
      {"TaintToleration", kV1beta2, {.filter = true, .pre_score = true, .score = true}},
      {"NodeResourcesFit", kV1beta1, {.pre_filter = true, .filter = true}},
      {"NodeResourcesFit", kV1beta2, {.pre_filter = true, .filter = true, .score = true}},
      {"NodeResourcesLeastAllocated", kV1beta1, {.score = true}},
      {"NodeResourcesMostAllocated", kV1beta1, {.score = true}},
      {"NodeResourcesBalancedAllocation", kV1beta1, {.score = true}},
      {"NodeResourcesBalancedAllocation", kV1beta2, {.score = true}},
  };
  for (const auto& c : cases) {
    INFO(c.name << " " << c.version);
    const auto plugin = build(registry, c.name, c.version, nullptr);
    CHECK(plugin->name() == c.name);
    CHECK(extends(*plugin) == c.want);
  }
}

TEST_CASE("upstream factories pass decoded args to the plugin", "[scheduler][upstream]") {
  PluginRegistry registry;
  registerNodeLocalPlugins(registry);
  const auto args = parseJson(R"({"scoringStrategy":{"type":"MostAllocated"}})");
  const auto plugin = build(registry, "NodeResourcesFit", kV1beta2, &args);
  const auto* score = dynamic_cast<const ScorePlugin*>(plugin.get());
  REQUIRE(score != nullptr);
  // MostAllocated: cpu 75, memory 50 -> 62 (LeastAllocated, the default, would give 37).
  std::int64_t s = -1;
  REQUIRE(score
              ->score(CycleState{}, podRequesting(res(3000, 5000)),
                      makeNodeInfo(makeNode("n", res(4000, 10000))), s)
              .ok());
  CHECK(s == 62);
}

TEST_CASE("upstream factories refuse args of another plugin", "[scheduler][upstream]") {
  PluginRegistry registry;
  registerNodeLocalPlugins(registry);
  StubHandle handle;
  const auto affinity_args = std::make_shared<const PluginArgs>();
  for (const char* name : {"NodeAffinity", "NodeResourcesFit", "NodeResourcesLeastAllocated",
                           "NodeResourcesMostAllocated", "NodeResourcesBalancedAllocation"}) {
    INFO(name);
    auto created = registry.find(name)->create(affinity_args, handle);
    CHECK_FALSE(created.has_value());
  }
}

TEST_CASE("upstream plugins without args refuse non-empty args", "[scheduler][upstream]") {
  PluginRegistry registry;
  registerNodeLocalPlugins(registry);
  const auto args = parseJson(R"({"foo":true})");
  for (const char* name :
       {"PrioritySort", "NodeUnschedulable", "NodeName", "NodePorts", "TaintToleration"}) {
    INFO(name);
    auto decoded = registry.find(name)->decode_args(&args, kV1beta2);
    REQUIRE_FALSE(decoded.has_value());
    CHECK(decoded.error().message ==
          "foo: unknown field (plugin " + std::string(name) + " takes no args)");
  }
}

}  // namespace
}  // namespace koord::roles::scheduler::upstream
