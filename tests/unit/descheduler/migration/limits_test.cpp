// The caps a migration must fit: per node, per namespace, per workload (migrating and
// unavailable), the object limiter's window, expected replicas and the eviction rate, at and
// over each cap, and under concurrent callers.
#include "controllers/migration/limits.h"

#include <catch2/catch.hpp>

#include <atomic>
#include <map>
#include <thread>

using namespace koord::roles::descheduler::migration;
using namespace std::chrono_literals;

namespace {

MigrationControllerArgs argsWith(std::optional<std::int32_t> per_node,
                                 std::optional<std::int32_t> per_ns = std::nullopt) {
  MigrationControllerArgs a = defaultMigrationControllerArgs();
  a.max_migrating_per_node = per_node;
  a.max_migrating_per_namespace = per_ns;
  return a;
}

MigrationCandidate pod(std::string name, std::string node, std::string ns = "default") {
  MigrationCandidate c;
  c.job_uid = "job-" + name;
  c.pod_namespace = std::move(ns);
  c.pod_name = name;
  c.pod_uid = "uid-" + name;
  c.node_name = std::move(node);
  return c;
}

MigrationCandidate ofWorkload(MigrationCandidate c, std::string uid, std::int32_t replicas,
                              std::vector<std::string> unavailable = {}) {
  c.workload = WorkloadRef{"apps/v1", "ReplicaSet", "rs-" + uid, uid};
  c.expected_replicas = replicas;
  c.unavailable_pods = std::move(unavailable);
  return c;
}

}  // namespace

TEST_CASE("migration limits: per node, at and over the cap", "[migration][limits]") {
  struct Case {
    std::optional<std::int32_t> cap;
    int admitted_on_node_a;  // of 4 candidates on node-a
  };
  const Case cases[] = {{2, 2}, {1, 1}, {3, 3}, {0, 4}, {std::nullopt, 4}};
  for (const auto& c : cases) {
    INFO("cap " << c.cap.value_or(-1));
    MigrationLimits limits(argsWith(c.cap));
    int admitted = 0;
    for (int i = 0; i < 4; ++i)
      admitted += limits.tryAdmit(pod("a" + std::to_string(i), "node-a")).admitted;
    CHECK(admitted == c.admitted_on_node_a);
    CHECK(limits.migratingOnNode("node-a") == static_cast<std::size_t>(c.admitted_on_node_a));
    // Another node has its own count.
    CHECK(limits.tryAdmit(pod("b0", "node-b")).admitted);
  }
  MigrationLimits limits(argsWith(2));
  REQUIRE(limits.tryAdmit(pod("a0", "node-a")).admitted);
  REQUIRE(limits.tryAdmit(pod("a1", "node-a")).admitted);
  auto refused = limits.tryAdmit(pod("a2", "node-a"));
  CHECK_FALSE(refused.admitted);
  CHECK_THAT(refused.reason, Catch::Contains("maxMigratingPerNode") && Catch::Contains("node-a"));
  // A job of a pod already counted does not count against itself.
  CHECK(limits.check(pod("a1", "node-a")).admitted);
  // A finished job frees its slot.
  limits.release("job-a0");
  CHECK(limits.tryAdmit(pod("a2", "node-a")).admitted);
  // A pod not bound to a node is not held by the node cap.
  CHECK(limits.tryAdmit(pod("pending", "")).admitted);
}

TEST_CASE("migration limits: per namespace", "[migration][limits]") {
  MigrationLimits limits(argsWith(0, 2));
  CHECK(limits.tryAdmit(pod("a", "n1", "ns1")).admitted);
  CHECK(limits.tryAdmit(pod("b", "n2", "ns1")).admitted);
  auto refused = limits.tryAdmit(pod("c", "n3", "ns1"));
  CHECK_FALSE(refused.admitted);
  CHECK_THAT(refused.reason, Catch::Contains("maxMigratingPerNamespace"));
  CHECK(limits.tryAdmit(pod("d", "n3", "ns2")).admitted);
  CHECK(limits.migratingInNamespace("ns1") == 2);
}

