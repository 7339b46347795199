// The scheduling loop with Koordinator's Coscheduling plugin as the chart enables it: a gang binds
// all together or not at all, fails as a whole when a member fails (Strict), gives its room back
// when its wait times out, and competing gangs never hold each other's room.
#include <catch2/catch.hpp>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "config/scheduler_config.h"
#include "framework/plugin_registry.h"
#include "koord/apis/gang.h"
#include "koord/core/metrics.h"
#include "loop_objects.h"
#include "plugins/coscheduling/coscheduling.h"
#include "scheduler.h"

namespace koord::roles::scheduler {
namespace {

using namespace std::chrono_literals;

class RecordingApi final : public SchedulerApi {
 public:
  void bindPod(std::shared_ptr<const PodInfo> pod, const std::string& node,
               ApiCallback done) const override {
    {
      std::lock_guard lock(mu);
      bindings[pod->key()] = node;
    }
    done({});
  }
  std::shared_ptr<const PodInfo> currentPod(const std::string& key) const override {
    std::lock_guard lock(mu);
    auto it = pods.find(key);
    return it == pods.end() ? nullptr : it->second;
  }
  void reportScheduled(const PodInfo&, const std::string&, const std::string&) override {}
  void reportFailure(const PodInfo& pod, const std::string&, std::string_view,
                     const std::string& message, const std::string&) override {
    std::lock_guard lock(mu);
    failures.emplace_back(pod.key(), message);
  }
  std::map<std::string, std::string> bound() const {
    std::lock_guard lock(mu);
    return bindings;
  }

  mutable std::mutex mu;
  std::map<std::string, std::shared_ptr<const PodInfo>> pods;
  mutable std::map<std::string, std::string> bindings;
  std::vector<std::pair<std::string, std::string>> failures;
};

const char* kGangConfig =
    "apiVersion: kubescheduler.config.k8s.io/v1beta2\n"
    "kind: KubeSchedulerConfiguration\n"
    "profiles:\n- schedulerName: koord-scheduler\n"
    "  plugins:\n"
    "    queueSort: {disabled: [{name: '*'}], enabled: [{name: Coscheduling}]}\n"
    "    preFilter: {enabled: [{name: Coscheduling}]}\n"
    "    postFilter: {enabled: [{name: Coscheduling}]}\n"
    "    reserve: {enabled: [{name: Coscheduling}]}\n"
    "    permit: {enabled: [{name: Coscheduling}]}\n"
    "    postBind: {enabled: [{name: Coscheduling}]}\n";

config::SchedulerConfig gangConfig() {
  auto cfg = config::parseSchedulerConfigText(kGangConfig, inTreeRegistry());
  REQUIRE(cfg.has_value());
  return std::move(*cfg);
}

struct GangPod {
  std::string name;
  std::string gang;
  int min = 3;
  std::int64_t milli_cpu = 2000;
  std::string mode = "Strict";
  std::string wait = "";
  std::string groups = "";
};

std::shared_ptr<const PodInfo> gangPod(const GangPod& g) {
  auto p = testing::loopPod(g.name, g.milli_cpu);
  p->annotations[std::string(apis::kAnnotationGangName)] = g.gang;
  p->annotations[std::string(apis::kAnnotationGangMinAvailable)] = std::to_string(g.min);
  p->annotations[std::string(apis::kAnnotationGangMode)] = g.mode;
  if (!g.wait.empty())
    p->annotations[std::string(apis::kAnnotationGangWaitingTime)] = g.wait;
  if (!g.groups.empty())
    p->annotations[std::string(apis::kAnnotationGangGroups)] = g.groups;
  p->gang_id = "default/" + g.gang;
  return p;
}

struct Fixture {
  RecordingApi api;
  metrics::Registry registry;
  Scheduler scheduler{gangConfig(), inTreeRegistry(), api, registry};

  explicit Fixture(std::int64_t milli_cpu) {
    scheduler.onNodeAdd(testing::loopNode("n1", milli_cpu));
  }

