// The five plugins' registry entries: each decodes its args and builds a plugin of its kind.
#include <boost/json.hpp>

#include <catch2/catch.hpp>

#include <string>

#include "fake_handle.h"
#include "plugins/removeduplicates/register.h"
#include "plugins/removepodsviolatinginterpodantiaffinity/register.h"
#include "plugins/removepodsviolatingnodeaffinity/register.h"
#include "plugins/removepodsviolatingnodetaints/register.h"
#include "plugins/removepodsviolatingtopologyspreadconstraint/register.h"

namespace koord::roles::descheduler {
namespace {

TEST_CASE("k8splugins: each registers under its upstream name", "[descheduler]") {
  PluginRegistry r;
  registerRemovePodsViolatingNodeAffinity(r);
  registerRemovePodsViolatingNodeTaints(r);
  registerRemovePodsViolatingInterPodAntiAffinity(r);
  registerRemovePodsViolatingTopologySpreadConstraint(r);
  registerRemoveDuplicates(r);
  testkit::FakeHandle h;

  struct Case {
    const char* name;
    const char* args;
    bool deschedule;
  };
  const Case cases[] = {
      {"RemovePodsViolatingNodeAffinity",
       R"({"nodeAffinityType": ["requiredDuringSchedulingIgnoredDuringExecution"]})", true},
      {"RemovePodsViolatingNodeTaints", "null", true},
      {"RemovePodsViolatingInterPodAntiAffinity", "null", true},
      {"RemovePodsViolatingTopologySpreadConstraint", "null", false},
      {"RemoveDuplicates", "null", false},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    const PluginFactory* f = r.find(c.name);
    REQUIRE(f != nullptr);
    const boost::json::value v = boost::json::parse(c.args);
    auto args = f->decode_args(&v, "descheduler/v1alpha2");
    REQUIRE(args.has_value());
    auto plugin = f->create(*args, h);
    REQUIRE(plugin.has_value());
    CHECK((*plugin)->name() == c.name);
    CHECK((dynamic_cast<DeschedulePlugin*>(plugin->get()) != nullptr) == c.deschedule);
    CHECK((dynamic_cast<BalancePlugin*>(plugin->get()) != nullptr) == !c.deschedule);
  }
  // Node affinity has no default: built without args it refuses.
  CHECK_FALSE(r.find("RemovePodsViolatingNodeAffinity")->create(nullptr, h).has_value());
  CHECK(r.find("RemoveDuplicates")->create(nullptr, h).has_value());
}

}  // namespace
}  // namespace koord::roles::descheduler
