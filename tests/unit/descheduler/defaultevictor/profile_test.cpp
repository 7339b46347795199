// A profile as a DeschedulerConfiguration writes it: PodLifeTime, RemovePodsHavingTooManyRestarts
// and RemoveFailedPods at deschedule, DefaultEvictor at filter and evict, args from pluginConfig,
// run over one snapshot through the profile runner to the API side.
#include <catch2/catch.hpp>

#include <chrono>
#include <string>
#include <vector>

#include "config/descheduler_config.h"
#include "fake_handle.h"
#include "plugins/defaultevictor/register.h"
#include "plugins/podlifetime/register.h"
#include "plugins/removefailedpods/register.h"
#include "plugins/removepodshavingtoomanyrestarts/register.h"
#include "runtime/profile_runner.h"

namespace koord::roles::descheduler {
namespace {

using std::chrono::seconds;

const TimePoint kNow = TimePoint{} + std::chrono::hours(24 * 365);

PluginRegistry registry() {
  PluginRegistry r;
  registerDefaultEvictor(r);
  registerPodLifeTime(r);
  registerRemoveFailedPods(r);
  registerRemovePodsHavingTooManyRestarts(r);
  return r;
}

std::string config(bool node_fit) {
  return std::string(R"(
apiVersion: descheduler/v1alpha2
kind: DeschedulerConfiguration
profiles:
- name: community
  pluginConfig:
  - name: DefaultEvictor
    args:
      apiVersion: descheduler/v1alpha2
      kind: DefaultEvictorArgs
      nodeFit: )") +
         (node_fit ? "true" : "false") + R"(
  - name: PodLifeTime
    args:
      maxPodLifeTimeSeconds: 3600
      states: [Running]
  - name: RemovePodsHavingTooManyRestarts
    args:
      podRestartThreshold: 5
  - name: RemoveFailedPods
    args:
      reasons: [OOMKilled]
  plugins:
    deschedule:
      enabled:
      - name: PodLifeTime
      - name: RemovePodsHavingTooManyRestarts
      - name: RemoveFailedPods
    filter:
      enabled:
      - name: DefaultEvictor
    evict:
      enabled:
      - name: DefaultEvictor
)";
}

std::shared_ptr<Pod> pod(std::string name, std::string node, seconds age) {
  auto p = testkit::makePod(std::move(name), std::move(node));
  p->creation_timestamp = kNow - age;
  return p;
}

// n1: old-rs, old-ds (DaemonSet), old-local (emptyDir), old-critical, new-rs (10 min);
// n2: crash (10 restarts, 30 min), failed (OOMKilled, 2 h).
Snapshot snapshot(bool n2_unschedulable) {
  Snapshot s;
  s.now = kNow;
  s.addNode(testkit::makeNode("n1"));
  auto n2 = testkit::makeNode("n2");
  n2->unschedulable = n2_unschedulable;
  s.addNode(n2);
  const seconds old(5 * 3600);
  s.addPod(pod("old-rs", "n1", old));
  auto ds = pod("old-ds", "n1", old);
  ds->owner_refs = {{"apps/v1", "DaemonSet", "ds", "uid-ds", true}};
  s.addPod(ds);
  auto local = pod("old-local", "n1", old);
  local->has_local_storage = true;
  s.addPod(local);
  auto critical = pod("old-critical", "n1", old);
  critical->priority = 2'000'001'000;
  s.addPod(critical);
  s.addPod(pod("new-rs", "n1", seconds(600)));
  auto crash = pod("crash", "n2", seconds(1800));
  crash->container_statuses = {{"app", false, 10, "CrashLoopBackOff", ""}};
  s.addPod(crash);
  auto failed = pod("failed", "n2", seconds(7200));
  failed->phase = PodPhase::kFailed;
  failed->container_statuses = {{"app", false, 0, "", "OOMKilled"}};
  s.addPod(failed);
  return s;
}

std::vector<std::string> run(bool node_fit, bool n2_unschedulable) {
  const PluginRegistry r = registry();
  auto c = config::parseDeschedulerConfigText(config(node_fit), r);
  INFO((c ? std::string() : c.error().message));
  REQUIRE(c.has_value());
  EvictionLimiter limiter(std::nullopt, std::nullopt, std::nullopt);
  testkit::RecordingApi api;
  ::koord::metrics::Registry metrics;
  auto runner = ProfileRunner::build(c->profiles.front(), r, limiter, api, metrics);
  INFO((runner ? std::string() : runner.error().message));
  REQUIRE(runner.has_value());
  const Snapshot s = snapshot(n2_unschedulable);
  REQUIRE((*runner)->runDeschedule(s, {s.node("n1"), s.node("n2")}).has_value());
  return api.evicted;
}

TEST_CASE("community profile: each plugin evicts its pods, DefaultEvictor keeps the rest",
          "[descheduler]") {
  CHECK(run(false, false) ==
        std::vector<std::string>{"default/old-rs", "default/crash", "default/failed"});
}

TEST_CASE("community profile: with nodeFit a pod with nowhere to go stays", "[descheduler]") {
  // n2 unschedulable: old-rs (on n1) has no other node; n2's pods can go to n1.
  CHECK(run(true, true) == std::vector<std::string>{"default/crash", "default/failed"});
}

TEST_CASE("community profile: bad args are refused naming the plugin's field", "[descheduler]") {
  std::string text = config(false);
  text.replace(text.find("podRestartThreshold: 5"), 22, "podRestartThreshold: 0");
  auto c = config::parseDeschedulerConfigText(text, registry());
  REQUIRE_FALSE(c.has_value());
  CHECK_THAT(c.error().message,
             Catch::Contains("pluginConfig[2].args") && Catch::Contains("podRestartThreshold"));
}

}  // namespace
}  // namespace koord::roles::descheduler
