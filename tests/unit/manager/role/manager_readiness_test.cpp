#include <catch2/catch.hpp>

#include "koord/core/health.h"
#include "manager_readiness.h"

using koord::Health;
using koord::roles::manager::ManagerReadiness;

TEST_CASE("manager readiness: without webhooks, ready once the caches sync", "[manager]") {
  Health health;
  ManagerReadiness readiness(health, false);
  CHECK_FALSE(health.ready());
  CHECK(health.reason() == "informer caches not synced");
  readiness.cachesSynced();
  CHECK(health.ready());
}

TEST_CASE("manager readiness: with webhooks, ready once both happened, in either order",
          "[manager]") {
  SECTION("caches first") {
    Health health;
    ManagerReadiness readiness(health, true);
    readiness.cachesSynced();
    CHECK_FALSE(health.ready());
    CHECK(health.reason() == "webhook server not serving yet");
    readiness.webhooksServing();
    CHECK(health.ready());
  }
  SECTION("webhooks first") {
    Health health;
    ManagerReadiness readiness(health, true);
    readiness.webhooksServing();
    CHECK_FALSE(health.ready());
    CHECK(health.reason() == "informer caches not synced");
    readiness.cachesSynced();
    CHECK(health.ready());
  }
}
