#include "koord/kube/work_queue.h"

#include "koord/core/metrics.h"

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <future>
#include <set>
#include <string>
#include <thread>
#include <vector>

using namespace std::chrono_literals;
using koord::FakeClock;
using namespace koord::kube;

namespace {

// A queue whose retries are immediate, so rate-limited adds are visible at once.
std::unique_ptr<ItemRateLimiter> noWait() {
  return std::make_unique<ItemExponentialFailureRateLimiter>(0ns, 0ns);
}

// get() with a deadline, so a bug fails the test instead of hanging it.
std::optional<std::string> getWithin(WorkQueue& q, std::chrono::milliseconds limit) {
  auto f = std::async(std::launch::async, [&q] { return q.get(); });
  if (f.wait_for(limit) != std::future_status::ready) {
    q.shutDown();  // releases the blocked get so the future can finish
    f.wait();
    FAIL("get() did not return within " << limit.count() << " ms");
  }
  return f.get();
}

}  // namespace

TEST_CASE("work queue: a key added while queued is handed out once", "[workqueue]") {
  WorkQueue q(noWait());
  q.add("ns/a");
  q.add("ns/b");
  q.add("ns/a");
  CHECK(q.len() == 2);
  CHECK(q.get() == "ns/a");
  CHECK(q.get() == "ns/b");
  CHECK(q.len() == 0);
}

TEST_CASE("work queue: FIFO order", "[workqueue]") {
  WorkQueue q(noWait());
  for (const char* k : {"ns/c", "ns/a", "ns/b", "ns/d"})
    q.add(k);
  std::vector<std::string> got;
  for (int i = 0; i < 4; ++i) {
    auto k = q.get();
    REQUIRE(k);
    got.push_back(*k);
    q.done(*k);
  }
  CHECK(got == std::vector<std::string>{"ns/c", "ns/a", "ns/b", "ns/d"});
}

TEST_CASE("work queue: a key re-added during processing waits for done", "[workqueue]") {
  WorkQueue q(noWait());
  q.add("ns/a");
  auto first = q.get();
  REQUIRE(first == "ns/a");
  q.add("ns/a");
  q.add("ns/a");
  CHECK(q.len() == 0);  // not handed to a second worker while the first holds it
  q.add("ns/b");
  CHECK(q.get() == "ns/b");
  q.done("ns/b");
  q.done("ns/a");
  CHECK(q.len() == 1);  // the re-add, once
  CHECK(q.get() == "ns/a");
  q.done("ns/a");
  CHECK(q.len() == 0);
}

TEST_CASE("work queue: done without a re-add does not queue the key", "[workqueue]") {
  WorkQueue q(noWait());
  q.add("ns/a");
  REQUIRE(q.get() == "ns/a");
  q.done("ns/a");
  CHECK(q.len() == 0);
}

TEST_CASE("work queue: workers never hold one key at the same time", "[workqueue]") {
  WorkQueue q(noWait());
  std::mutex mu;
  std::set<std::string> held;
  std::atomic<int> overlaps{0};
  std::atomic<int> processed{0};
  std::vector<std::thread> workers;
  for (int w = 0; w < 4; ++w) {
    workers.emplace_back([&] {
      while (auto key = q.get()) {
        {
          std::lock_guard lock(mu);
          if (!held.insert(*key).second)
            ++overlaps;
        }
        std::this_thread::sleep_for(200us);
        {
          std::lock_guard lock(mu);
          held.erase(*key);
        }
        ++processed;
        q.done(*key);
      }
    });
  }
  for (int i = 0; i < 400; ++i)
    q.add("ns/k" + std::to_string(i % 5));
  // Let the workers drain what was added before shutting down.
  for (int i = 0; i < 500 && (q.len() > 0); ++i)
    std::this_thread::sleep_for(2ms);
  std::this_thread::sleep_for(20ms);
  q.shutDown();
  for (auto& t : workers)
    t.join();
  CHECK(overlaps == 0);
  CHECK(processed >= 5);  // every key at least once
  CHECK(processed <= 400);
}

