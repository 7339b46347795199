#include "plugins/loadaware/register.h"

#include "framework/plugin_registry.h"

#include <boost/json.hpp>

#include <catch2/catch.hpp>

#include "fixture.h"

using namespace loadaware_test;
using koord::roles::scheduler::PluginRegistry;

TEST_CASE("loadaware registration: decode and create through the registry",
          "[scheduler][loadaware]") {
  PluginRegistry registry;
  koord::roles::scheduler::registerLoadAwareScheduling(registry);
  const auto* factory = registry.find("LoadAwareScheduling");
  REQUIRE(factory != nullptr);
  FakeHandle handle;

  SECTION("no args: the defaults") {
    auto args = factory->decode_args(nullptr, "kubescheduler.config.k8s.io/v1beta1");
    REQUIRE(args.has_value());
    auto plugin = factory->create(*args, handle);
    REQUIRE(plugin.has_value());
    CHECK((*plugin)->name() == "LoadAwareScheduling");
  }
  SECTION("NodeMetrics are declared for the scheduler's informers, kept on NodeInfos") {
    REQUIRE(factory->objects.size() == 1);
    CHECK(factory->objects[0].key == "slo.koordinator.sh/v1alpha1/nodemetrics");
    CHECK(factory->objects[0].make_informer != nullptr);
  }
  SECTION("bad args are refused with the field named") {
    boost::json::value v = boost::json::parse(R"({"usageThresholds": {"cpu": 300}})");
    auto args = factory->decode_args(&v, "kubescheduler.config.k8s.io/v1beta1");
    REQUIRE_FALSE(args.has_value());
    CHECK_THAT(args.error().message, Catch::Contains("usageThresholds[cpu]"));
  }
}
