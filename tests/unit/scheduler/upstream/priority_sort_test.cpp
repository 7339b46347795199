#include <catch2/catch.hpp>

#include "fixtures.h"
#include "plugins/upstream/queuesort/priority_sort.h"

namespace koord::roles::scheduler::upstream {
namespace {

using std::chrono::steady_clock;

TEST_CASE("PrioritySort orders by priority, then by queue time", "[scheduler][upstream]") {
  const auto t0 = steady_clock::time_point{} + std::chrono::seconds(100);
  const auto later = t0 + std::chrono::seconds(1);
  struct Case {
    std::string name;
    std::int32_t p1;
    steady_clock::time_point t1;
    std::int32_t p2;
    steady_clock::time_point t2;
    bool want;
  };
  const std::vector<Case> cases = {
      {"p1.priority less than p2.priority", 1, t0, 2, t0, false},
      {"p1.priority greater than p2.priority", 2, t0, 1, t0, true},
      {"equal priority, p1 added to the queue earlier", 2, t0, 2, later, true},
      {"equal priority, p2 added to the queue earlier", 2, later, 2, t0, false},
      {"equal priority, equal time: neither is less", 2, t0, 2, t0, false},
      {"negative priority sorts after zero", -1, t0, 0, later, false},
  };
  const PrioritySort plugin;
  for (const auto& c : cases) {
    INFO(c.name);
    auto a = std::make_shared<PodInfo>();
    a->priority = c.p1;
    auto b = std::make_shared<PodInfo>();
    b->priority = c.p2;
    const QueuedPodInfo qa{.pod = a, .timestamp = c.t1};
    const QueuedPodInfo qb{.pod = b, .timestamp = c.t2};
    CHECK(plugin.less(qa, qb) == c.want);
  }
  CHECK(plugin.name() == "PrioritySort");
}

}  // namespace
}  // namespace koord::roles::scheduler::upstream
