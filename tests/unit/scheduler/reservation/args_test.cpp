#include <boost/json.hpp>

#include <catch2/catch.hpp>

#include "catch_expected.h"

#include "plugins/reservation/args.h"

using koord::roles::scheduler::reservation::decodeReservationArgs;

namespace {

auto decode(std::string_view text) {
  auto v = boost::json::parse(text);
  return decodeReservationArgs(&v, "kubescheduler.config.k8s.io/v1beta2");
}

}  // namespace

TEST_CASE("ReservationArgs default as Koordinator's") {
  auto a = decodeReservationArgs(nullptr, "");
  REQUIRE(a.has_value());
  CHECK_FALSE(a->enable_preemption);
  CHECK(a->min_candidate_nodes_percentage == 10);
  CHECK(a->min_candidate_nodes_absolute == 100);
  CHECK(a->controller_workers == 1);
  CHECK(a->gc_duration_seconds == 86400);
  CHECK(a->gc_interval_seconds == 60);
  CHECK(a->resync_interval_seconds == 60);
  CHECK_FALSE(a->disable_garbage_collection);
}

TEST_CASE("ReservationArgs read every field and refuse bad ones by name") {
  auto a =
      decode(R"({"apiVersion": "kubescheduler.config.k8s.io/v1beta2", "kind": "ReservationArgs",
                      "gcDurationSeconds": 30, "resyncIntervalSeconds": 1,
                      "disableGarbageCollection": true})");
  REQUIRE(a.has_value());
  CHECK(a->gc_duration_seconds == 30);
  CHECK(a->resync_interval_seconds == 1);
  CHECK(a->disable_garbage_collection);

  struct Case {
    const char* text;
    const char* field;
  };
  const Case bad[] = {
      {R"({"gcDurationSecond": 1})", "gcDurationSecond"},
      {R"({"gcDurationSeconds": 0})", "gcDurationSeconds"},
      {R"({"gcIntervalSeconds": -1})", "gcIntervalSeconds"},
      {R"({"resyncIntervalSeconds": "1"})", "resyncIntervalSeconds"},
      {R"({"minCandidateNodesPercentage": 101})", "minCandidateNodesPercentage"},
      {R"({"controllerWorkers": 0})", "controllerWorkers"},
      {R"({"enablePreemption": "yes"})", "enablePreemption"},
  };
  for (const auto& tc : bad) {
    INFO(tc.text);
    auto r = decode(tc.text);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().message.find(tc.field) != std::string::npos);
  }
}
