// PodTopologySpreadArgs: each configuration version's defaulting of defaultingType, and
// ValidatePodTopologySpreadArgs' errors naming the field.
#include <boost/json.hpp>

#include <catch2/catch.hpp>

#include <string>
#include <string_view>
#include <vector>

#include "catch_expected.h"
#include "fixtures.h"
#include "plugins/upstream/podtopologyspread/args.h"

namespace pts_test {
namespace {

using koord::roles::scheduler::upstream::decodePodTopologySpreadArgs;
using koord::roles::scheduler::upstream::DefaultSpreadConstraint;
using koord::roles::scheduler::upstream::SpreadDefaultingType;
using koord::roles::scheduler::upstream::systemDefaultSpreadConstraints;

constexpr std::string_view kV1beta1 = "kubescheduler.config.k8s.io/v1beta1";
constexpr std::string_view kV1beta2 = "kubescheduler.config.k8s.io/v1beta2";
constexpr std::string_view kV1beta3 = "kubescheduler.config.k8s.io/v1beta3";
constexpr std::string_view kV1 = "kubescheduler.config.k8s.io/v1";

const std::string kZoneList =
    R"({"defaultConstraints":[{"maxSkew":1,"topologyKey":"zone","whenUnsatisfiable":"DoNotSchedule"}]})";

TEST_CASE("PodTopologySpread args without a list use the system defaults",
          "[podtopologyspread][args]") {
  for (std::string_view version : {kV1beta1, kV1beta2, kV1beta3, kV1, std::string_view()}) {
    for (const char* text : {"null", "{}", R"({"defaultingType":"System"})",
                             R"({"defaultConstraints":[],"defaultingType":""})"}) {
      INFO(version << " " << text);
      const boost::json::value v = boost::json::parse(text);
      auto args = decodePodTopologySpreadArgs(&v, version);
      REQUIRE(args);
      CHECK((*args)->defaulting_type == SpreadDefaultingType::kSystem);
      CHECK((*args)->default_constraints.empty());
      CHECK((*args)->effectiveDefaults() == systemDefaultSpreadConstraints());
    }
    auto absent = decodePodTopologySpreadArgs(nullptr, version);
    REQUIRE(absent);
    CHECK((*absent)->defaulting_type == SpreadDefaultingType::kSystem);
  }
  const std::vector<DefaultSpreadConstraint> system{
      {3, "kubernetes.io/hostname", kScheduleAnyway},
      {5, "topology.kubernetes.io/zone", kScheduleAnyway}};
  CHECK(systemDefaultSpreadConstraints() == system);
}

TEST_CASE("PodTopologySpread v1beta1 defaults a given list to List", "[podtopologyspread][args]") {
  const boost::json::value v = boost::json::parse(kZoneList);
  auto args = decodePodTopologySpreadArgs(&v, kV1beta1);
  REQUIRE(args);
  CHECK((*args)->defaulting_type == SpreadDefaultingType::kList);
  const std::vector<DefaultSpreadConstraint> want{{1, "zone", kDoNotSchedule}};
  CHECK((*args)->default_constraints == want);
  CHECK((*args)->effectiveDefaults() == want);
}

TEST_CASE("PodTopologySpread List args keep their list", "[podtopologyspread][args]") {
  const boost::json::value v = boost::json::parse(R"({"defaultingType":"List","defaultConstraints":[
      {"maxSkew":2,"topologyKey":"zone","whenUnsatisfiable":"ScheduleAnyway","labelSelector":null},
      {"maxSkew":1,"topologyKey":"zone","whenUnsatisfiable":"DoNotSchedule"},
      {"maxSkew":3,"topologyKey":"example.com/rack","whenUnsatisfiable":"DoNotSchedule"}]})");
  const std::vector<DefaultSpreadConstraint> want{{2, "zone", kScheduleAnyway},
                                                  {1, "zone", kDoNotSchedule},
                                                  {3, "example.com/rack", kDoNotSchedule}};
  for (std::string_view version : {kV1beta1, kV1beta2, kV1beta3, kV1}) {
    INFO(version);
    auto args = decodePodTopologySpreadArgs(&v, version);
    REQUIRE(args);
    CHECK((*args)->defaulting_type == SpreadDefaultingType::kList);
    CHECK((*args)->default_constraints == want);
  }
  SECTION("an empty List means no default constraints") {
    const boost::json::value empty = boost::json::parse(R"({"defaultingType":"List"})");
    auto args = decodePodTopologySpreadArgs(&empty, kV1beta2);
    REQUIRE(args);
    CHECK((*args)->defaulting_type == SpreadDefaultingType::kList);
    CHECK((*args)->effectiveDefaults().empty());
  }
}

