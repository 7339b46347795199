// node.koordinator.sh/resource-amplification-ratio as Koordinator's
// GetNodeResourceAmplificationRatio reads it: absent, a ratio, or an error naming the annotation.
#include <catch2/catch.hpp>

#include <string>

#include "koord/apis/node_amplification.h"

namespace koord::apis {
namespace {

kube::Expected<std::optional<double>> cpuRatio(const std::string& value) {
  return nodeAmplificationRatio({{std::string(kAnnotationNodeResourceAmplificationRatio), value}},
                                "cpu");
}

}  // namespace

TEST_CASE("node amplification ratio: read as Koordinator reads it", "[apis][amplification]") {
  CHECK(nodeAmplificationRatio({}, "cpu").value() == std::nullopt);
  CHECK(cpuRatio(R"({"cpu":1.5})").value() == 1.5);
  CHECK(cpuRatio(R"({"cpu":2,"memory":1.2})").value() == 2.0);
  CHECK(cpuRatio(R"({"memory":1.2})").value() == std::nullopt);
  CHECK(cpuRatio("null").value() == std::nullopt);
  CHECK(cpuRatio(R"({"cpu":null})").value() == std::nullopt);
  for (const std::string bad : {"", "{cpu: 2", R"({"cpu":"2"})", "[1.5]", "1.5"}) {
    INFO(bad);
    auto r = cpuRatio(bad);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().message.find(std::string(kAnnotationNodeResourceAmplificationRatio)) !=
          std::string::npos);
  }
  // Bounded: a value past 1 KiB is refused unread.
  CHECK_FALSE(cpuRatio(R"({"cpu":2,"x":")" + std::string(2048, 'a') + R"("})").has_value());
}

}  // namespace koord::apis
