#include "plugins/coscheduling/args.h"

#include <boost/json.hpp>
#include <catch2/catch.hpp>

using namespace koord::roles::scheduler::coscheduling;
using namespace std::chrono_literals;
namespace kube = koord::kube;
namespace json = boost::json;

namespace {

kube::Expected<CoschedulingArgs> decode(std::string_view text) {
  const json::value v = json::parse(text);
  return decodeCoschedulingArgs(&v, "kubescheduler.config.k8s.io/v1beta2");
}

}  // namespace

TEST_CASE("CoschedulingArgs: Koordinator's defaults", "[scheduler][coscheduling]") {
  auto none = decodeCoschedulingArgs(nullptr, "kubescheduler.config.k8s.io/v1beta2");
  REQUIRE(none.has_value());
  CHECK(none->default_timeout == 600s);
  CHECK(none->controller_workers == 1);
  CHECK_FALSE(none->skip_check_schedule_cycle);
  CHECK_FALSE(none->enable_preemption);
  auto empty = decode("{}");
  REQUIRE(empty.has_value());
  CHECK(empty->default_timeout == 600s);
}

TEST_CASE("CoschedulingArgs: every field", "[scheduler][coscheduling]") {
  auto a = decode(R"({"apiVersion": "kubescheduler.config.k8s.io/v1beta2",
                      "kind": "CoschedulingArgs", "defaultTimeout": "2m30s",
                      "controllerWorkers": 4, "skipCheckScheduleCycle": true,
                      "enablePreemption": true, "awareNetworkTopology": true})");
  REQUIRE(a.has_value());
  CHECK(a->default_timeout == 150s);
  CHECK(a->controller_workers == 4);
  CHECK(a->skip_check_schedule_cycle);
  CHECK(a->enable_preemption);
  CHECK(a->aware_network_topology);
  auto network = decode(R"({"awareNetworkTopology": 1})");
  REQUIRE_FALSE(network.has_value());
  CHECK(network.error().message.find("awareNetworkTopology") != std::string::npos);
}

TEST_CASE("CoschedulingArgs: bad values are refused, naming the field",
          "[scheduler][coscheduling]") {
  auto unknown = decode(R"({"defaultTimeoutSeconds": 30})");
  REQUIRE_FALSE(unknown.has_value());
  CHECK(unknown.error().message.find("defaultTimeoutSeconds") != std::string::npos);
  auto negative = decode(R"({"defaultTimeout": "-1s"})");
  REQUIRE_FALSE(negative.has_value());
  CHECK(negative.error().message.find("defaultTimeout") != std::string::npos);
  auto garbled = decode(R"({"defaultTimeout": "ten minutes"})");
  REQUIRE_FALSE(garbled.has_value());
  CHECK(garbled.error().message.find("defaultTimeout") != std::string::npos);
  auto workers = decode(R"({"controllerWorkers": 0})");
  REQUIRE_FALSE(workers.has_value());
  CHECK(workers.error().message.find("controllerWorkers") != std::string::npos);
  auto type = decode(R"({"skipCheckScheduleCycle": "yes"})");
  REQUIRE_FALSE(type.has_value());
  CHECK(type.error().message.find("skipCheckScheduleCycle") != std::string::npos);
}
