#include "plugins/loadaware/pod_assign_cache.h"

#include <atomic>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "fixture.h"
#include "plugins/loadaware/load_aware.h"
#include "plugins/loadaware/node_usage.h"

using namespace koord::roles::scheduler::loadaware;
using namespace loadaware_test;
using koord::apis::PriorityClass;
using koord::apis::QoSClass;
using koord::roles::scheduler::Code;
using std::chrono::minutes;
using std::chrono::seconds;

namespace {

// The NodeMetric of every case: reported 10 s before kNow (60 s interval), node usage 30 cores.
// "a" is a 16-core pod (estimated 13600m); its reported usage, when there is one, is 2 cores.
constexpr std::int64_t kNodeUsage = 30000;
constexpr std::int64_t kEstimate = 13600;
constexpr std::int64_t kReported = 2000;

struct Case {
  const char* name;
  /// Records "a" in the cache (or not) through its public API.
  std::function<void(PodAssignCache&)> setup;
  bool reported = false;  // whether podsMetric lists "a"
  std::int64_t want_cpu;
  std::function<void(LoadAwareSchedulingArgs&)> args = [](LoadAwareSchedulingArgs&) {};
};

PodInfo podA() {
  PodInfo p = pod("a", res("16", "32Gi"));
  p.node_name = "node-1";
  return p;
}

std::int64_t existingCPU(const Case& c) {
  LoadAwareSchedulingArgs args;
  c.args(args);
  const auto v = vectorizerFor(args);
  PodAssignCache cache(args, v, [] { return kNow; });
  c.setup(cache);
  auto m = metric("30", "100Gi");
  if (c.reported)
    m.pods_metric.push_back(podMetric("a", "2", "4Gi"));
  auto pods = cache.podsOn("node-1");
  auto state = buildNodeUsageState(m, pods.get(), v, false);
  return estimatedOfExisting(state, v, false, {}, "")[v.indexOf("cpu")];
}

}  // namespace

TEST_CASE("loadaware pod-assign cache: which pods add their estimate", "[scheduler][loadaware]") {
  const std::vector<Case> cases = {
      {.name = "nothing assigned: the reported usage",
       .setup = [](PodAssignCache&) {},
       .want_cpu = kNodeUsage},
      {.name = "reserved after the metric's update: estimate beyond its reported usage",
       .setup = [](PodAssignCache& c) { c.assign("node-1", podA(), kNow); },
       .reported = true,
       .want_cpu = kNodeUsage + kEstimate - kReported},
      {.name = "reserved within the report interval before the update still counts",
       .setup = [](PodAssignCache& c) { c.assign("node-1", podA(), kNow - seconds(60)); },
       .reported = true,
       .want_cpu = kNodeUsage + kEstimate - kReported},
      {.name = "scheduled well before the update, and reported: nothing added",
       .setup = [](PodAssignCache& c) { c.onPodAdd(podA(), kNow - minutes(10), std::nullopt); },
       .reported = true,
       .want_cpu = kNodeUsage},
      {.name = "scheduled long ago but not reported: the whole estimate",
       .setup = [](PodAssignCache& c) { c.onPodAdd(podA(), kNow - minutes(10), std::nullopt); },
       .want_cpu = kNodeUsage + kEstimate},
      {.name = "unreserve removes it",
       .setup =
           [](PodAssignCache& c) {
             c.assign("node-1", podA(), kNow);
             c.unassign("node-1", "uid-a");
           },
       .want_cpu = kNodeUsage},
      {.name = "a deleted pod is removed",
       .setup =
           [](PodAssignCache& c) {
             c.onPodAdd(podA(), kNow, std::nullopt);
             c.onPodDelete(podA());
           },
       .want_cpu = kNodeUsage},
      {.name = "a pod that finished is removed",
       .setup =
           [](PodAssignCache& c) {
             c.onPodAdd(podA(), kNow, std::nullopt);
             PodInfo done = podA();
             done.phase = koord::roles::scheduler::PodPhase::kSucceeded;
             c.onPodUpdate(podA(), done, std::nullopt, std::nullopt);
           },
       .want_cpu = kNodeUsage},
      {.name = "a finished pod is never added",
       .setup =
           [](PodAssignCache& c) {
             PodInfo done = podA();
             done.phase = koord::roles::scheduler::PodPhase::kFailed;
             c.onPodAdd(done, kNow, std::nullopt);
           },
       .want_cpu = kNodeUsage},
      {.name = "estimatedSecondsAfterPodScheduled keeps an old pod estimated",
       .setup = [](PodAssignCache& c) { c.onPodAdd(podA(), kNow - minutes(10), std::nullopt); },
       .reported = true,
       .want_cpu = kNodeUsage + kEstimate - kReported,
       .args = [](auto& a) { a.estimated_seconds_after_pod_scheduled = 900; }},
      {.name = "an estimation window that ended before the update adds nothing",
       .setup = [](PodAssignCache& c) { c.onPodAdd(podA(), kNow - minutes(10), std::nullopt); },
       .reported = true,
       .want_cpu = kNodeUsage,
       .args = [](auto& a) { a.estimated_seconds_after_pod_scheduled = 300; }},
      {.name = "once initialized, the window counts from initialization",
       .setup =
           [](PodAssignCache& c) { c.onPodAdd(podA(), kNow - minutes(10), kNow - minutes(10)); },
       .reported = true,
       .want_cpu = kNodeUsage,
       .args =
           [](auto& a) {
             a.estimated_seconds_after_pod_scheduled = 900;
             a.estimated_seconds_after_initialized = 60;
           }},
      {.name = "the pod's own window annotation, when customisation is allowed",
       .setup =
           [](PodAssignCache& c) {
             PodInfo p = podA();
             p.annotations[std::string(kAnnotationCustomEstimatedSecondsAfterPodScheduled)] = "900";
             c.onPodAdd(p, kNow - minutes(10), std::nullopt);
           },
       .reported = true,
       .want_cpu = kNodeUsage + kEstimate - kReported,
       .args = [](auto& a) { a.allow_customize_estimation = true; }},
      // Windows beyond int64 nanoseconds: adding them to the pod's time overflowed into the
      // past, ending the estimate at once (a pod's own annotation could do it).
      {.name = "a window annotation of centuries keeps the pod estimated",
       .setup =
           [](PodAssignCache& c) {
             PodInfo p = podA();
             p.annotations[std::string(kAnnotationCustomEstimatedSecondsAfterPodScheduled)] =
                 "9223372036854775807";
             c.onPodAdd(p, kNow - minutes(10), std::nullopt);
           },
       .reported = true,
       .want_cpu = kNodeUsage + kEstimate - kReported,
       .args = [](auto& a) { a.allow_customize_estimation = true; }},
      {.name = "an estimatedSecondsAfterInitialized of centuries keeps the pod estimated",
       .setup =
           [](PodAssignCache& c) { c.onPodAdd(podA(), kNow - minutes(10), kNow - minutes(10)); },
       .reported = true,
       .want_cpu = kNodeUsage + kEstimate - kReported,
       .args =
           [](auto& a) {
             a.estimated_seconds_after_initialized = std::numeric_limits<std::int64_t>::max();
           }},
  };
  for (const auto& c : cases) {
    SECTION(c.name) {
      CHECK(existingCPU(c) == c.want_cpu);
    }
  }
}

