// koord::kube::WorkQueue driven from many threads at once: producers adding at once, after a
// delay and rate-limited, workers that retry through the limiter, and the delaying thread
// between them. No key is lost and no key is held by two workers.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "koord/kube/work_queue.h"

using namespace std::chrono_literals;
using namespace koord::kube;

TEST_CASE("work queue: concurrent producers, delayed and rate-limited adds, retrying workers",
          "[workqueue][concurrency]") {
  WorkQueue q(std::make_unique<ItemExponentialFailureRateLimiter>(100us, 2ms));
  constexpr int kKeys = 20;
  std::mutex mu;
  // Keys added (by any path) since a worker last took them: all must be taken in the end.
  std::set<std::string> pending;
  std::set<std::string> held;
  std::map<std::string, int> taken;
  std::atomic<int> overlaps{0};

  auto mark = [&](const std::string& key) {
    std::lock_guard lock(mu);
    pending.insert(key);
  };
  std::vector<std::thread> workers;
  for (int w = 0; w < 3; ++w) {
    workers.emplace_back([&, w] {
      std::mt19937 rng(static_cast<unsigned>(w));
      while (auto key = q.get()) {
        {
          std::lock_guard lock(mu);
          if (!held.insert(*key).second)
            ++overlaps;
          pending.erase(*key);
          ++taken[*key];
        }
        (void)q.len();
        const bool retry = rng() % 3 == 0 && q.numRequeues(*key) < 3;
        {
          std::lock_guard lock(mu);
          held.erase(*key);
        }
        if (retry) {
          mark(*key);
          q.addRateLimited(*key);
        } else {
          q.forget(*key);
        }
        q.done(*key);
      }
    });
  }
  std::vector<std::thread> producers;
  for (int p = 0; p < 3; ++p) {
    producers.emplace_back([&, p] {
      std::mt19937 rng(static_cast<unsigned>(100 + p));
      for (int i = 0; i < 300; ++i) {
        const std::string key = "ns/k" + std::to_string(rng() % kKeys);
        mark(key);
        switch (rng() % 3) {
          case 0:
            q.add(key);
            break;
          case 1:
            q.addAfter(key, std::chrono::microseconds(rng() % 3000));
            break;
          default:
            q.addRateLimited(key);
            break;
        }
        if (i % 50 == 0)
          std::this_thread::sleep_for(1ms);
      }
    });
  }
  for (auto& t : producers)
    t.join();

  const auto deadline = std::chrono::steady_clock::now() + 20s;
  bool drained = false;
  while (!drained && std::chrono::steady_clock::now() < deadline) {
    {
      std::lock_guard lock(mu);
      drained = pending.empty() && held.empty();
    }
    if (!drained)
      std::this_thread::sleep_for(5ms);
  }
  q.shutDown();
  for (auto& t : workers)
    t.join();

  CHECK(drained);
  CHECK(overlaps == 0);
  std::lock_guard lock(mu);
  CHECK(pending.empty());
  CHECK(taken.size() == static_cast<std::size_t>(kKeys));
}