TEST_CASE("migration limits: per workload, migrating and unavailable", "[migration][limits]") {
  struct Case {
    const char* what;
    std::optional<IntOrPercent> max_migrating;
    std::optional<IntOrPercent> max_unavailable;
    std::int32_t replicas;
    int already_migrating;  // other pods of the workload admitted before
    std::vector<std::string> unavailable;
    bool admitted;
    const char* reason;
  };
  const Case cases[] = {
      {"first of 10: default caps 2", {}, {}, 10, 0, {}, true, ""},
      {"second of 10", {}, {}, 10, 1, {}, true, ""},
      {"third of 10: 2 migrating is the cap", {}, {}, 10, 2, {}, false, "maxMigratingPerWorkload"},
      {"cap 3 of 10 migrating, unavailable 5",
       IntOrPercent{false, 3},
       IntOrPercent{false, 5},
       10,
       2,
       {},
       true,
       ""},
      {"one migrating and one not ready reach unavailable 2",
       IntOrPercent{false, 3},
       {},
       10,
       1,
       {"default/other-not-ready"},
       false,
       "maxUnavailablePerWorkload"},
      {"two not ready reach unavailable 2 with none migrating",
       {},
       {},
       10,
       0,
       {"default/x", "default/y"},
       false,
       "maxUnavailablePerWorkload"},
      {"a migrating pod that is also not ready counts once",
       IntOrPercent{false, 3},
       {},
       10,
       1,
       {"default/w0"},
       true,
       ""},
  };
  for (const auto& c : cases) {
    INFO(c.what);
    MigrationControllerArgs a = argsWith(0);
    a.max_migrating_per_workload = c.max_migrating;
    a.max_unavailable_per_workload = c.max_unavailable;
    MigrationLimits limits(a);
    for (int i = 0; i < c.already_migrating; ++i)
      limits.track(ofWorkload(pod("w" + std::to_string(i), "n" + std::to_string(i)), "rs", 10));
    auto got = limits.tryAdmit(ofWorkload(pod("cand", "nc"), "rs", c.replicas, c.unavailable));
    CHECK(got.admitted == c.admitted);
    CHECK_THAT(got.reason, Catch::Contains(c.reason));
  }
  // A workload whose replicas are unknown waits.
  MigrationLimits limits(argsWith(0));
  auto c = ofWorkload(pod("x", "n"), "rs", 10);
  c.expected_replicas.reset();
  CHECK_FALSE(limits.tryAdmit(c).admitted);
  // The evict annotation bypasses every cap but still counts.
  MigrationLimits tight(argsWith(1));
  REQUIRE(tight.tryAdmit(pod("p0", "n")).admitted);
  auto forced = pod("p1", "n");
  forced.evict_annotation = true;
  CHECK(tight.tryAdmit(forced).admitted);
  CHECK(tight.migratingOnNode("n") == 2);
}

TEST_CASE("migration limits: 4 threads racing 20 candidates never pass the node cap",
          "[migration][limits]") {
  for (int round = 0; round < 20; ++round) {
    MigrationLimits limits(argsWith(2));
    std::atomic<int> next{0};
    std::atomic<int> admitted{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&] {
        for (int i = next++; i < 20; i = next++) {
          // Five nodes, four candidates each.
          if (limits.tryAdmit(pod("p" + std::to_string(i), "node-" + std::to_string(i % 5)))
                  .admitted)
            ++admitted;
        }
      });
    }
    for (auto& th : threads)
      th.join();
    for (int n = 0; n < 5; ++n)
      CHECK(limits.migratingOnNode("node-" + std::to_string(n)) == 2);
    CHECK(admitted == 10);
    CHECK(limits.migrating() == 10);
  }
}

