// InterPodAffinityArgs decoding (strict fields, default, [0, 100] range) for every config
// version, and the registry entry's decode/create.
#include <boost/json.hpp>

#include <catch2/catch.hpp>

#include "fixture.h"
#include "framework/plugin_registry.h"
#include "plugins/upstream/interpodaffinity/register.h"

namespace ipa_test {
namespace {

constexpr std::string_view kV1beta1 = "kubescheduler.config.k8s.io/v1beta1";
constexpr std::string_view kV1 = "kubescheduler.config.k8s.io/v1";

std::int32_t weightOf(std::string_view json, std::string_view version = kV1) {
  const boost::json::value v = boost::json::parse(json);
  auto args = decodeInterPodAffinityArgs(&v, version);
  INFO(json);
  REQUIRE(args.has_value());
  return (*args)->hard_pod_affinity_weight;
}

std::string errorOf(std::string_view json, std::string_view version = kV1) {
  const boost::json::value v = boost::json::parse(json);
  auto args = decodeInterPodAffinityArgs(&v, version);
  INFO(json);
  REQUIRE_FALSE(args.has_value());
  return args.error().message;
}

TEST_CASE("InterPodAffinityArgs defaults and values", "[scheduler][interpodaffinity]") {
  auto absent = decodeInterPodAffinityArgs(nullptr, kV1);
  REQUIRE(absent.has_value());
  CHECK((*absent)->hard_pod_affinity_weight == 1);
  for (std::string_view version :
       {kV1beta1, std::string_view("kubescheduler.config.k8s.io/v1beta2"),
        std::string_view("kubescheduler.config.k8s.io/v1beta3"), kV1}) {
    INFO(version);
    CHECK(weightOf("null", version) == 1);
    CHECK(weightOf("{}", version) == 1);
    CHECK(weightOf(R"({"hardPodAffinityWeight":null})", version) == 1);
    CHECK(weightOf(R"({"hardPodAffinityWeight":0})", version) == 0);
    CHECK(weightOf(R"({"hardPodAffinityWeight":10})", version) == 10);
    CHECK(weightOf(R"({"hardPodAffinityWeight":100})", version) == 100);
  }
}

TEST_CASE("InterPodAffinityArgs errors name the field", "[scheduler][interpodaffinity]") {
  CHECK(errorOf(R"({"hardPodAffinityWeight":101})") ==
        "hardPodAffinityWeight: Invalid value: 101: not in valid range [0-100]");
  CHECK(errorOf(R"({"hardPodAffinityWeight":-1})", kV1beta1) ==
        "hardPodAffinityWeight: Invalid value: -1: not in valid range [0-100]");
  CHECK(errorOf(R"({"hardPodAffinityWeight":4294967297})") ==
        "hardPodAffinityWeight: Invalid value: 4294967297: not in valid range [0-100]");
  CHECK_THAT(errorOf(R"({"hardPodAffinityWeight":1.5})"),
             Catch::StartsWith("hardPodAffinityWeight: "));
  CHECK_THAT(errorOf(R"({"hardPodAffinityWeight":"1"})"),
             Catch::StartsWith("hardPodAffinityWeight: "));
  CHECK(errorOf(R"({"hardPodAffinityWeight":1,"ignorePreferredTermsOfExistingPods":true})") ==
        "ignorePreferredTermsOfExistingPods: unknown field");
  CHECK_THAT(errorOf("[]"), Catch::StartsWith("args: "));

  InterPodAffinityArgs bad;
  bad.hard_pod_affinity_weight = 200;
  auto valid = validateInterPodAffinityArgs(bad);
  REQUIRE_FALSE(valid.has_value());
  CHECK(valid.error().message ==
        "hardPodAffinityWeight: Invalid value: 200: not in valid range [0-100]");
}

TEST_CASE("InterPodAffinity registry entry decodes args and builds the plugin",
          "[scheduler][interpodaffinity]") {
  PluginRegistry registry;
  koord::roles::scheduler::upstream::registerInterPodAffinity(registry);
  const PluginFactory* factory = registry.find("InterPodAffinity");
  REQUIRE(factory != nullptr);
  Cluster cluster({{"n1"}}, {});

  const boost::json::value v = boost::json::parse(R"({"hardPodAffinityWeight":7})");
  auto args = factory->decode_args(&v, kV1);
  REQUIRE(args.has_value());
  const auto* typed = dynamic_cast<const InterPodAffinityArgs*>(args->get());
  REQUIRE(typed != nullptr);
  CHECK(typed->hard_pod_affinity_weight == 7);

  auto plugin = factory->create(*args, cluster);
  REQUIRE(plugin.has_value());
  CHECK((*plugin)->name() == "InterPodAffinity");
  auto* pre_filter = dynamic_cast<PreFilterPlugin*>(plugin->get());
  REQUIRE(pre_filter != nullptr);
  CHECK(pre_filter->preFilterExtensions() != nullptr);
  CHECK(dynamic_cast<FilterPlugin*>(plugin->get()) != nullptr);
  CHECK(dynamic_cast<PreScorePlugin*>(plugin->get()) != nullptr);
  auto* scorer = dynamic_cast<ScorePlugin*>(plugin->get());
  REQUIRE(scorer != nullptr);
  CHECK(scorer->hasNormalizeScore());

  auto defaults = factory->create(nullptr, cluster);
  CHECK(defaults.has_value());

  auto bad = std::make_shared<InterPodAffinityArgs>();
  bad->hard_pod_affinity_weight = -3;
  auto refused = factory->create(bad, cluster);
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().message ==
        "hardPodAffinityWeight: Invalid value: -3: not in valid range [0-100]");

  struct OtherArgs : PluginArgs {};
  auto wrong = factory->create(std::make_shared<OtherArgs>(), cluster);
  REQUIRE_FALSE(wrong.has_value());
  CHECK(wrong.error().message == "want args to be of type InterPodAffinityArgs");

  const boost::json::value out_of_range = boost::json::parse(R"({"hardPodAffinityWeight":101})");
  CHECK_FALSE(factory->decode_args(&out_of_range, kV1beta1).has_value());
}

}  // namespace
}  // namespace ipa_test
