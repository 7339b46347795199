#include "framework/waiting_pods.h"

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

using namespace koord::roles::scheduler;
using namespace std::chrono_literals;

namespace {

std::shared_ptr<const PodInfo> pod(const std::string& uid) {
  auto p = std::make_shared<PodInfo>();
  p->namespace_ = "ns";
  p->name = uid;
  p->uid = uid;
  return p;
}

// What each continuation received, in order.
struct Decisions {
  std::mutex mu;
  std::vector<std::pair<std::string, Status>> seen;
  WaitingPod::Done record(const std::string& uid) {
    return [this, uid](Status s) {
      std::lock_guard lock(mu);
      seen.emplace_back(uid, std::move(s));
    };
  }
  std::size_t size() {
    std::lock_guard lock(mu);
    return seen.size();
  }
};

bool eventually(const std::function<bool()>& f) {
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  while (!f()) {
    if (std::chrono::steady_clock::now() > deadline)
      return false;
    std::this_thread::sleep_for(5ms);
  }
  return true;
}

}  // namespace

TEST_CASE("a waiting pod goes on once every waiting plugin allows it", "[scheduler][permit]") {
  WaitingPods pods;
  Decisions d;
  pods.add(pod("a"), "node-1", {{"Coscheduling", 60s}, {"Other", 60s}}, d.record("a"));
  REQUIRE(pods.size() == 1);
  REQUIRE(pods.get("a") != nullptr);
  CHECK(pods.get("a")->nodeName() == "node-1");
  CHECK(pods.allow("a", "Coscheduling"));
  CHECK(d.size() == 0);
  CHECK(pods.get("a")->pendingPlugins() == std::vector<std::string>{"Other"});
  CHECK(pods.allow("a", "Other"));
  REQUIRE(d.size() == 1);
  CHECK(d.seen[0].second.ok());
  CHECK(pods.size() == 0);
  // Decided once: later decisions find nothing.
  CHECK_FALSE(pods.allow("a", "Other"));
  CHECK_FALSE(pods.reject("a", "Other", "late"));
  CHECK(d.size() == 1);
}

TEST_CASE("a rejection names the plugin and its reason", "[scheduler][permit]") {
  WaitingPods pods;
  Decisions d;
  pods.add(pod("a"), "node-1", {{"Coscheduling", 60s}}, d.record("a"));
  CHECK(pods.reject("a", "Coscheduling", "gang rejected"));
  REQUIRE(d.size() == 1);
  CHECK(d.seen[0].second.isUnschedulable());
  CHECK(d.seen[0].second.plugin() == "Coscheduling");
  CHECK(d.seen[0].second.message() == "gang rejected");
  CHECK(pods.size() == 0);
}

TEST_CASE("a waiting pod is rejected when its plugin's timeout passes", "[scheduler][permit]") {
  WaitingPods pods;
  Decisions d;
  pods.add(pod("slow"), "node-1", {{"Coscheduling", 50ms}}, d.record("slow"));
  pods.add(pod("patient"), "node-1", {{"Coscheduling", 60s}}, d.record("patient"));
  REQUIRE(eventually([&] { return d.size() == 1; }));
  CHECK(d.seen[0].first == "slow");
  CHECK(d.seen[0].second.isUnschedulable());
  CHECK(d.seen[0].second.message().find("timeout") != std::string::npos);
  CHECK(pods.size() == 1);
  CHECK(pods.get("patient") != nullptr);
}

TEST_CASE("a continuation may decide other waiting pods (a gang rejected as one)",
          "[scheduler][permit]") {
  WaitingPods pods;
  Decisions d;
  auto rejectSiblings = [&](const std::string& uid) {
    return [&, uid](Status s) {
      d.record(uid)(s);
      // As Coscheduling's Unreserve does: every sibling still waiting is rejected too.
      pods.iterate([&](WaitingPod& w) { pods.reject(w.pod()->uid, "Coscheduling", "sibling"); });
    };
  };
  for (const char* uid : {"m1", "m2", "m3"})
    pods.add(pod(uid), "node-1", {{"Coscheduling", 60s}}, rejectSiblings(uid));
  CHECK(pods.reject("m2", "Coscheduling", "member failed"));
  CHECK(d.size() == 3);
  CHECK(pods.size() == 0);
  for (const auto& [uid, s] : d.seen)
    CHECK(s.isUnschedulable());
}

TEST_CASE("allow and reject racing from threads decide each pod exactly once",
          "[scheduler][permit]") {
  WaitingPods pods;
  std::atomic<int> decided{0};
  constexpr int kPods = 200;
  for (int i = 0; i < kPods; ++i)
    pods.add(pod("p" + std::to_string(i)), "node-1", {{"Coscheduling", 60s}},
             [&](Status) { ++decided; });
  std::thread allower([&] {
    for (int i = 0; i < kPods; ++i)
      pods.allow("p" + std::to_string(i), "Coscheduling");
  });
  std::thread rejecter([&] {
    for (int i = kPods - 1; i >= 0; --i)
      pods.reject("p" + std::to_string(i), "Coscheduling", "race");
  });
  allower.join();
  rejecter.join();
  CHECK(decided.load() == kPods);
  CHECK(pods.size() == 0);
}

TEST_CASE("a wait with no plugin pending goes on at once", "[scheduler][permit]") {
  WaitingPods pods;
  Decisions d;
  pods.add(pod("a"), "node-1", {}, d.record("a"));
  REQUIRE(d.size() == 1);
  CHECK(d.seen[0].second.ok());
  CHECK(pods.size() == 0);
}
