// The node.koordinator.sh/reservation annotation as the koordlet's CPU suppression reads it.
#include <catch2/catch.hpp>

#include "koord/kube/quantity.h"
#include "statesinformer/node_reservation.h"

using namespace koord::roles::koordlet;

namespace {

NodeInfo nodeWith(std::string annotation) {
  NodeInfo n;
  n.name = "node-1";
  n.capacity["cpu"] = koord::kube::Quantity::parse("8").value();
  n.allocatable["cpu"] = koord::kube::Quantity::parse("7500m").value();
  n.annotations["node.koordinator.sh/reservation"] = std::move(annotation);
  return n;
}

}  // namespace

TEST_CASE("node reservation: resources.cpu and reservedCPUs") {
  auto n = nodeWith(R"({"resources":{"cpu":"2"},"reservedCPUs":"0-2,7"})");
  auto r = nodeReservation(n);
  REQUIRE(r.has_value());
  CHECK(r->cpu_milli == 2000);
  CHECK(r->reserved_cpus == std::vector<int>{0, 1, 2, 7});
  CHECK(nodeReservedCPUMilli(n, *r) == 4000);  // four pinned CPUs beat resources.cpu

  // Absent, empty and null: nothing reserved beyond the kubelet's 500m.
  for (const char* text : {"", "null", "{}"}) {
    INFO(text);
    auto empty = nodeReservation(nodeWith(text));
    REQUIRE(empty.has_value());
    CHECK(empty->reserved_cpus.empty());
    CHECK(nodeReservedCPUMilli(nodeWith(text), *empty) == 500);
  }
}

TEST_CASE("node reservation: malformed annotations are errors that name the field") {
  for (const auto& [text, field] : std::vector<std::pair<std::string, std::string>>{
           {"{", "not JSON"},
           {"[1]", "expected an object"},
           {R"({"resources":{"cpu":"2x"}})", "resources[cpu]"},
           {R"({"resources":[]})", "resources"},
           {R"({"reservedCPUs":3})", "reservedCPUs"},
           {R"({"reservedCPUs":"3-1"})", "reservedCPUs"},
       }) {
    INFO(text);
    auto r = nodeReservation(nodeWith(text));
    REQUIRE_FALSE(r.has_value());
    CHECK_THAT(r.error().message, Catch::Contains(field));
  }
}

TEST_CASE("node reservation: an annotation-sized cpu list is refused, not expanded") {
  std::string cpus = "0-8191";
  while (cpus.size() < 200 * 1024)
    cpus += ",0-8191";
  auto r = nodeReservation(nodeWith(R"({"reservedCPUs":")" + cpus + R"("})"));
  REQUIRE_FALSE(r.has_value());
  CHECK_THAT(r.error().message, Catch::Contains("reservedCPUs"));

  auto padded = nodeReservation(nodeWith(R"({"pad":")" + std::string(256 * 1024, 'x') + R"("})"));
  REQUIRE_FALSE(padded.has_value());
  CHECK_THAT(padded.error().message, Catch::Contains("more than the 262144 allowed"));
}

TEST_CASE("node reservation: absurd kubelet figures saturate instead of overflowing") {
  auto n = nodeWith("");
  n.capacity["cpu"] = koord::kube::Quantity::parse("900E").value();
  n.allocatable["cpu"] = koord::kube::Quantity::parse("-900E").value();
  CHECK(nodeReservedCPUMilli(n, NodeReservation{}) == INT64_MAX);
}
