// LoadAwareScheduling keeps what it derives per node between cycles (per Node object, NodeMetric
// and pod-assign generation) and the incoming pod's estimate within a cycle: each must go stale
// exactly when what it came from changes.
#include <memory>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "fixture.h"
#include "plugins/loadaware/load_aware.h"

using namespace koord::roles::scheduler::loadaware;
using namespace loadaware_test;
using koord::roles::scheduler::Code;
using std::chrono::minutes;
using std::chrono::seconds;

namespace {

// A 16-core / 32Gi pod is estimated at 13.6 cores; on a 96-core node the cpu threshold (65 %)
// leaves room for 48.8 cores of existing usage.
PodInfo incoming() {
  return pod("incoming", res("16", "32Gi"));
}

NodeInfo withMetric(std::shared_ptr<const Node> n, const koord::apis::NodeMetric& m) {
  NodeInfo info = nodeInfo(std::move(n));
  info.node_metric = std::make_shared<const koord::apis::NodeMetric>(m);
  return info;
}

std::int64_t scoreOf(const LoadAwareScheduling& plugin, const CycleState& state, const PodInfo& p,
                     const NodeInfo& n) {
  std::int64_t s = -1;
  REQUIRE(plugin.score(state, p, n, s).ok());
  return s;
}

}  // namespace

TEST_CASE("loadaware cache: a new NodeMetric for the same Node is read", "[scheduler][loadaware]") {
  FakeHandle handle;
  LoadAwareScheduling plugin(std::make_shared<LoadAwareSchedulingArgs>(), handle,
                             [] { return kNow; });
  const auto n = node();
  CycleState state;
  REQUIRE(plugin.preFilter(state, incoming()).ok());

  const NodeInfo idle = withMetric(n, metric("10", "10Gi"));
  const NodeInfo busy = withMetric(n, metric("60", "10Gi"));
  const NodeInfo stale = withMetric(n, metric("10", "10Gi", minutes(5)));
  CHECK(plugin.filter(state, incoming(), idle).ok());
  const std::int64_t idle_score = scoreOf(plugin, state, incoming(), idle);
  CHECK(idle_score > 0);

  Status s = plugin.filter(state, incoming(), busy);
  CHECK(s.code() == Code::kUnschedulable);
  CHECK(s.message() == "node(s) cpu usage exceed threshold");
  CHECK(scoreOf(plugin, state, incoming(), busy) < idle_score);

  s = plugin.filter(state, incoming(), stale);
  CHECK(s.code() == Code::kUnschedulable);
  CHECK(s.message() == "node(s) nodeMetric expired");
  CHECK(scoreOf(plugin, state, incoming(), stale) == 0);

  // And back: nothing of the busy report lingers.
  CHECK(plugin.filter(state, incoming(), idle).ok());
  CHECK(scoreOf(plugin, state, incoming(), idle) == idle_score);
}

TEST_CASE("loadaware cache: a view made before the node's first NodeMetric reads it when it comes",
          "[scheduler][loadaware]") {
  // The cluster's order of events: a node is scheduled to before its koordlet reports, then
  // an empty NodeMetric is created, then its status is written.
  FakeHandle handle;
  LoadAwareScheduling plugin(std::make_shared<LoadAwareSchedulingArgs>(), handle,
                             [] { return kNow; });
  CycleState state;
  REQUIRE(plugin.preFilter(state, incoming()).ok());
  const NodeInfo info = nodeInfo(node());
  CHECK(plugin.filter(state, incoming(), info).ok());
  CHECK(scoreOf(plugin, state, incoming(), info) == 0);

  koord::apis::NodeMetric empty;
  empty.name = "node-1";
  handle.setMetric(empty);
  // Never reported: expired (Koordinator's filterExpiredNodeMetrics default), scored 0.
  Status s = plugin.filter(state, incoming(), info);
  CHECK(s.code() == Code::kUnschedulable);
  CHECK(s.message() == "node(s) nodeMetric expired");
  CHECK(scoreOf(plugin, state, incoming(), info) == 0);

  handle.setMetric(metric("60", "10Gi"));
  s = plugin.filter(state, incoming(), info);
  CHECK(s.code() == Code::kUnschedulable);
  CHECK(s.message() == "node(s) cpu usage exceed threshold");
  handle.setMetric(metric("10", "10Gi"));
  CHECK(plugin.filter(state, incoming(), info).ok());
  CHECK(scoreOf(plugin, state, incoming(), info) > 0);
}

TEST_CASE("loadaware cache: a changed usage-thresholds annotation is read",
          "[scheduler][loadaware]") {
  FakeHandle handle;
  handle.setMetric(metric("32", "10Gi"));
  LoadAwareScheduling plugin(std::make_shared<LoadAwareSchedulingArgs>(), handle,
                             [] { return kNow; });
  CycleState state;
  REQUIRE(plugin.preFilter(state, incoming()).ok());
  const std::string key = "scheduling.koordinator.sh/usage-thresholds";

  // 32 + 13.6 cores is 47.5 %: within the args' 65 %, over an annotation's 30 %.
  CHECK(plugin.filter(state, incoming(), nodeInfo(node("node-1"))).ok());
  Status s = plugin.filter(
      state, incoming(), nodeInfo(node("node-1", {{key, R"({"usageThresholds": {"cpu": 30}})"}})));
  CHECK(s.code() == Code::kUnschedulable);
  CHECK(s.message() == "node(s) cpu usage exceed threshold");
  CHECK(plugin
            .filter(state, incoming(),
                    nodeInfo(node("node-1", {{key, R"({"usageThresholds": {"cpu": 50}})"}})))
            .ok());
  // raw-allocatable is per Node object too: 45.6 of 48 cores is 95 %.
  s = plugin.filter(
      state, incoming(),
      nodeInfo(node("node-1", {{"node.koordinator.sh/raw-allocatable", R"({"cpu": "48"})"}})));
  CHECK(s.code() == Code::kUnschedulable);
  CHECK(plugin.filter(state, incoming(), nodeInfo(node("node-1"))).ok());
}

