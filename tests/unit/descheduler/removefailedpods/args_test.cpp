// RemoveFailedPodsArgs: defaults, every member read, strict refusals naming the field.
#include "plugins/removefailedpods/args.h"

#include <boost/json.hpp>

#include <catch2/catch.hpp>

#include <string>

#include "args_checks.h"

namespace koord::roles::descheduler::failedpods {
namespace {

const auto decode = testkit::textDecoder(decodeRemoveFailedPodsArgs);

TEST_CASE("RemoveFailedPodsArgs: defaults, an hour's minimum age", "[descheduler]") {
  for (auto a : {decodeRemoveFailedPodsArgs(nullptr), decode("null"), decode("{}"),
                 decode(R"({"minPodLifetimeSeconds": null})")}) {
    REQUIRE(a.has_value());
    CHECK(a->min_pod_lifetime_seconds == 3600);
    CHECK(a->exclude_owner_kinds.empty());
    CHECK(a->reasons.empty());
    CHECK_FALSE(a->including_init_containers);
    CHECK_FALSE(a->common.namespaces);
    CHECK_FALSE(a->common.label_selector);
  }
}

TEST_CASE("RemoveFailedPodsArgs: every member is read", "[descheduler]") {
  auto a = decode(R"({
    "excludeOwnerKinds": ["Job"],
    "minPodLifetimeSeconds": 0,
    "reasons": ["NodeAffinity", "OOMKilled"],
    "includingInitContainers": true,
    "namespaces": {"include": ["web"]},
    "labelSelector": {"matchExpressions": [{"key": "app", "operator": "Exists"}]}
  })");
  REQUIRE(a.has_value());
  CHECK(a->exclude_owner_kinds == std::vector<std::string>{"Job"});
  CHECK(a->min_pod_lifetime_seconds == 0);
  CHECK(a->reasons == std::vector<std::string>{"NodeAffinity", "OOMKilled"});
  CHECK(a->including_init_containers);
  REQUIRE(a->common.namespaces);
  CHECK(a->common.namespaces->include == std::vector<std::string>{"web"});
  REQUIRE(a->common.label_selector);
  CHECK(a->common.label_selector->match_expressions.size() == 1);
}

TEST_CASE("RemoveFailedPodsArgs: refusals name the field", "[descheduler]") {
  const testkit::Refusal cases[] = {
      {R"({"minPodLifetimeSeconds": -1})", "minPodLifetimeSeconds"},
      {R"({"minPodLifetimeSeconds": "1h"})", "minPodLifetimeSeconds"},
      {R"({"reasons": "OOMKilled"})", "reasons"},
      {R"({"reasons": [1]})", "reasons"},
      {R"({"excludeOwnerKinds": [true]})", "excludeOwnerKinds"},
      {R"({"includingInitContainers": 1})", "includingInitContainers"},
      {R"({"reason": ["OOMKilled"]})", "reason"},
      {R"({"namespaces": {"include": ["a"], "exclude": ["b"]}})", "namespaces"},
      {R"({"namespaces": {"only": ["a"]}})", "only"},
      {R"({"labelSelector": {"matchLabels": {"a": "b c"}}})", "labelSelector"},
      {R"("all")", "args"},
  };
  testkit::checkRefusals(decodeRemoveFailedPodsArgs, cases);
}

}  // namespace
}  // namespace koord::roles::descheduler::failedpods
