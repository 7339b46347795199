#include "noderesource/need_sync.h"

#include <boost/json.hpp>

#include <catch2/catch.hpp>

#include "koord/kube/time.h"
#include "noderesource/node_status_patch.h"

using namespace koord::roles::manager::noderesource;
using koord::kube::Quantity;
using std::chrono::seconds;

namespace {

const auto kNow = *koord::kube::parseTime("2024-05-01T10:00:00Z");

Quantity q(std::string_view text) {
  return Quantity::parse(text).value();
}

BatchValues batch(std::optional<std::string_view> cpu, std::optional<std::string_view> memory) {
  BatchValues v;
  if (cpu)
    v.cpu = q(*cpu);
  if (memory)
    v.memory = q(*memory);
  return v;
}

}  // namespace

TEST_CASE("need_sync writes on first sight and when the last write is too old",
          "[manager][noderesource][need_sync]") {
  koord::apis::ColocationStrategy s;  // updateTimeThresholdSeconds 300, resourceDiffThreshold 0.1
  const BatchValues same = batch("1000", "10G");

  auto never = needSync(same, same, s, std::nullopt, kNow);
  CHECK(never.need);
  CHECK_FALSE(never.reason.empty());

  // Strictly more than the threshold: 300 s is not yet, 301 s is.
  CHECK_FALSE(needSync(same, same, s, kNow - seconds(300), kNow).need);
  auto expired = needSync(same, same, s, kNow - seconds(301), kNow);
  CHECK(expired.need);
  CHECK(expired.reason.find("expired") != std::string::npos);

  s.update_time_threshold_seconds = 60;
  CHECK(needSync(same, same, s, kNow - seconds(61), kNow).need);
}

TEST_CASE("need_sync compares batch values with resourceDiffThreshold",
          "[manager][noderesource][need_sync]") {
  koord::apis::ColocationStrategy s;
  const auto recent = kNow - seconds(10);
  struct Case {
    const char* name;
    BatchValues current;
    BatchValues desired;
    bool need;
  };
  const Case cases[] = {
      // |1101 - 1000| = 101 > 1000 * 0.1 = 100
      {"cpu up by more than 10%", batch("1000", "10G"), batch("1101", "10G"), true},
      // |1100 - 1000| = 100, not > 100
      {"cpu up by exactly 10%", batch("1000", "10G"), batch("1100", "10G"), false},
      {"cpu down by more than 10%", batch("1000", "10G"), batch("899", "10G"), true},
      {"cpu down by less than 10%", batch("1000", "10G"), batch("950", "10G"), false},
      // |11.1G - 10G| = 1.1G > 1G
      {"memory up by more than 10%", batch("1000", "10G"), batch("1000", "11100M"), true},
      {"memory up by less than 10%", batch("1000", "10G"), batch("1000", "10500M"), false},
      {"cpu appears", batch(std::nullopt, "10G"), batch("1000", "10G"), true},
      {"memory appears", batch("1000", std::nullopt), batch("1000", "10G"), true},
      {"both disappear (degrade, reset)", batch("1000", "10G"), batch(std::nullopt, std::nullopt),
       true},
      {"both absent", batch(std::nullopt, std::nullopt), batch(std::nullopt, std::nullopt), false},
      // From zero any non-zero value is a change (0 * threshold = 0); zero to zero is not.
      {"zero to non-zero", batch("0", "0"), batch("1", "0"), true},
      {"zero to zero", batch("0", "0"), batch("0", "0"), false},
      {"non-zero to zero", batch("1000", "10G"), batch("1000", "0"), true},
  };
  for (const auto& c : cases) {
    INFO("case: " << c.name);
    auto d = needSync(c.current, c.desired, s, recent, kNow);
    CHECK(d.need == c.need);
    CHECK(d.reason.empty() == !c.need);
  }

  s.resource_diff_threshold = 0.5;
  CHECK_FALSE(needSync(batch("1000", "10G"), batch("1400", "10G"), s, recent, kNow).need);
  CHECK(needSync(batch("1000", "10G"), batch("1600", "10G"), s, recent, kNow).need);
}

TEST_CASE("isQuantityDiff works in milli-units", "[manager][noderesource][need_sync]") {
  CHECK_FALSE(isQuantityDiff(q("1"), q("1100m"), 0.1));
  CHECK(isQuantityDiff(q("1"), q("1101m"), 0.1));
  CHECK(isQuantityDiff(q("0"), q("1m"), 0.1));
  // A move across the whole range must not overflow.
  CHECK(isQuantityDiff(q("-9E"), q("9E"), 0.1));
  CHECK(isResourceDiff(std::nullopt, q("0"), 0.1));
  CHECK_FALSE(isResourceDiff(std::nullopt, std::nullopt, 0.1));
}

TEST_CASE("node status patch sets or removes the batch resources",
          "[manager][noderesource][patch]") {
  // 25000 milli-cores print as Kubernetes (and Koordinator's Go) print them: "25k".
  auto set = buildNodeStatusPatch(batch("25000", "33G"));
  CHECK(set == boost::json::parse(R"({"status":{
    "capacity":{"kubernetes.io/batch-cpu":"25k","kubernetes.io/batch-memory":"33G"},
    "allocatable":{"kubernetes.io/batch-cpu":"25k","kubernetes.io/batch-memory":"33G"}}})"));
  CHECK(buildNodeStatusPatch(batch("1367", "0"))
            .at("status")
            .at("capacity")
            .at("kubernetes.io/batch-cpu") == "1367");

  auto removed = buildNodeStatusPatch(batch(std::nullopt, std::nullopt));
  CHECK(removed == boost::json::parse(R"({"status":{
    "capacity":{"kubernetes.io/batch-cpu":null,"kubernetes.io/batch-memory":null},
    "allocatable":{"kubernetes.io/batch-cpu":null,"kubernetes.io/batch-memory":null}}})"));

  // Memory keeps its family of suffixes; a binary one prints as Kubernetes prints it.
  auto binary = buildNodeStatusPatch(batch("0", "3Gi"));
  CHECK(binary.at("status").at("allocatable").at("kubernetes.io/batch-memory") == "3Gi");
}