TEST_CASE("loadaware pod-assign cache: a report interval of centuries", "[scheduler][loadaware]") {
  // updateTime - reportIntervalSeconds overflowed into the far future, so no pod counted as
  // placed after the report's sample; held at the clock's start, every pod does.
  LoadAwareSchedulingArgs args;
  const auto v = vectorizerFor(args);
  PodAssignCache cache(args, v, [] { return kNow; });
  cache.onPodAdd(podA(), kNow - minutes(10), std::nullopt);
  auto m = metric("30", "100Gi");
  m.pods_metric.push_back(podMetric("a", "2", "4Gi"));
  m.collect_policy->report_interval_seconds = std::numeric_limits<std::int64_t>::max();
  auto pods = cache.podsOn("node-1");
  auto state = buildNodeUsageState(m, pods.get(), v, false);
  CHECK(estimatedOfExisting(state, v, false, {}, "")[v.indexOf("cpu")] ==
        kNodeUsage + kEstimate - kReported);
}

TEST_CASE("loadaware pod-assign cache: informer updates", "[scheduler][loadaware]") {
  TimePoint now = kNow;
  LoadAwareSchedulingArgs args;
  PodAssignCache cache(args, vectorizerFor(args), [&] { return now; });

  SECTION("a pod that moves leaves its old node") {
    PodInfo on1 = podA();
    cache.onPodAdd(on1, std::nullopt, std::nullopt);
    PodInfo on2 = on1;
    on2.node_name = "node-2";
    cache.onPodUpdate(on1, on2, std::nullopt, std::nullopt);
    CHECK_FALSE(cache.contains("node-1", "uid-a"));
    CHECK(cache.contains("node-2", "uid-a"));
    CHECK(cache.podsOn("node-1") == nullptr);
  }
  SECTION("an update without PodScheduled keeps the time first seen") {
    cache.onPodAdd(podA(), std::nullopt, std::nullopt);
    now += minutes(5);
    cache.onPodUpdate(podA(), podA(), std::nullopt, std::nullopt);
    auto pods = cache.podsOn("node-1");
    REQUIRE(pods);
    REQUIRE(pods->size() == 1);
    CHECK(pods->front().assigned_at == kNow);
  }
  SECTION("PodScheduled's time wins over the reserve time") {
    cache.assign("node-1", podA(), kNow);
    cache.onPodAdd(podA(), kNow - minutes(1), std::nullopt);
    auto pods = cache.podsOn("node-1");
    REQUIRE(pods);
    REQUIRE(pods->size() == 1);
    CHECK(pods->front().assigned_at == kNow - minutes(1));
  }
  SECTION("a pod of no node is ignored") {
    PodInfo pending = podA();
    pending.node_name.clear();
    cache.onPodAdd(pending, kNow, std::nullopt);
    CHECK(cache.podsOn("") == nullptr);
  }
  SECTION("a pod estimating nothing is kept but adds nothing") {
    PodInfo free = podA();
    free.priority_class = PriorityClass::kFree;
    cache.onPodAdd(free, kNow, std::nullopt);
    auto pods = cache.podsOn("node-1");
    REQUIRE(pods);
    CHECK_FALSE(pods->front().estimated);
  }
}