TEST_CASE("migration limits: the object limiter's window", "[migration][limits]") {
  koord::FakeClock clock;
  MigrationControllerArgs a = argsWith(0);
  a.object_limiters["workload"] = ObjectLimiter{10min, IntOrPercent{false, 2}};
  MigrationLimits limits(a, clock);
  const WorkloadRef rs{"apps/v1", "ReplicaSet", "web", "rs"};
  auto cand = ofWorkload(pod("p", "n"), "rs", 20);

  CHECK_FALSE(limits.objectLimited("rs"));
  CHECK(limits.check(cand).admitted);
  limits.trackEvicted(rs, 20);
  // 2 per 10 minutes: the token is back after 5 minutes, not before.
  CHECK(limits.objectLimited("rs"));
  auto refused = limits.check(cand);
  CHECK_FALSE(refused.admitted);
  CHECK_THAT(refused.reason, Catch::Contains("limitedObject"));
  clock.advance(4min + 59s);
  CHECK(limits.objectLimited("rs"));
  clock.advance(2s);
  CHECK_FALSE(limits.objectLimited("rs"));
  CHECK(limits.check(cand).admitted);
  // Other workloads are not held.
  CHECK_FALSE(limits.objectLimited("other"));

  // Without maxMigrating the workload's maxMigratingPerWorkload default applies (2 of 10 -> 5m
  // per token); unknown replicas track nothing.
  MigrationControllerArgs d = argsWith(0);
  MigrationLimits defaults(d, clock);
  defaults.trackEvicted(rs, std::nullopt);
  CHECK_FALSE(defaults.objectLimited("rs"));
  defaults.trackEvicted(rs, 10);
  CHECK(defaults.objectLimited("rs"));
  clock.advance(2min + 29s);
  CHECK(defaults.objectLimited("rs"));
  clock.advance(2s);
  CHECK_FALSE(defaults.objectLimited("rs"));

  // A zero window turns the limiter off.
  MigrationControllerArgs off = argsWith(0);
  off.object_limiters["workload"].duration = 0s;
  MigrationLimits none(off, clock);
  none.trackEvicted(rs, 10);
  CHECK_FALSE(none.objectLimited("rs"));
}

TEST_CASE("migration limits: expected replicas that forbid any migration", "[migration][limits]") {
  struct Case {
    std::int32_t replicas;
    std::optional<IntOrPercent> max_migrating;
    std::optional<bool> skip;
    bool forbidden;
  };
  const Case cases[] = {
      {1, {}, {}, true},                      // a single replica
      {2, {}, {}, false},                     // caps 1 of 2
      {3, IntOrPercent{false, 3}, {}, true},  // maxMigrating is every replica
      {1, {}, true, false},                   // skipCheckExpectedReplicas
      {10, {}, {}, false},
  };
  for (const auto& c : cases) {
    INFO("replicas " << c.replicas);
    MigrationControllerArgs a = defaultMigrationControllerArgs();
    a.max_migrating_per_workload = c.max_migrating;
    a.skip_check_expected_replicas = c.skip;
    CHECK(expectedReplicasForbid(a, c.replicas) == c.forbidden);
  }
}

TEST_CASE("migration limits: the eviction rate limiter", "[migration][limits]") {
  koord::FakeClock clock;
  EvictRateLimiter limiter(10, 1, clock);
  CHECK(limiter.tryAccept());
  CHECK_FALSE(limiter.tryAccept());
  clock.advance(99ms);
  CHECK_FALSE(limiter.tryAccept());
  clock.advance(2ms);
  CHECK(limiter.tryAccept());

  EvictRateLimiter burst(1, 3, clock);
  int taken = 0;
  for (int i = 0; i < 5; ++i)
    taken += burst.tryAccept();
  CHECK(taken == 3);
  clock.advance(10s);  // refills to the burst, no further
  taken = 0;
  for (int i = 0; i < 5; ++i)
    taken += burst.tryAccept();
  CHECK(taken == 3);
}
