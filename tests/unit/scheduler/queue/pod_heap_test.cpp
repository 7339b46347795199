#include "queue/pod_heap.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "fixture.h"

namespace koord::roles::scheduler::queue_testing {
namespace {

PodHeap byPriority() {
  return PodHeap([](const QueuedPodInfo& a, const QueuedPodInfo& b) {
    return a.pod->priority > b.pod->priority;
  });
}

QueuedPodInfo queued(std::string name, std::int32_t priority) {
  return QueuedPodInfo{.pod = makePod(std::move(name), priority)};
}

std::vector<std::int32_t> drain(PodHeap& h) {
  std::vector<std::int32_t> out;
  while (auto q = h.pop())
    out.push_back(q->pod->priority);
  return out;
}

TEST_CASE("PodHeap pops in order whatever the insertion order", "[scheduler][queue][heap]") {
  std::mt19937 rng(42);
  for (int round = 0; round < 20; ++round) {
    INFO("round " << round);
    std::vector<std::int32_t> priorities;
    for (int i = 0; i < 50; ++i)
      priorities.push_back(static_cast<std::int32_t>(rng() % 1000));
    PodHeap h = byPriority();
    for (std::size_t i = 0; i < priorities.size(); ++i) {
      h.addOrUpdate(queued("p" + std::to_string(i), priorities[i]));
    }
    CHECK(h.size() == priorities.size());
    std::sort(priorities.begin(), priorities.end(), std::greater<>());
    CHECK(drain(h) == priorities);
    CHECK(h.empty());
    CHECK(h.peek() == nullptr);
  }
}

TEST_CASE("PodHeap updates and erases by key", "[scheduler][queue][heap]") {
  PodHeap h = byPriority();
  for (int i = 0; i < 10; ++i)
    h.addOrUpdate(queued("p" + std::to_string(i), i * 10));
  REQUIRE(h.peek()->pod->name == "p9");

  h.addOrUpdate(queued("p3", 1000));  // same key: replaced and moved up
  CHECK(h.size() == 10);
  CHECK(h.peek()->pod->name == "p3");
  h.addOrUpdate(queued("p3", -1));  // and down
  CHECK(h.peek()->pod->name == "p9");
  REQUIRE(h.get("default/p3") != nullptr);
  CHECK(h.get("default/p3")->pod->priority == -1);

  CHECK(h.erase("default/p5"));
  CHECK_FALSE(h.erase("default/p5"));
  CHECK_FALSE(h.contains("default/p5"));
  CHECK(h.get("default/missing") == nullptr);
  CHECK(drain(h) == std::vector<std::int32_t>{90, 80, 70, 60, 40, 20, 10, 0, -1});
}

TEST_CASE("PodHeap agrees with a sorted model under mixed adds, updates, erases and pops",
          "[scheduler][queue][heap]") {
  // Erasing from the middle and popping both refill a hole from the last entry; every entry
  // must stay findable by its key at its new place.
  std::mt19937 rng(7);
  PodHeap h = byPriority();
  std::map<std::string, std::int32_t> model;
  for (int step = 0; step < 4000; ++step) {
    INFO("step " << step);
    const std::string name = "p" + std::to_string(rng() % 200);
    const std::string key = "default/" + name;
    switch (rng() % 4) {
      case 0:
      case 1: {
        const auto priority = static_cast<std::int32_t>(rng() % 50);
        h.addOrUpdate(queued(name, priority));
        model[key] = priority;
        break;
      }
      case 2:
        CHECK(h.erase(key) == (model.erase(key) == 1));
        break;
      case 3: {
        auto top = h.pop();
        if (model.empty()) {
          CHECK_FALSE(top.has_value());
          break;
        }
        REQUIRE(top.has_value());
        std::int32_t best = -1;
        for (const auto& [k, p] : model)
          best = std::max(best, p);
        CHECK(top->pod->priority == best);
        CHECK(model.at(top->pod->key()) == top->pod->priority);
        model.erase(top->pod->key());
        break;
      }
    }
    REQUIRE(h.size() == model.size());
    if (step % 97 == 0) {
      for (const auto& [k, p] : model) {
        const QueuedPodInfo* q = h.get(k);
        REQUIRE(q != nullptr);
        CHECK(q->pod->priority == p);
      }
    }
  }
}

TEST_CASE("PodHeap lists every entry", "[scheduler][queue][heap]") {
  PodHeap h = byPriority();
  h.addOrUpdate(queued("a", 1));
  h.addOrUpdate(queued("b", 2));
  h.addOrUpdate(queued("c", 3));
  h.erase("default/b");
  std::vector<std::string> seen;
  h.forEach([&](const QueuedPodInfo& q) { seen.push_back(q.pod->name); });
  std::sort(seen.begin(), seen.end());
  CHECK(seen == std::vector<std::string>{"a", "c"});
}

}  // namespace
}  // namespace koord::roles::scheduler::queue_testing