TEST_CASE("PodTopologySpread args errors name the field", "[podtopologyspread][args]") {
  struct Case {
    std::string name;
    std::string_view version;
    std::string json;
    std::string error;
  };
  auto one = [](std::string fields) {
    return R"({"defaultingType":"List","defaultConstraints":[{)" + fields + "}]}";
  };
  const std::vector<Case> cases = {
      {"args must be an object", kV1beta2, "[1]", "args: expected object, got array"},
      {"unknown field", kV1beta2, R"({"foo":1})", "foo: unknown field"},
      {"v1beta2 needs List for a list", kV1beta2, kZoneList,
       "defaultingType: Invalid value: \"System\": when .defaultConstraints are not empty"},
      {"v1 needs List for a list", kV1, kZoneList,
       "defaultingType: Invalid value: \"System\": when .defaultConstraints are not empty"},
      {"System with a list", kV1beta1,
       R"({"defaultingType":"System","defaultConstraints":[{"maxSkew":1,"topologyKey":"zone","whenUnsatisfiable":"DoNotSchedule"}]})",
       "defaultingType: Invalid value: \"System\": when .defaultConstraints are not empty"},
      {"unknown defaultingType", kV1beta2, R"({"defaultingType":"Zone"})",
       "defaultingType: Invalid value: \"Zone\": must be one of {\"System\", \"List\"}"},
      {"defaultingType must be a string", kV1beta2, R"({"defaultingType":1})",
       "defaultingType: expected string, got number"},
      {"defaultConstraints must be a list", kV1beta2, R"({"defaultConstraints":{}})",
       "defaultConstraints: expected array, got object"},
      {"constraints are objects", kV1beta2, R"({"defaultConstraints":[1]})",
       "defaultConstraints[0]: expected object, got number"},
      {"unknown constraint field", kV1beta2,
       one(R"("maxSkew":1,"topologyKey":"zone","whenUnsatisfiable":"DoNotSchedule","minDomains":1)"),
       "defaultConstraints[0].minDomains: unknown field"},
      {"maxSkew must be an integer", kV1beta2,
       one(R"("maxSkew":1.5,"topologyKey":"zone","whenUnsatisfiable":"DoNotSchedule")"),
       "defaultConstraints[0].maxSkew: expected integer, got number"},
      {"maxSkew must fit int32", kV1beta2,
       one(R"("maxSkew":2147483648,"topologyKey":"zone","whenUnsatisfiable":"DoNotSchedule")"),
       "defaultConstraints[0].maxSkew: 2147483648 overflows int32"},
      {"maxSkew is required", kV1beta2,
       one(R"("topologyKey":"zone","whenUnsatisfiable":"DoNotSchedule")"),
       "defaultConstraints[0].maxSkew: Invalid value: 0: must be greater than zero"},
      {"maxSkew must be positive", kV1beta1,
       one(R"("maxSkew":-1,"topologyKey":"zone","whenUnsatisfiable":"DoNotSchedule")"),
       "defaultConstraints[0].maxSkew: Invalid value: -1: must be greater than zero"},
      {"topologyKey is required", kV1beta2,
       one(R"("maxSkew":1,"whenUnsatisfiable":"DoNotSchedule")"),
       "defaultConstraints[0].topologyKey: Required value: can not be empty"},
      {"topologyKey must be a string", kV1beta2,
       one(R"("maxSkew":1,"topologyKey":5,"whenUnsatisfiable":"DoNotSchedule")"),
       "defaultConstraints[0].topologyKey: expected string, got number"},
      {"whenUnsatisfiable is required", kV1beta2, one(R"("maxSkew":1,"topologyKey":"zone")"),
       "defaultConstraints[0].whenUnsatisfiable: Required value: can not be empty"},
      {"whenUnsatisfiable must be known", kV1beta2,
       one(R"("maxSkew":1,"topologyKey":"zone","whenUnsatisfiable":"Never")"),
       "defaultConstraints[0].whenUnsatisfiable: Unsupported value: \"Never\": supported "
       "values: \"DoNotSchedule\", \"ScheduleAnyway\""},
      {"labelSelector is forbidden", kV1beta2,
       one(R"("maxSkew":1,"topologyKey":"zone","whenUnsatisfiable":"DoNotSchedule","labelSelector":{})"),
       "defaultConstraints[0].labelSelector: Forbidden: constraint must not define a selector, "
       "as they deduced for each pod"},
      {"duplicate key and action", kV1beta2,
       R"({"defaultingType":"List","defaultConstraints":[
           {"maxSkew":1,"topologyKey":"zone","whenUnsatisfiable":"DoNotSchedule"},
           {"maxSkew":2,"topologyKey":"zone","whenUnsatisfiable":"DoNotSchedule"}]})",
       "defaultConstraints[1]: Duplicate value: \"{zone, DoNotSchedule}\""},
      {"the first bad entry is reported", kV1beta2,
       R"({"defaultingType":"List","defaultConstraints":[
           {"maxSkew":1,"topologyKey":"zone","whenUnsatisfiable":"DoNotSchedule"},
           {"maxSkew":0,"topologyKey":"","whenUnsatisfiable":""}]})",
       "defaultConstraints[1].maxSkew: Invalid value: 0: must be greater than zero"},
  };
  for (const auto& c : cases) {
    SECTION(c.name) {
      const boost::json::value v = boost::json::parse(c.json);
      auto args = decodePodTopologySpreadArgs(&v, c.version);
      REQUIRE_FALSE(args);
      CHECK(args.error().message == c.error);
    }
  }
  SECTION("an invalid topologyKey names the key") {
    const boost::json::value v = boost::json::parse(
        one(R"("maxSkew":1,"topologyKey":"not a key","whenUnsatisfiable":"DoNotSchedule")"));
    auto args = decodePodTopologySpreadArgs(&v, kV1beta2);
    REQUIRE_FALSE(args);
    CHECK_THAT(
        args.error().message,
        Catch::StartsWith("defaultConstraints[0].topologyKey: Invalid value: \"not a key\": "));
  }
}

}  // namespace
}  // namespace pts_test