  void add(std::shared_ptr<const PodInfo> p) {
    {
      std::lock_guard lock(api.mu);
      api.pods[p->key()] = p;
    }
    scheduler.onPodAdd(*p);
    scheduler.onPendingPodAdd(p);
  }
  std::size_t queued() {
    const auto s = scheduler.queue().sizes();
    return s.active + s.backoff + s.unschedulable;
  }
  /// Schedules whatever is active, flushing backoff as time passes, until `done` or `limit`.
  bool runUntil(const std::function<bool()>& done, std::chrono::milliseconds limit = 15s) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (!done()) {
      if (std::chrono::steady_clock::now() > deadline)
        return false;
      scheduler.queue().flushBackoffQCompleted();
      if (scheduler.queue().sizes().active > 0)
        scheduler.scheduleOne();
      else
        std::this_thread::sleep_for(20ms);
    }
    return true;
  }
  /// Schedules until the active queue is empty.
  void drainActive() {
    while (scheduler.queue().sizes().active > 0)
      scheduler.scheduleOne();
  }
  coscheduling::Coscheduling& plugin() {
    auto* p = dynamic_cast<coscheduling::Coscheduling*>(scheduler.findPlugin("Coscheduling"));
    REQUIRE(p != nullptr);
    return *p;
  }
  std::int64_t requested() { return scheduler.cache().nodeInfo("n1")->requested.milli_cpu; }
  double permitResults(const std::string& result) {
    const std::string text = registry.render();
    const std::string needle =
        "scheduler_permit_wait_duration_seconds_count{result=\"" + result + "\"} ";
    auto at = text.find(needle);
    return at == std::string::npos ? 0 : std::stod(text.substr(at + needle.size()));
  }
};

TEST_CASE(
    "coscheduling loop: a gang of 3 with room for 2 binds none, then all 3 once room "
    "appears",
    "[scheduler][loop][coscheduling]") {
  Fixture f(4000);
  for (const char* name : {"a", "b", "c"})
    f.add(gangPod({.name = name, .gang = "g"}));
  f.drainActive();
  CHECK(f.api.bound().empty());
  // The two members that fit were assumed, then released with the third's failure.
  CHECK(f.plugin().gangs().waitingCount() == 0);
  CHECK(f.requested() == 0);
  CHECK(f.queued() == 3);

  // Room for all three.
  f.scheduler.onNodeUpdate(*testing::loopNode("n1", 4000), testing::loopNode("n1", 8000));
  REQUIRE(f.runUntil([&] { return f.api.bound().size() == 3; }));
  CHECK(f.requested() == 6000);
  auto gang = f.plugin().gangs().gang("default/g");
  REQUIRE(gang.has_value());
  CHECK(gang->bound.size() == 3);
  CHECK(gang->once_resource_satisfied);
}

TEST_CASE("coscheduling loop: two gangs that fit alone but not together: one completes",
          "[scheduler][loop][coscheduling]") {
  Fixture f(6000);
  // Interleaved, as two jobs submitted at once create them.
  for (const char* n : {"1", "2", "3"}) {
    f.add(gangPod({.name = std::string("x") + n, .gang = "x"}));
    f.add(gangPod({.name = std::string("y") + n, .gang = "y"}));
  }
  REQUIRE(f.runUntil([&] { return f.api.bound().size() == 3; }, 10s));
  // Keep going a while: the other gang must neither bind nor hold room.
  f.runUntil([] { return false; }, 1500ms);
  auto bound = f.api.bound();
  REQUIRE(bound.size() == 3);
  std::set<std::string> gangs;
  for (const auto& [key, node] : bound)
    gangs.insert(key.substr(0, key.size() - 1));  // "default/x1" -> "default/x"
  CHECK(gangs.size() == 1);
  CHECK(f.requested() == 6000);
  CHECK(f.plugin().gangs().waitingCount() == 0);
}

TEST_CASE("coscheduling loop: a NonStrict gang whose wait times out gives its room back",
          "[scheduler][loop][coscheduling]") {
  Fixture f(4000);
  for (const char* name : {"a", "b", "c"})
    f.add(gangPod({.name = name, .gang = "g", .mode = "NonStrict", .wait = "300ms"}));
  f.drainActive();
  // NonStrict: the third's failure leaves the two assumed members waiting.
  CHECK(f.plugin().gangs().waitingCount() == 2);
  CHECK(f.requested() == 4000);
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  while (f.requested() != 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(10ms);
  CHECK(f.requested() == 0);
  CHECK(f.api.bound().empty());
  CHECK(f.plugin().gangs().waitingCount() == 0);
  CHECK(f.permitResults("timeout") == 2);
}

TEST_CASE("coscheduling loop: a gang of gangs binds once every gang of the group can",
          "[scheduler][loop][coscheduling]") {
  Fixture f(8000);
  const std::string groups = R"(["default/x","default/y"])";
  f.add(gangPod({.name = "x1", .gang = "x", .min = 1, .groups = groups}));
  f.drainActive();
  // x alone is satisfied, but y is not there yet: x1 waits.
  CHECK(f.api.bound().empty());
  CHECK(f.plugin().gangs().waitingCount() == 1);

  f.add(gangPod({.name = "y1", .gang = "y", .min = 1, .groups = groups}));
  f.drainActive();
  auto bound = f.api.bound();
  CHECK(bound.size() == 2);
  CHECK(bound.contains("default/x1"));
  CHECK(bound.contains("default/y1"));
  CHECK(f.plugin().gangs().waitingCount() == 0);
}

TEST_CASE("coscheduling loop: members wait in PreFilter until min-available exist",
          "[scheduler][loop][coscheduling]") {
  Fixture f(8000);
  f.add(gangPod({.name = "a", .gang = "g"}));
  f.add(gangPod({.name = "b", .gang = "g"}));
  f.drainActive();
  CHECK(f.api.bound().empty());
  CHECK(f.requested() == 0);  // refused before any room was assumed
  {
    std::lock_guard lock(f.api.mu);
    REQUIRE_FALSE(f.api.failures.empty());
    CHECK(f.api.failures.back().second.find("gang child pod not collect enough") !=
          std::string::npos);
  }
  // The third member activates the other two: all bind without waiting out a backoff.
  f.add(gangPod({.name = "c", .gang = "g"}));
  f.drainActive();
  CHECK(f.api.bound().size() == 3);
}

TEST_CASE("coscheduling loop: pods outside gangs schedule as before",
          "[scheduler][loop][coscheduling]") {
  Fixture f(4000);
  f.add(testing::loopPod("plain", 1000));
  f.drainActive();
  CHECK(f.api.bound().size() == 1);
}

}  // namespace
}  // namespace koord::roles::scheduler