TEST_CASE("work queue: shutdown wakes blocked getters with nullopt", "[workqueue]") {
  WorkQueue q(noWait());
  auto a = std::async(std::launch::async, [&] { return q.get(); });
  auto b = std::async(std::launch::async, [&] { return q.get(); });
  std::this_thread::sleep_for(20ms);
  CHECK_FALSE(q.shuttingDown());
  q.shutDown();
  REQUIRE(a.wait_for(5s) == std::future_status::ready);
  REQUIRE(b.wait_for(5s) == std::future_status::ready);
  CHECK_FALSE(a.get().has_value());
  CHECK_FALSE(b.get().has_value());
  CHECK(q.shuttingDown());
}

TEST_CASE("work queue: shutdown drains what is queued, then answers nullopt", "[workqueue]") {
  WorkQueue q(noWait());
  q.add("ns/a");
  q.add("ns/b");
  q.shutDown();
  q.add("ns/c");  // ignored once shutting down
  q.addAfter("ns/d", 0ns);
  CHECK(q.len() == 2);
  CHECK(q.get() == "ns/a");
  CHECK(q.get() == "ns/b");
  CHECK_FALSE(q.get().has_value());
  q.shutDown();  // twice is fine
}

TEST_CASE("work queue: addAfter delivers in time order and never early", "[workqueue]") {
  WorkQueue q(noWait());
  const auto start = std::chrono::steady_clock::now();
  q.addAfter("ns/late", 120ms);
  q.addAfter("ns/early", 30ms);
  CHECK(q.len() == 0);  // parked, not queued
  auto first = getWithin(q, 5000ms);
  const auto first_at = std::chrono::steady_clock::now() - start;
  auto second = getWithin(q, 5000ms);
  const auto second_at = std::chrono::steady_clock::now() - start;
  CHECK(first == "ns/early");
  CHECK(second == "ns/late");
  CHECK(first_at >= 30ms);
  CHECK(second_at >= 120ms);
}

TEST_CASE("work queue: a zero delay adds at once", "[workqueue]") {
  WorkQueue q(noWait());
  q.addAfter("ns/a", 0ns);
  q.addAfter("ns/b", -5ms);
  CHECK(q.len() == 2);
}

TEST_CASE("work queue: a key parked twice keeps the earlier time and comes once", "[workqueue]") {
  WorkQueue q(noWait());
  const auto start = std::chrono::steady_clock::now();
  q.addAfter("ns/a", 60s);
  q.addAfter("ns/a", 40ms);  // earlier: replaces the 60 s wait
  q.addAfter("ns/a", 30s);   // later: ignored
  auto k = getWithin(q, 5000ms);
  CHECK(k == "ns/a");
  CHECK(std::chrono::steady_clock::now() - start >= 40ms);
  q.done("ns/a");

  q.addAfter("ns/b", 20ms);
  q.addAfter("ns/b", 20ms);
  CHECK(getWithin(q, 5000ms) == "ns/b");
  q.done("ns/b");
  std::this_thread::sleep_for(100ms);
  CHECK(q.len() == 0);
}

TEST_CASE("work queue: destruction with keys still parked joins cleanly", "[workqueue]") {
  auto q = std::make_unique<WorkQueue>(noWait());
  q->addAfter("ns/a", 1h);
  const auto start = std::chrono::steady_clock::now();
  q.reset();
  CHECK(std::chrono::steady_clock::now() - start < 5s);
}

TEST_CASE("work queue: addRateLimited backs off per key and forget resets it", "[workqueue]") {
  WorkQueue q(std::make_unique<ItemExponentialFailureRateLimiter>(1ms, 1s));
  q.addRateLimited("ns/a");
  q.addRateLimited("ns/a");
  q.addRateLimited("ns/a");
  CHECK(q.numRequeues("ns/a") == 3);
  CHECK(q.numRequeues("ns/b") == 0);
  CHECK(getWithin(q, 5000ms) == "ns/a");
  q.done("ns/a");
  q.forget("ns/a");
  CHECK(q.numRequeues("ns/a") == 0);
}

