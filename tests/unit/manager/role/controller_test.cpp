#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <thread>

#include "controller/controller.h"
#include "koord/core/metrics.h"

using koord::roles::manager::Controller;
using koord::roles::manager::ReconcileResult;
using namespace std::chrono_literals;

namespace {

bool waitUntil(const std::function<bool()>& f) {
  auto deadline = std::chrono::steady_clock::now() + 5s;
  while (std::chrono::steady_clock::now() < deadline) {
    if (f())
      return true;
    std::this_thread::sleep_for(5ms);
  }
  return f();
}

}  // namespace

TEST_CASE("controller retries a failed key, then counts its success", "[controller]") {
  koord::metrics::Registry registry;
  std::mutex mu;
  std::map<std::string, int> calls;
  Controller c(
      "test",
      [&](const std::string& key) {
        std::lock_guard lock(mu);
        int n = ++calls[key];
        if (key == "flaky" && n < 3)
          return ReconcileResult::fail("not yet");
        if (key == "throws" && n == 1)
          throw std::runtime_error("boom");
        return ReconcileResult::done();
      },
      1, registry);
  c.enqueue("flaky");
  c.enqueue("throws");
  c.enqueue("fine");
  c.start();
  REQUIRE(waitUntil([&] {
    std::lock_guard lock(mu);
    return calls["flaky"] == 3 && calls["throws"] == 2 && calls["fine"] == 1;
  }));
  c.stop();
  auto text = registry.render();
  CHECK(text.find(R"(controller_runtime_reconcile_total{controller="test",result="error"} 3)") !=
        std::string::npos);
  CHECK(text.find(R"(controller_runtime_reconcile_total{controller="test",result="success"} 3)") !=
        std::string::npos);
}

TEST_CASE("controller requeues after the asked delay", "[controller]") {
  koord::metrics::Registry registry;
  std::atomic<int> calls{0};
  Controller c(
      "later",
      [&](const std::string&) {
        return ++calls < 3 ? ReconcileResult::after(20ms) : ReconcileResult::done();
      },
      2, registry);
  c.start();
  c.enqueue("k");
  REQUIRE(waitUntil([&] { return calls == 3; }));
  std::this_thread::sleep_for(60ms);
  CHECK(calls == 3);
}
