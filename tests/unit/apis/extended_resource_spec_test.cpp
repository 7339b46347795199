// The extended-resource-spec annotation as the manager writes it and the koordlet's hooks read it.
#include <catch2/catch.hpp>

#include "koord/apis/extended_resource_spec.h"

using koord::apis::parseExtendedResourceSpec;

TEST_CASE("extended-resource-spec: containers with their batch requests and limits", "[apis]") {
  auto c = parseExtendedResourceSpec(
      R"({"containers":{"main":{"limits":{"kubernetes.io/batch-cpu":"2k","kubernetes.io/batch-memory":"1Gi"},)"
      R"("requests":{"kubernetes.io/batch-cpu":"1k","kubernetes.io/batch-memory":"512Mi"}},)"
      R"("sidecar":{"requests":{"kubernetes.io/batch-cpu":"500"}}}})");
  REQUIRE(c.has_value());
  REQUIRE(c->size() == 2);
  CHECK(c->at("main").requests.at("kubernetes.io/batch-cpu").value() == 1000);
  CHECK(c->at("main").limits.at("kubernetes.io/batch-memory").value() == 1073741824);
  CHECK(c->at("sidecar").limits.empty());
  CHECK(parseExtendedResourceSpec("{}")->empty());
  CHECK(parseExtendedResourceSpec("null")->empty());
  CHECK(parseExtendedResourceSpec(R"({"containers":{"a":null}})")->at("a").requests.empty());

  CHECK_THAT(parseExtendedResourceSpec("{").error().message, Catch::Contains("not JSON"));
  CHECK_THAT(parseExtendedResourceSpec(R"({"containers":[]})").error().message,
             Catch::Contains("containers: expected object"));
  CHECK_THAT(parseExtendedResourceSpec(
                 R"({"containers":{"a":{"requests":{"kubernetes.io/batch-cpu":"x"}}}})")
                 .error()
                 .message,
             Catch::Contains("containers.a.requests"));
}

TEST_CASE("extended-resource-spec: longer than an annotation may be is refused unread", "[apis]") {
  const std::string spec = R"({"containers":{"main":{"limits":{"kubernetes.io/batch-cpu":"2k"}}}})";
  REQUIRE(parseExtendedResourceSpec(spec).has_value());
  auto big = parseExtendedResourceSpec(spec + std::string(256 * 1024, ' '));
  REQUIRE_FALSE(big.has_value());
  CHECK_THAT(big.error().message, Catch::Contains("more than the 262144 allowed"));
}