TEST_CASE("loadaware: reserve adds to the next filter, unreserve takes it back",
          "[scheduler][loadaware]") {
  // 40 cores used; each 16-core pod is estimated at 13.6: one fits (55.8 %), two do not (70 %).
  FakeHandle handle;
  handle.setMetric(metric("40", "100Gi"));
  auto args = std::make_shared<LoadAwareSchedulingArgs>();
  LoadAwareScheduling plugin(args, handle, [] { return kNow; });
  const auto n = nodeInfo(node());
  PodInfo first = pod("first", res("16", "32Gi"));
  PodInfo second = pod("second", res("16", "32Gi"));

  CycleState s1;
  REQUIRE(plugin.preFilter(s1, first).ok());
  REQUIRE(plugin.filter(s1, first, n).ok());
  std::int64_t before = 0;
  REQUIRE(plugin.score(s1, first, n, before).ok());
  REQUIRE(plugin.reserve(s1, first, "node-1").ok());

  CycleState s2;
  REQUIRE(plugin.preFilter(s2, second).ok());
  Status s = plugin.filter(s2, second, n);
  CHECK(s.code() == Code::kUnschedulable);
  CHECK(s.message() == "node(s) cpu usage exceed threshold");
  std::int64_t after = 0;
  REQUIRE(plugin.score(s2, second, n, after).ok());
  CHECK(after < before);

  plugin.unreserve(s1, first, "node-1");
  CHECK(plugin.filter(s2, second, n).ok());
  std::int64_t restored = 0;
  REQUIRE(plugin.score(s2, second, n, restored).ok());
  CHECK(restored == before);
}

TEST_CASE("loadaware: filter and score run in parallel with reserves", "[scheduler][loadaware]") {
  FakeHandle handle;
  handle.setMetric(metric("10", "10Gi"));
  LoadAwareScheduling plugin(std::make_shared<LoadAwareSchedulingArgs>(), handle,
                             [] { return kNow; });
  const auto n = nodeInfo(node());
  PodInfo incoming = pod("incoming", res("1", "1Gi"));
  CycleState state;
  REQUIRE(plugin.preFilter(state, incoming).ok());

  std::atomic<bool> stop{false};
  std::atomic<int> failures{0};
  std::vector<std::thread> readers;
  for (int t = 0; t < 4; ++t) {
    readers.emplace_back([&] {
      while (!stop.load()) {
        std::int64_t score = 0;
        if (!plugin.filter(state, incoming, n).ok() ||
            !plugin.score(state, incoming, n, score).ok() || score <= 0)
          failures.fetch_add(1);
      }
    });
  }
  CycleState writer_state;
  for (int i = 0; i < 200; ++i) {
    PodInfo p = pod("p" + std::to_string(i), res("100m", "64Mi"));
    REQUIRE(plugin.reserve(writer_state, p, "node-1").ok());
    if (i % 2 == 0)
      plugin.unreserve(writer_state, p, "node-1");
  }
  stop = true;
  for (auto& t : readers)
    t.join();
  CHECK(failures.load() == 0);
  auto pods = plugin.podAssignCache().podsOn("node-1");
  REQUIRE(pods);
  CHECK(pods->size() == 100);
}

TEST_CASE("loadaware: the factory checks its args", "[scheduler][loadaware]") {
  FakeHandle handle;
  auto now = [] { return kNow; };
  SECTION("no args: the defaults") {
    auto p = createLoadAwareScheduling(nullptr, handle, now);
    REQUIRE(p.has_value());
    CHECK((*p)->name() == "LoadAwareScheduling");
  }
  SECTION("args of another plugin") {
    struct OtherArgs : koord::roles::scheduler::PluginArgs {};
    auto p = createLoadAwareScheduling(std::make_shared<OtherArgs>(), handle, now);
    REQUIRE_FALSE(p.has_value());
    CHECK_THAT(p.error().message, Catch::Contains("LoadAwareSchedulingArgs"));
  }
  SECTION("invalid args") {
    auto a = std::make_shared<LoadAwareSchedulingArgs>();
    a->usage_thresholds = {{"cpu", 150}};
    auto p = createLoadAwareScheduling(a, handle, now);
    REQUIRE_FALSE(p.has_value());
    CHECK_THAT(p.error().message, Catch::Contains("usageThresholds[cpu]"));
  }
}
