// The eviction caps (reliability check 10): a slot is taken before each eviction, so racing
// callers never pass a per-node, per-namespace or total cap.
#include <catch2/catch.hpp>

#include <atomic>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "framework/eviction_limiter.h"

using koord::roles::descheduler::EvictionLimiter;

TEST_CASE("4 threads racing 20 candidates never evict more than 2 per node") {
  // 20 candidates over 5 nodes (4 each), all in one namespace; no namespace cap, total 9.
  for (int round = 0; round < 50; ++round) {
    EvictionLimiter limiter(2, std::nullopt, 9);
    std::mutex mu;
    std::map<std::string, int> per_node;
    int total = 0;
    std::atomic<int> next{0};
    std::atomic<bool> go{false};
    auto worker = [&] {
      while (!go.load())
        std::this_thread::yield();
      for (int i = next++; i < 20; i = next++) {
        const std::string node = "n" + std::to_string(i % 5);
        if (limiter.tryReserve(node, "default")) {
          std::lock_guard lock(mu);
          ++per_node[node];
          ++total;
        }
      }
    };
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
      threads.emplace_back(worker);
    go = true;
    for (auto& t : threads)
      t.join();
    for (const auto& [node, n] : per_node)
      CHECK(n <= 2);
    CHECK(total == 9);  // 5 nodes x 2 would be 10: the total cap holds first
    CHECK(limiter.total() == 9u);
    CHECK(limiter.totalLimitReached());
  }
}

TEST_CASE("each cap refuses at its value and a released slot can be taken again") {
  EvictionLimiter limiter(2, 3, 5);
  std::string why;
  CHECK(limiter.tryReserve("n1", "a"));
  CHECK(limiter.tryReserve("n1", "a"));
  CHECK_FALSE(limiter.tryReserve("n1", "b", &why));
  CHECK(why.find("per node (2)") != std::string::npos);
  CHECK(limiter.nodeLimitReached("n1"));
  CHECK_FALSE(limiter.nodeLimitReached("n2"));
  CHECK(limiter.tryReserve("n2", "a"));
  CHECK_FALSE(limiter.tryReserve("n3", "a", &why));
  CHECK(why.find("per namespace (3)") != std::string::npos);
  CHECK(limiter.tryReserve("n3", "b"));
  CHECK(limiter.tryReserve("n3", "b"));
  CHECK_FALSE(limiter.tryReserve("n4", "c", &why));
  CHECK(why.find("in total (5)") != std::string::npos);
  limiter.release("n3", "b");
  CHECK(limiter.tryReserve("n4", "c"));
  limiter.reset();
  CHECK(limiter.total() == 0u);
  CHECK(limiter.tryReserve("n1", "a"));
}

TEST_CASE("without caps every eviction is allowed") {
  EvictionLimiter limiter(std::nullopt, std::nullopt, std::nullopt);
  for (int i = 0; i < 100; ++i)
    CHECK(limiter.tryReserve("n1", "a"));
  CHECK_FALSE(limiter.nodeLimitReached("n1"));
  CHECK_FALSE(limiter.totalLimitReached());
}
