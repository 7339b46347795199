// The pieces behind LoadAwareScheduling's per-node memory: usage limits (Filter's integer
// compare standing in for Koordinator's percentage), the NodeView table, and the pod-assign
// entries whose generation tells a view that it went stale.
#include "plugins/loadaware/node_view.h"

#include <cstdint>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "fixture.h"
#include "plugins/loadaware/usage_thresholds.h"

using namespace koord::roles::scheduler::loadaware;
using namespace loadaware_test;

TEST_CASE("loadaware usage limits agree with the percentage check", "[scheduler][loadaware]") {
  struct Case {
    std::int64_t threshold;
    std::int64_t total;
  };
  constexpr std::int64_t kGi = 1024LL * 1024 * 1024;
  const std::vector<Case> cases = {
      {65, 4000},  {95, 32 * kGi}, {65, 96000},  {1, 1},          {100, 1},
      {50, 3},     {65, 7},        {99, 999},    {30, 512 * kGi}, {100, 96000},
      {150, 4000}, {1, 999999937}, {65, 123457}, {95, 1},         {7, 100000000000000},
  };
  for (const auto& c : cases) {
    CAPTURE(c.threshold, c.total);
    const std::int64_t limit = usageLimit(c.threshold, c.total);
    REQUIRE(limit >= 0);
    REQUIRE(limit < kExactRange);
    CHECK(withinThreshold(c.threshold, c.total, limit));
    CHECK_FALSE(withinThreshold(c.threshold, c.total, limit + 1));
    // Around the boundary and across the range, the limit answers as the percentage does.
    std::mt19937_64 rng(static_cast<std::uint64_t>(c.total) * 131 + 7);
    for (int i = 0; i < 2000; ++i) {
      const std::int64_t e =
          i < 200 ? limit - 100 + i
                  : static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(4 * c.total + 1));
      if (e < 0)
        continue;
      CAPTURE(e);
      CHECK((e <= limit) == withinThreshold(c.threshold, c.total, e));
    }
  }
  SECTION("a zero threshold or allocatable lets everything in range pass") {
    CHECK(usageLimit(0, 4000) == kExactRange);
    CHECK(usageLimit(65, 0) == kExactRange);
  }
  SECTION("a negative allocatable is left to the percentage") {
    CHECK(usageLimit(65, -4000) == kUseFormula);
  }
  SECTION("a threshold nothing meets") {
    CHECK(usageLimit(-5, 4000) == -1);
    CHECK_FALSE(withinThreshold(-5, 4000, 0));
  }
  SECTION("a threshold everything in range meets") {
    CHECK(usageLimit(std::numeric_limits<std::int64_t>::max(), 1) == kExactRange);
  }
}

TEST_CASE("loadaware node view table: find, insert, clear", "[scheduler][loadaware]") {
  NodeViewTable table;
  std::vector<std::shared_ptr<const Node>> nodes;
  for (int i = 0; i < 1500; ++i)
    nodes.push_back(node("n" + std::to_string(i)));
  CHECK(table.find(nodes[0].get()) == nullptr);
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    NodeView& v = table.insert(nodes[i], 2);
    v.pods_generation = i;
  }
  REQUIRE(table.size() == nodes.size());
  SECTION("in order, as Filter walks the snapshot") {
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      NodeView* v = table.find(nodes[i].get());
      REQUIRE(v != nullptr);
      CHECK(v->key == nodes[i].get());
      CHECK(v->pods_generation == i);
      CHECK(v->cold->node == nodes[i]);
    }
  }
  SECTION("in any order") {
    std::mt19937 rng(3);
    for (int k = 0; k < 5000; ++k) {
      const std::size_t i = rng() % nodes.size();
      NodeView* v = table.find(nodes[i].get());
      REQUIRE(v != nullptr);
      CHECK(v->pods_generation == i);
    }
  }
  SECTION("an unknown node is not found") {
    auto other = node("other");
    CHECK(table.find(other.get()) == nullptr);
  }
  SECTION("the view's vectors do not overlap, inline or not") {
    for (std::size_t n : {1u, 2u, 3u, 6u}) {
      NodeViewTable t;
      NodeView& v = t.insert(node("v"), n);
      for (std::size_t k = 0; k < kVectors; ++k) {
        std::int64_t* vec = v.mutableVector(static_cast<NodeVector>(k), n);
        for (std::size_t i = 0; i < n; ++i)
          vec[i] = static_cast<std::int64_t>(100 * k + i);
      }
      for (std::size_t k = 0; k < kVectors; ++k) {
        const std::int64_t* vec = v.vector(static_cast<NodeVector>(k), n);
        for (std::size_t i = 0; i < n; ++i)
          CHECK(vec[i] == static_cast<std::int64_t>(100 * k + i));
      }
    }
  }
  SECTION("clear forgets every view and lets the nodes go") {
    std::weak_ptr<const Node> first = nodes[0];
    table.clear();
    CHECK(table.size() == 0);
    CHECK(table.find(nodes[0].get()) == nullptr);
    nodes.clear();
    CHECK(first.expired());
  }
}

TEST_CASE("loadaware pod-assign entries: the generation moves on every change",
          "[scheduler][loadaware]") {
  LoadAwareSchedulingArgs args;
  PodAssignCache cache(args, vectorizerFor(args), [] { return kNow; });
  CHECK(cache.entry("") == nullptr);
  auto e = cache.entry("node-1");
  REQUIRE(e != nullptr);
  CHECK(cache.entry("node-1") == e);
  auto generation = [&] { return e->generation().load(); };
  CHECK(generation() == 0);
  CHECK(cache.read(*e).first == nullptr);

  PodInfo a = pod("a", res("1", "1Gi"));
  cache.assign("node-1", a, kNow);
  const auto after_assign = generation();
  CHECK(after_assign != 0);
  auto [pods, g] = cache.read(*e);
  REQUIRE(pods);
  CHECK(pods->size() == 1);
  CHECK(g == after_assign);

  cache.assign("node-2", pod("b", res("1", "1Gi")), kNow);
  CHECK(generation() == after_assign);  // another node's change

  cache.unassign("node-1", "uid-a");
  CHECK(generation() != after_assign);
  CHECK(cache.read(*e).first == nullptr);
  CHECK(cache.podsOn("node-1") == nullptr);

  // The entry held stays the node's entry: a later assignment is seen through it.
  const auto after_unassign = generation();
  PodInfo bound = a;
  bound.node_name = "node-1";
  cache.onPodAdd(bound, kNow, std::nullopt);
  CHECK(generation() != after_unassign);
  CHECK(cache.entry("node-1") == e);
  CHECK(cache.contains("node-1", "uid-a"));
}
