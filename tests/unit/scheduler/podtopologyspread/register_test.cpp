// registerPodTopologySpread: the registry entry decodes args per version and builds a plugin
// serving PreFilter (with extensions), Filter, PreScore and Score.
#include <boost/json.hpp>

#include <catch2/catch.hpp>

#include <memory>

#include "catch_expected.h"
#include "fixtures.h"
#include "framework/plugin_registry.h"
#include "plugins/upstream/podtopologyspread/register.h"

namespace pts_test {
namespace {

using koord::roles::scheduler::FilterPlugin;
using koord::roles::scheduler::PluginArgs;
using koord::roles::scheduler::PluginRegistry;
using koord::roles::scheduler::PreFilterPlugin;
using koord::roles::scheduler::PreScorePlugin;
using koord::roles::scheduler::ScorePlugin;
using koord::roles::scheduler::upstream::registerPodTopologySpread;

struct OtherArgs final : PluginArgs {};

TEST_CASE("PodTopologySpread registers under its upstream name", "[podtopologyspread]") {
  PluginRegistry registry;
  registerPodTopologySpread(registry);
  const auto* factory = registry.find("PodTopologySpread");
  REQUIRE(factory != nullptr);
  CHECK_THROWS_AS(registerPodTopologySpread(registry), std::logic_error);

  FakeHandle handle({zoneNode("node-a", "zone1"), zoneNode("node-b", "zone1")},
                    {makePod("q").node("node-a").label("foo", "")});
  auto args = factory->decode_args(nullptr, "kubescheduler.config.k8s.io/v1beta2");
  REQUIRE(args);
  auto built = factory->create(*args, handle);
  REQUIRE(built);
  auto plugin = *built;
  CHECK(plugin->name() == "PodTopologySpread");
  auto* pre_filter = dynamic_cast<PreFilterPlugin*>(plugin.get());
  auto* filter = dynamic_cast<FilterPlugin*>(plugin.get());
  REQUIRE(pre_filter != nullptr);
  REQUIRE(filter != nullptr);
  CHECK(pre_filter->preFilterExtensions() != nullptr);
  CHECK(dynamic_cast<PreScorePlugin*>(plugin.get()) != nullptr);
  auto* score = dynamic_cast<ScorePlugin*>(plugin.get());
  REQUIRE(score != nullptr);
  CHECK(score->hasNormalizeScore());

  // The built plugin reads the handle's snapshot: node-a already holds a matching pod.
  const PodInfo pod = makePod("p").label("foo", "").spread(1, "node", kDoNotSchedule, sel("foo"));
  CycleState state;
  REQUIRE(pre_filter->preFilter(state, pod).ok());
  CHECK(filter->filter(state, pod, handle.node("node-a")).code() == Code::kUnschedulable);
  CHECK(filter->filter(state, pod, handle.node("node-b")).ok());

  SECTION("bad args are refused at decode") {
    const boost::json::value v = boost::json::parse(R"({"defaultingType":"Nope"})");
    CHECK_FALSE(factory->decode_args(&v, "kubescheduler.config.k8s.io/v1beta2"));
  }
  SECTION("args of another plugin are refused at create") {
    auto wrong = factory->create(std::make_shared<const OtherArgs>(), handle);
    REQUIRE_FALSE(wrong);
    CHECK(wrong.error().message == "PodTopologySpread: args are not PodTopologySpreadArgs");
  }
  SECTION("no args at all builds the system defaults") {
    CHECK(factory->create(nullptr, handle));
  }
}

}  // namespace
}  // namespace pts_test