TEST_CASE("loadaware cache: pods the informer adds and deletes are read",
          "[scheduler][loadaware]") {
  FakeHandle handle;
  handle.setMetric(metric("40", "10Gi"));
  LoadAwareScheduling plugin(std::make_shared<LoadAwareSchedulingArgs>(), handle,
                             [] { return kNow; });
  const NodeInfo n = nodeInfo(node());
  CycleState state;
  REQUIRE(plugin.preFilter(state, incoming()).ok());
  CHECK(plugin.filter(state, incoming(), n).ok());
  const std::int64_t before = scoreOf(plugin, state, incoming(), n);

  // A pod bound just now is not in the report yet: its 13.6 cores are added.
  PodInfo bound = pod("bound", res("16", "32Gi"));
  bound.node_name = "node-1";
  bound.scheduled_at = kNow - seconds(5);
  plugin.onAssignedPodAdd(bound);
  Status s = plugin.filter(state, incoming(), n);
  CHECK(s.code() == Code::kUnschedulable);
  CHECK(scoreOf(plugin, state, incoming(), n) < before);

  plugin.onAssignedPodDelete(bound);
  CHECK(plugin.filter(state, incoming(), n).ok());
  CHECK(scoreOf(plugin, state, incoming(), n) == before);
}

TEST_CASE("loadaware cache: without PreFilter each pod is estimated as it is",
          "[scheduler][loadaware]") {
  FakeHandle handle;
  handle.setMetric(metric("50", "10Gi"));
  LoadAwareScheduling plugin(std::make_shared<LoadAwareSchedulingArgs>(), handle,
                             [] { return kNow; });
  const NodeInfo n = nodeInfo(node());
  CycleState no_prefilter;
  // 50 cores used: 4 cores (3.4 estimated) fit, 16 (13.6, 66 %) do not.
  PodInfo small = pod("small", res("4", "8Gi"));
  PodInfo big = pod("big", res("16", "32Gi"));
  CHECK(plugin.filter(no_prefilter, small, n).ok());
  CHECK(plugin.filter(no_prefilter, big, n).code() == Code::kUnschedulable);
  CHECK(plugin.filter(no_prefilter, small, n).ok());
  const std::int64_t small_score = scoreOf(plugin, no_prefilter, small, n);
  CHECK(scoreOf(plugin, no_prefilter, big, n) < small_score);

  // The same PodInfo object changed in place is estimated again.
  PodInfo p = pod("p", res("4", "8Gi"));
  CHECK(plugin.filter(no_prefilter, p, n).ok());
  p.requests = res("16", "32Gi");
  p.limits = p.requests;
  CHECK(plugin.filter(no_prefilter, p, n).code() == Code::kUnschedulable);
  p.requests = res("4", "8Gi");
  p.limits = p.requests;
  p.priority_class = koord::apis::PriorityClass::kFree;  // estimates nothing
  CHECK(plugin.filter(no_prefilter, p, n).ok());
  CHECK(scoreOf(plugin, no_prefilter, p, n) > small_score);

  // PreFilter's estimate, when there is one, is what counts.
  CycleState with_prefilter;
  REQUIRE(plugin.preFilter(with_prefilter, small).ok());
  CHECK(plugin.filter(with_prefilter, small, n).ok());
  CHECK(scoreOf(plugin, with_prefilter, small, n) == small_score);
}

TEST_CASE("loadaware cache: customised factors count without PreFilter too",
          "[scheduler][loadaware]") {
  FakeHandle handle;
  handle.setMetric(metric("50", "10Gi"));
  auto args = std::make_shared<LoadAwareSchedulingArgs>();
  args->allow_customize_estimation = true;
  LoadAwareScheduling plugin(args, handle, [] { return kNow; });
  const NodeInfo n = nodeInfo(node());
  CycleState state;
  PodInfo p = pod("p", res("16", "32Gi"));
  CHECK(plugin.filter(state, p, n).code() == Code::kUnschedulable);
  // 16 cores at 20 % is 3.2: it fits; at 90 % (or the args' 85 %) it does not.
  p.annotations[std::string(kAnnotationCustomEstimatedScalingFactors)] = R"({"cpu": 20})";
  CHECK(plugin.filter(state, p, n).ok());
  p.annotations[std::string(kAnnotationCustomEstimatedScalingFactors)] = R"({"cpu": 90})";
  CHECK(plugin.filter(state, p, n).code() == Code::kUnschedulable);
}

TEST_CASE("loadaware cache: many nodes, views dropped and rebuilt", "[scheduler][loadaware]") {
  // The fake handle's snapshot is empty, so the views are dropped every few nodes: the answers
  // must not change.
  FakeHandle handle;
  LoadAwareScheduling plugin(std::make_shared<LoadAwareSchedulingArgs>(), handle,
                             [] { return kNow; });
  std::vector<NodeInfo> nodes;
  for (int i = 0; i < 60; ++i) {
    const std::string name = "node-" + std::to_string(i);
    nodes.push_back(
        withMetric(node(name), metric(i % 2 == 0 ? "10" : "60", "10Gi", seconds(10), name)));
  }
  CycleState state;
  REQUIRE(plugin.preFilter(state, incoming()).ok());
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < 60; ++i) {
      CAPTURE(round, i);
      CHECK(plugin.filter(state, incoming(), nodes[i]).ok() == (i % 2 == 0));
    }
  }
}