TEST_CASE("exponential limiter: 5, 10, 20 ms ... up to the cap, per item", "[workqueue]") {
  ItemExponentialFailureRateLimiter l(5ms, 1000s);
  CHECK(l.when("a") == 5ms);
  CHECK(l.when("a") == 10ms);
  CHECK(l.when("a") == 20ms);
  CHECK(l.when("a") == 40ms);
  CHECK(l.when("b") == 5ms);  // items are independent
  CHECK(l.numRequeues("a") == 4);
  CHECK(l.numRequeues("b") == 1);
  // 5 ms * 2^17 = 655 s, 2^18 would pass 1000 s.
  for (int i = 4; i < 17; ++i)
    l.when("a");
  CHECK(l.when("a") == std::chrono::nanoseconds(5ms) * (1 << 17));
  CHECK(l.when("a") == 1000s);
  for (int i = 0; i < 2000; ++i)  // far past any integer overflow
    CHECK(l.when("a") == 1000s);
  l.forget("a");
  CHECK(l.numRequeues("a") == 0);
  CHECK(l.when("a") == 5ms);
}

TEST_CASE("bucket limiter: burst at once, then spaced at 1/qps", "[workqueue]") {
  FakeClock clock;
  BucketRateLimiter l(10, 100, clock);
  for (int i = 0; i < 100; ++i)
    REQUIRE(l.when("x" + std::to_string(i)) == 0ns);
  CHECK(l.when("y") == 100ms);
  CHECK(l.when("y") == 200ms);
  CHECK(l.numRequeues("y") == 0);
  clock.advance(1s);  // ten tokens back, two of them owed
  for (int i = 0; i < 8; ++i)
    CHECK(l.when("z") == 0ns);
  CHECK(l.when("z") == 100ms);
}

TEST_CASE("default controller limiter: the larger of per-item backoff and the bucket",
          "[workqueue]") {
  FakeClock clock;
  auto l = defaultControllerRateLimiter(clock);
  CHECK(l->when("a") == 5ms);
  CHECK(l->when("a") == 10ms);
  CHECK(l->numRequeues("a") == 2);
  for (int i = 0; i < 98; ++i)
    l->when("k" + std::to_string(i));  // the bucket's burst is now spent
  CHECK(l->when("fresh") == 100ms);    // the bucket's wait exceeds the item's 5 ms
  l->forget("a");
  CHECK(l->numRequeues("a") == 0);
}

TEST_CASE("work queue: client-go's workqueue_* series follow adds, hand-outs and retries",
          "[workqueue]") {
  using namespace std::chrono_literals;
  koord::metrics::Registry registry;
  const auto m = koord::kube::workQueueMetrics(registry, "nodemetric");
  koord::kube::WorkQueue q(koord::kube::defaultControllerRateLimiter(), m);
  q.add("a");
  q.add("a");  // already queued: not an add
  q.add("b");
  CHECK(m.adds->value() == 2);
  CHECK(m.depth->value() == 2);
  auto a = q.get();
  REQUIRE(a == std::optional<std::string>("a"));
  CHECK(m.depth->value() == 1);
  CHECK(m.queue_duration->snapshot().count == 1);
  // a is in process: the in-progress gauges grow while it is held.
  std::this_thread::sleep_for(1200ms);
  CHECK(m.unfinished_work->value() > 0.4);
  CHECK(m.longest_running->value() > 0.4);
  q.done("a");
  CHECK(m.work_duration->snapshot().count == 1);
  q.addRateLimited("a");
  CHECK(m.retries->value() == 1);
  const std::string text = registry.render();
  CHECK_THAT(text, Catch::Contains("workqueue_adds_total{name=\"nodemetric\"} 2"));
  CHECK_THAT(text, Catch::Contains("# TYPE workqueue_queue_duration_seconds histogram"));
  CHECK_THAT(text,
             Catch::Contains("workqueue_longest_running_processor_seconds{name=\"nodemetric\"}"));
  // Another queue of the same name shares the series, as controller-runtime's would.
  CHECK(koord::kube::workQueueMetrics(registry, "nodemetric").adds == m.adds);
}
