#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <map>
#include <numeric>
#include <set>
#include <thread>

#include "catch_expected.h"
#include "framework/plugin_registry.h"
#include "framework/snapshot.h"
#include "koord/core/metrics.h"
#include "runtime/framework.h"
#include "runtime/parallelizer.h"
#include "runtime/schedule_pod.h"
#include "scheduler/fake_cluster.h"
#include "scheduler/fixed_factory.h"

using namespace koord::roles::scheduler;
using config::ExtensionPoint;

namespace {

// Nodes n0..n<count-1>; a node's index is the number after the "n".
Snapshot nodes(int count) {
  std::vector<std::shared_ptr<const NodeInfo>> list;
  for (int i = 0; i < count; ++i) {
    auto node = std::make_shared<Node>();
    node->name = "n" + std::to_string(i);
    auto info = std::make_shared<NodeInfo>();
    info->node = node;
    list.push_back(info);
  }
  return Snapshot(std::move(list));
}

// The snapshot's nodes as PreScore and Score take them.
std::vector<const NodeInfo*> nodeList(const Snapshot& snap) {
  std::vector<const NodeInfo*> list;
  for (const auto& n : snap.nodes())
    list.push_back(n.get());
  return list;
}

int indexOf(const NodeInfo& n) {
  return std::stoi(n.name().substr(1));
}

class PrioritySortFake final : public QueueSortPlugin {
 public:
  std::string_view name() const override { return "Sort"; }
  bool less(const QueuedPodInfo& a, const QueuedPodInfo& b) const override {
    return a.pod->priority > b.pod->priority;
  }
};

// Refuses nodes whose index is not a multiple of `modulo` (an error on node n<error_at>).
class ModuloFilter final : public FilterPlugin, public PreFilterPlugin {
 public:
  int modulo = 2;
  int error_at = -1;
  bool refuse_pod = false;
  mutable std::atomic<int> calls{0};
  std::string_view name() const override { return "Modulo"; }
  Status preFilter(CycleState&, const PodInfo&) override {
    return refuse_pod ? Status::unresolvable("pod refused") : Status::success();
  }
  Status filter(const CycleState&, const PodInfo&, const NodeInfo& node) const override {
    ++calls;
    if (indexOf(node) == error_at)
      return Status::error("broken");
    if (indexOf(node) % modulo != 0)
      return Status::unschedulable("node(s) not a multiple");
    return Status::success();
  }
};

// Raw score = node index; normalised so the highest is 100.
class IndexScore final : public ScorePlugin {
 public:
  std::string_view name() const override { return "Index"; }
  Status score(const CycleState&, const PodInfo&, const NodeInfo& node,
               std::int64_t& out) const override {
    out = indexOf(node);
    return Status::success();
  }
  bool hasNormalizeScore() const override { return true; }
  Status normalizeScore(const CycleState&, const PodInfo&,
                        std::vector<NodeScore>& scores) const override {
    std::int64_t max = 1;
    for (const auto& s : scores)
      max = std::max(max, s.score);
    for (auto& s : scores)
      s.score = s.score * kMaxNodeScore / max;
    return Status::success();
  }
};

class FlatScore final : public ScorePlugin {
 public:
  std::int64_t value = 50;
  int bad_node = -1;  // scores 150 there
  std::string_view name() const override { return "Flat"; }
  Status score(const CycleState&, const PodInfo&, const NodeInfo& node,
               std::int64_t& out) const override {
    out = indexOf(node) == bad_node ? 150 : value;
    return Status::success();
  }
};

class RecordingBinder final : public BindPlugin, public PreBindPlugin {
 public:
  std::string_view name() const override { return "Binder"; }
  std::vector<std::string> log;
  bool skip = false;
  void preBind(std::shared_ptr<CycleState>, std::shared_ptr<const PodInfo> pod,
               const std::string& node, StatusCallback done) override {
    log.push_back("prebind " + pod->name + " " + node);
    done(Status::success());
  }
  void bind(std::shared_ptr<CycleState>, std::shared_ptr<const PodInfo> pod,
            const std::string& node, StatusCallback done) override {
    log.push_back("bind " + pod->name + " " + node);
    done(skip ? Status(Code::kSkip, "not mine") : Status::success());
  }
};

// Answers Skip at PreFilter and PreScore when told to, and counts what the framework still
// calls on it afterwards.
class Skipper final : public PreFilterPlugin,
                      public PreFilterExtensions,
                      public FilterPlugin,
                      public PreScorePlugin,
                      public ScorePlugin {
 public:
  bool skip_filter = true;
  bool skip_score = true;
  mutable std::atomic<int> filters{0};
  mutable std::atomic<int> scores{0};
  mutable int adds = 0;
  mutable int removes = 0;
  mutable int normalizes = 0;
  std::string_view name() const override { return "Skipper"; }
  Status preFilter(CycleState&, const PodInfo&) override {
    return skip_filter ? Status::skip() : Status::success();
  }
  const PreFilterExtensions* preFilterExtensions() const override { return this; }
  Status addPod(CycleState&, const PodInfo&, const PodInfo&, const NodeInfo&) const override {
    ++adds;
    return Status::success();
  }
  Status removePod(CycleState&, const PodInfo&, const PodInfo&, const NodeInfo&) const override {
    ++removes;
    return Status::success();
  }
  Status filter(const CycleState&, const PodInfo&, const NodeInfo&) const override {
    ++filters;
    return Status::unschedulable("refused by Skipper");
  }
  Status preScore(CycleState&, const PodInfo&, const std::vector<const NodeInfo*>&) override {
    return skip_score ? Status::skip() : Status::success();
  }
  Status score(const CycleState&, const PodInfo&, const NodeInfo&,
               std::int64_t& out) const override {
    ++scores;
    out = 7;
    return Status::success();
  }
  bool hasNormalizeScore() const override { return true; }
  Status normalizeScore(const CycleState&, const PodInfo&, std::vector<NodeScore>&) const override {
    ++normalizes;
    return Status::success();
  }
};

// Listed at Filter and Score only (as 1.20-era profiles list the volume plugins): tells the
// framework from the pod alone when it has nothing to do, and counts the calls it still gets.
class Hinted final : public FilterPlugin, public ScorePlugin {
 public:
  bool passes_every_node = true;
  bool scores_alike = true;
  mutable std::atomic<int> filters{0};
  mutable std::atomic<int> scores{0};
  std::string_view name() const override { return "Hinted"; }
  bool passesEveryNode(const PodInfo&) const override { return passes_every_node; }
  Status filter(const CycleState&, const PodInfo&, const NodeInfo&) const override {
    ++filters;
    return Status::unschedulable("refused by Hinted");
  }
  bool scoresEveryNodeAlike(const PodInfo&) const override { return scores_alike; }
  Status score(const CycleState&, const PodInfo&, const NodeInfo&,
               std::int64_t& out) const override {
    ++scores;
    out = 9;
    return Status::success();
  }
};

struct Fixture {
  std::shared_ptr<ModuloFilter> filter = std::make_shared<ModuloFilter>();
  std::shared_ptr<RecordingBinder> binder = std::make_shared<RecordingBinder>();
  std::shared_ptr<Skipper> skipper = std::make_shared<Skipper>();
  std::shared_ptr<FlatScore> flat = std::make_shared<FlatScore>();
  std::shared_ptr<Hinted> hinted = std::make_shared<Hinted>();
  PluginRegistry registry;
  testkit::FakeCluster cluster;  // nominations by node name
  Parallelizer parallelizer{4};

  Fixture() {
    using testkit::fixedFactory;
    registry.add("Sort", fixedFactory(std::make_shared<PrioritySortFake>()));
    registry.add("Modulo", fixedFactory(filter));
    registry.add("Index", fixedFactory(std::make_shared<IndexScore>()));
    registry.add("Flat", fixedFactory(flat));
    registry.add("Binder", fixedFactory(binder));
    registry.add("Skipper", fixedFactory(skipper));
    registry.add("Hinted", fixedFactory(hinted));
  }

  /// The usual profile with Skipper at PreFilter, Filter, PreScore and Score (weight 2).
  config::Profile withSkipper(std::vector<std::string> scores) const {
    config::Profile p = profile(std::move(scores));
    p.merged[ExtensionPoint::kPreFilter].enabled.push_back({"Skipper", 0, ""});
    p.merged[ExtensionPoint::kFilter].enabled.push_back({"Skipper", 0, ""});
    p.merged[ExtensionPoint::kPreScore].enabled.push_back({"Skipper", 0, ""});
    p.merged[ExtensionPoint::kScore].enabled.push_back({"Skipper", 2, ""});
    return p;
  }

  config::Profile profile(std::vector<std::string> scores) const {
    config::Profile p;
    p.scheduler_name = "koord-scheduler";
    auto enable = [&](ExtensionPoint point, std::string name, std::int32_t weight = 0) {
      p.merged[point].enabled.push_back({std::move(name), weight, ""});
    };
    enable(ExtensionPoint::kQueueSort, "Sort");
    enable(ExtensionPoint::kPreFilter, "Modulo");
    enable(ExtensionPoint::kFilter, "Modulo");
    for (auto& s : scores)
      enable(ExtensionPoint::kScore, s, 2);
    enable(ExtensionPoint::kPreBind, "Binder");
    enable(ExtensionPoint::kBind, "Binder");
    return p;
  }
};

}  // namespace

TEST_CASE("numFeasibleNodesToFind follows kube-scheduler's adaptive percentage") {
  CHECK(numFeasibleNodesToFind(50, 0) == 50);
  CHECK(numFeasibleNodesToFind(100, 0) == 100);
  CHECK(numFeasibleNodesToFind(1000, 0) == 420);   // 50 - 8 = 42 %
  CHECK(numFeasibleNodesToFind(5000, 0) == 500);   // 50 - 40 = 10 %
  CHECK(numFeasibleNodesToFind(10000, 0) == 500);  // below 5 %: 5 %
  CHECK(numFeasibleNodesToFind(1000, 30) == 300);
  CHECK(numFeasibleNodesToFind(1000, 5) == 100);  // never below 100
  CHECK(numFeasibleNodesToFind(200, 100) == 200);
}

TEST_CASE("parallelFor visits every index once, and stops handing out work when told") {
  Parallelizer p(8);
  std::vector<std::atomic<int>> seen(1000);
  p.parallelFor(seen.size(), [&](std::size_t i) { ++seen[i]; });
  for (auto& s : seen)
    CHECK(s.load() == 1);
  std::atomic<bool> stop{false};
  std::atomic<int> calls{0};
  p.parallelFor(
      10000,
      [&](std::size_t) {
        if (++calls >= 10)
          stop = true;
      },
      &stop);
  // At most one chunk (sqrt(10000) = 100) per worker after the stop.
  CHECK(calls.load() < 10 + 100 * p.workers());
  p.parallelFor(0, [&](std::size_t) { FAIL("called for an empty range"); });
}

TEST_CASE("forChunks covers every index once in whole chunks job after job") {
  Parallelizer p(4);
  std::vector<std::atomic<int>> seen(1000);
  std::atomic<int> empty_chunks{0};  // Catch's assertions are for the test's own thread
  for (int round = 0; round < 200; ++round) {
    std::atomic<std::size_t> sum{0};
    p.forChunks(seen.size(), [&](std::size_t begin, std::size_t end) {
      if (begin >= end)
        ++empty_chunks;
      for (std::size_t i = begin; i < end; ++i) {
        ++seen[i];
        sum += i;
      }
    });
    REQUIRE(sum.load() == 999 * 1000 / 2);
    // Now and then a pause longer than the workers' spin, so that they go to sleep and the
    // next job has to wake them.
    if (round % 50 == 49)
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  CHECK(empty_chunks.load() == 0);
  for (auto& s : seen)
    CHECK(s.load() == 200);
}

TEST_CASE("a pod goes to the best-scoring node that passes every filter") {
  Fixture f;
  auto fw = Framework::create(f.profile({"Index"}), f.registry, f.cluster, f.parallelizer);
  REQUIRE(fw);
  auto snap = nodes(10);
  PodScheduler sched(**fw, 0, 1);
  CycleState state;
  PodInfo pod;
  pod.name = "p";
  auto out = sched.schedule(state, pod, snap);
  REQUIRE(std::holds_alternative<ScheduleResult>(out));
  const auto& r = std::get<ScheduleResult>(out);
  CHECK(r.node == "n8");
  CHECK(r.feasible_nodes == 5);
  CHECK(r.evaluated_nodes == 10);
}

TEST_CASE("no fitting node: a FitError counting each reason, as FailedScheduling shows it") {
  Fixture f;
  f.filter->modulo = 100;  // only n0 could fit
  auto fw = Framework::create(f.profile({"Index"}), f.registry, f.cluster, f.parallelizer);
  REQUIRE(fw);
  auto snap = nodes(4);
  PodScheduler sched(**fw, 0, 1);
  CycleState state;
  PodInfo pod;
  auto one = sched.schedule(state, pod, snap);
  REQUIRE(std::holds_alternative<ScheduleResult>(one));
  CHECK(std::get<ScheduleResult>(one).node == "n0");  // the only feasible node: no scoring

  auto snap3 = Snapshot([&] {
    std::vector<std::shared_ptr<const NodeInfo>> v;
    for (const auto& n : snap.nodes())
      if (n->name() != "n0")
        v.push_back(n);
    return v;
  }());
  auto none = sched.schedule(state, pod, snap3);
  REQUIRE(std::holds_alternative<FitError>(none));
  CHECK(std::get<FitError>(none).message() == "0/3 nodes are available: 3 node(s) not a multiple.");

  f.filter->refuse_pod = true;
  auto refused = sched.schedule(state, pod, snap3);
  REQUIRE(std::holds_alternative<FitError>(refused));
  CHECK(std::get<FitError>(refused).message() == "0/3 nodes are available: 3 pod refused.");
}

TEST_CASE("a filter error ends the cycle with an error, not a FitError") {
  Fixture f;
  f.filter->error_at = 4;
  auto fw = Framework::create(f.profile({}), f.registry, f.cluster, f.parallelizer);
  REQUIRE(fw);
  auto snap = nodes(6);
  PodScheduler sched(**fw, 0, 1);
  CycleState state;
  PodInfo pod;
  auto out = sched.schedule(state, pod, snap);
  REQUIRE(std::holds_alternative<Status>(out));
  CHECK(std::get<Status>(out).code() == Code::kError);
  CHECK(std::get<Status>(out).plugin() == "Modulo");
}

TEST_CASE("the filter pass stops at the wanted count and the next pass starts after it") {
  Fixture f;
  f.filter->modulo = 1;  // every node fits
  auto fw = Framework::create(f.profile({"Flat"}), f.registry, f.cluster, f.parallelizer);
  REQUIRE(fw);
  auto snap = nodes(1000);
  (*fw)->setSnapshot(&snap);
  CycleState state;
  PodInfo pod;
  auto out = (*fw)->findNodesThatPassFilters(state, pod, 990, 420);
  CHECK(out.feasible.size() == 420);
  CHECK(out.feasible.front()->name() == "n990");  // from the start index, wrapping
  CHECK(out.feasible[10]->name() == "n0");
  CHECK(out.processed >= 420);
  CHECK(f.filter->calls.load() < 1000);
}

TEST_CASE("the filter pass keeps the first fitting nodes from the start whatever the threads do") {
  Fixture f;
  f.filter->modulo = 3;
  auto fw = Framework::create(f.profile({}), f.registry, f.cluster, f.parallelizer);
  REQUIRE(fw);
  auto snap = nodes(3000);
  (*fw)->setSnapshot(&snap);
  CycleState state;
  PodInfo pod;
  int mismatches = 0;
  for (int round = 0; round < 100; ++round) {
    const std::size_t start = static_cast<std::size_t>(round) * 37 % 3000;
    auto out = (*fw)->findNodesThatPassFilters(state, pod, start, 200);
    REQUIRE(out.feasible.size() == 200);
    // What one thread going node by node would keep.
    std::size_t at = start, kept = 0, looked = 0;
    while (kept < 200) {
      const std::size_t i = at % 3000;
      ++looked;
      if (i % 3 == 0 && out.feasible[kept++]->name() != "n" + std::to_string(i))
        ++mismatches;
      ++at;
    }
    if (out.processed != looked)
      ++mismatches;
  }
  CHECK(mismatches == 0);
}

TEST_CASE("nodes filtered past the wanted-th fit change nothing") {
  Fixture f;
  f.filter->error_at = 7;  // odd nodes fail; n7 would be an error
  auto fw = Framework::create(f.profile({}), f.registry, f.cluster, f.parallelizer);
  REQUIRE(fw);
  auto snap = nodes(20);
  (*fw)->setSnapshot(&snap);
  CycleState state;
  PodInfo pod;
  auto out = (*fw)->findNodesThatPassFilters(state, pod, 0, 3);
  CHECK(out.error.ok());  // n7 may have been looked at, but after the pass was complete
  REQUIRE(out.feasible.size() == 3);
  CHECK(out.feasible[2]->name() == "n4");
  CHECK(out.processed == 5);  // the next pass starts at n5
  CHECK(out.failed.size() == 2);
  CHECK(out.failed.count("n1") == 1);
  CHECK(out.failed.count("n3") == 1);
  CHECK(out.failed.at("n1").plugin() == "Modulo");

  // Started past the wanted nodes, the error is reached first and ends the pass.
  auto err = (*fw)->findNodesThatPassFilters(state, pod, 5, 3);
  CHECK(err.error.code() == Code::kError);
  CHECK(err.error.plugin() == "Modulo");
  // A second pass over the same nodes sees the same (the scratch was cleared).
  auto again = (*fw)->findNodesThatPassFilters(state, pod, 0, 3);
  CHECK(again.processed == 5);
  CHECK(again.feasible.size() == 3);
}

TEST_CASE("weights multiply normalised scores; ties are broken among the best only") {
  Fixture f;
  f.filter->modulo = 1;
  auto fw = Framework::create(f.profile({"Index", "Flat"}), f.registry, f.cluster, f.parallelizer);
  REQUIRE(fw);
  auto snap = nodes(5);
  (*fw)->setSnapshot(&snap);
  CycleState state;
  PodInfo pod;
  const auto list = nodeList(snap);
  auto scores = (*fw)->runScorePlugins(state, pod, list);
  REQUIRE(scores);
  // Index: 0, 25, 50, 75, 100 (x2); Flat: 50 (x2).
  CHECK((*scores)[0].score == 100);
  CHECK((*scores)[4].score == 300);

  auto flat = Framework::create(f.profile({"Flat"}), f.registry, f.cluster, f.parallelizer);
  REQUIRE(flat);
  PodScheduler sched(**flat, 100, 7);
  std::set<std::string> chosen;
  for (int i = 0; i < 200; ++i) {
    auto out = sched.schedule(state, pod, snap);
    REQUIRE(std::holds_alternative<ScheduleResult>(out));
    chosen.insert(std::get<ScheduleResult>(out).node);
  }
  CHECK(chosen.size() == 5);  // every node tied: each gets picked
}

TEST_CASE("profiles are checked: a plugin at a point it does not implement, no bind plugin") {
  Fixture f;
  auto p = f.profile({});
  p.merged[ExtensionPoint::kScore].enabled.push_back({"Modulo", 1, ""});
  auto bad = Framework::create(p, f.registry, f.cluster, f.parallelizer);
  REQUIRE_FALSE(bad);
  CHECK_THAT(bad.error().message, Catch::Contains("Modulo"));

  auto nobind = f.profile({});
  nobind.merged[ExtensionPoint::kBind].enabled.clear();
  auto err = Framework::create(nobind, f.registry, f.cluster, f.parallelizer);
  REQUIRE_FALSE(err);

  auto unknown = f.profile({});
  unknown.merged[ExtensionPoint::kFilter].enabled.push_back({"Nope", 0, ""});
  auto e2 = Framework::create(unknown, f.registry, f.cluster, f.parallelizer);
  REQUIRE_FALSE(e2);
  CHECK_THAT(e2.error().message, Catch::Contains("unknown plugin \"Nope\""));
}

TEST_CASE("PreBind then Bind, a skipping binder passes the pod on") {
  Fixture f;
  auto fw = Framework::create(f.profile({}), f.registry, f.cluster, f.parallelizer);
  REQUIRE(fw);
  auto pod = std::make_shared<PodInfo>();
  pod->name = "p";
  Status result = Status::error("not called");
  (*fw)->runPreBindAndBind(std::make_shared<CycleState>(), pod, "n1",
                           [&](Status s) { result = std::move(s); });
  CHECK(result.ok());
  CHECK(f.binder->log == std::vector<std::string>{"prebind p n1", "bind p n1"});
  f.binder->skip = true;
  (*fw)->runPreBindAndBind(std::make_shared<CycleState>(), pod, "n1",
                           [&](Status s) { result = std::move(s); });
  CHECK(result.code() == Code::kError);
}

TEST_CASE("a PreFilter answering Skip: its Filter and AddPod/RemovePod do not run") {
  Fixture f;
  f.filter->modulo = 1;
  auto fw = Framework::create(f.withSkipper({}), f.registry, f.cluster, f.parallelizer);
  REQUIRE(fw);
  auto snap = nodes(6);
  (*fw)->setSnapshot(&snap);
  PodInfo pod;
  pod.name = "p";
  const NodeInfo& n0 = *snap.nodes()[0];

  CycleState state;
  REQUIRE((*fw)->runPreFilterPlugins(state, pod).ok());  // Skip is not a failure
  CHECK(state.skip_filter_plugins != 0);
  auto out = (*fw)->findNodesThatPassFilters(state, pod, 0, 6);
  CHECK(out.feasible.size() == 6);  // Skipper would refuse every node
  CHECK((*fw)->runFilterPlugins(state, pod, n0).ok());
  CHECK((*fw)->runPreFilterAddPod(state, pod, pod, n0).ok());
  CHECK((*fw)->runPreFilterRemovePod(state, pod, pod, n0).ok());
  CHECK(f.skipper->filters.load() == 0);
  CHECK(f.skipper->adds == 0);
  CHECK(f.skipper->removes == 0);

  // The skip set travels with the clone preemption and nominated pods work on.
  CycleState copy = state.clone();
  CHECK((*fw)->runFilterPlugins(copy, pod, n0).ok());
  CHECK((*fw)->runPreFilterAddPod(copy, pod, pod, n0).ok());
  CHECK(f.skipper->filters.load() == 0);
  CHECK(f.skipper->adds == 0);

  // A nominated pod on n0 goes through AddPod: not to the skipped plugin.
  auto nominated = std::make_shared<PodInfo>();
  nominated->name = "nominated";
  nominated->uid = "nominated";
  nominated->priority = 10;
  f.cluster.nominated["n0"] = {nominated};
  CHECK((*fw)->runFilterPluginsWithNominatedPods(state, pod, n0).ok());
  CHECK(f.skipper->adds == 0);
  CHECK(f.skipper->filters.load() == 0);

  // The next cycle starts a fresh skip set: without Skip the plugin runs everywhere.
  f.skipper->skip_filter = false;
  REQUIRE((*fw)->runPreFilterPlugins(state, pod).ok());
  CHECK(state.skip_filter_plugins == 0);
  CHECK((*fw)->runFilterPluginsWithNominatedPods(state, pod, n0).code() == Code::kUnschedulable);
  CHECK(f.skipper->adds == 1);
  CHECK(f.skipper->filters.load() == 1);
  CHECK((*fw)->runPreFilterRemovePod(state, pod, pod, n0).ok());
  CHECK(f.skipper->removes == 1);
}

TEST_CASE("a PreScore answering Skip: its Score and NormalizeScore do not run") {
  Fixture f;
  f.filter->modulo = 1;
  auto fw = Framework::create(f.withSkipper({"Index"}), f.registry, f.cluster, f.parallelizer);
  REQUIRE(fw);
  auto snap = nodes(5);
  (*fw)->setSnapshot(&snap);
  PodInfo pod;
  const auto list = nodeList(snap);

  CycleState state;
  REQUIRE((*fw)->runPreScorePlugins(state, pod, list).ok());
  CHECK(state.skip_score_plugins != 0);
  auto skipped = (*fw)->runScorePlugins(state, pod, list);
  REQUIRE(skipped);
  CHECK(f.skipper->scores.load() == 0);
  CHECK(f.skipper->normalizes == 0);
  // Index alone (x2): 0, 50, 100, 150, 200; Skipper's contribution is left out.
  CHECK((*skipped)[1].score == 50);
  CHECK((*skipped)[4].score == 200);

  CycleState copy = state.clone();
  REQUIRE((*fw)->runScorePlugins(copy, pod, list));
  CHECK(f.skipper->scores.load() == 0);

  f.skipper->skip_score = false;
  REQUIRE((*fw)->runPreScorePlugins(state, pod, list).ok());
  CHECK(state.skip_score_plugins == 0);
  auto scored = (*fw)->runScorePlugins(state, pod, list);
  REQUIRE(scored);
  CHECK(f.skipper->scores.load() == 5);
  CHECK(f.skipper->normalizes == 1);
  CHECK((*scored)[1].score == 50 + 7 * 2);
}

TEST_CASE("a plugin listed at Filter and Score only is skipped when it says so for the pod") {
  Fixture f;
  f.filter->modulo = 1;
  config::Profile profile = f.profile({"Index"});
  profile.merged[ExtensionPoint::kFilter].enabled.push_back({"Hinted", 0, ""});
  profile.merged[ExtensionPoint::kScore].enabled.push_back({"Hinted", 3, ""});
  auto fw = Framework::create(profile, f.registry, f.cluster, f.parallelizer);
  REQUIRE(fw);
  auto snap = nodes(4);
  (*fw)->setSnapshot(&snap);
  PodInfo pod;
  const auto list = nodeList(snap);

  CycleState state;
  REQUIRE((*fw)->runPreFilterPlugins(state, pod).ok());
  CHECK(state.skip_filter_plugins != 0);
  CHECK((*fw)->findNodesThatPassFilters(state, pod, 0, 4).feasible.size() == 4);
  CHECK(f.hinted->filters.load() == 0);
  REQUIRE((*fw)->runPreScorePlugins(state, pod, list).ok());
  auto skipped = (*fw)->runScorePlugins(state, pod, list);
  REQUIRE(skipped);
  CHECK(f.hinted->scores.load() == 0);
  CHECK((*skipped)[3].score == 200);  // Index alone, normalised, x2

  // A pod it has something to check: the plugin runs on every node as 1.20 runs it.
  f.hinted->passes_every_node = false;
  f.hinted->scores_alike = false;
  REQUIRE((*fw)->runPreFilterPlugins(state, pod).ok());
  CHECK(state.skip_filter_plugins == 0);
  CHECK((*fw)->findNodesThatPassFilters(state, pod, 0, 4).feasible.empty());
  CHECK(f.hinted->filters.load() == 4);
  REQUIRE((*fw)->runPreScorePlugins(state, pod, list).ok());
  CHECK(state.skip_score_plugins == 0);
  auto scored = (*fw)->runScorePlugins(state, pod, list);
  REQUIRE(scored);
  CHECK(f.hinted->scores.load() == 4);
  CHECK((*scored)[3].score == (*skipped)[3].score + 9 * 3);
}

TEST_CASE("every Score plugin skipped: every node ties at 0") {
  Fixture f;
  f.filter->modulo = 1;
  auto fw = Framework::create(f.withSkipper({}), f.registry, f.cluster, f.parallelizer);
  REQUIRE(fw);
  auto snap = nodes(3);
  (*fw)->setSnapshot(&snap);
  PodInfo pod;
  const auto list = nodeList(snap);
  CycleState state;
  REQUIRE((*fw)->runPreScorePlugins(state, pod, list).ok());
  auto scores = (*fw)->runScorePlugins(state, pod, list);
  REQUIRE(scores);
  REQUIRE(scores->size() == 3);
  for (const auto& s : *scores)
    CHECK(s.score == 0);
  CHECK((*scores)[2].name == "n2");
}

TEST_CASE("a score out of 0 to 100 is an error naming the first plugin and node") {
  Fixture f;
  f.filter->modulo = 1;
  f.flat->bad_node = 3;
  auto fw = Framework::create(f.profile({"Index", "Flat"}), f.registry, f.cluster, f.parallelizer);
  REQUIRE(fw);
  auto snap = nodes(200);
  (*fw)->setSnapshot(&snap);
  PodInfo pod;
  const auto list = nodeList(snap);
  CycleState state;
  auto scores = (*fw)->runScorePlugins(state, pod, list);
  REQUIRE_FALSE(scores);
  CHECK(scores.error().message ==
        "plugin Flat returned an invalid score 150 for node n3: must be in [0, 100]");
  f.flat->bad_node = -1;
  auto fine = (*fw)->runScorePlugins(state, pod, list);
  REQUIRE(fine);
  CHECK((*fine)[199].score == 200 + 100);
}

TEST_CASE("framework metrics: each extension point per cycle, each plugin in sampled cycles") {
  Fixture f;
  koord::metrics::Registry registry;
  auto fw =
      Framework::create(f.profile({"Index"}), f.registry, f.cluster, f.parallelizer, &registry);
  REQUIRE(fw);
  auto snap = nodes(10);
  PodScheduler sched(**fw, 0, 1);
  PodInfo pod;
  pod.name = "p";
  // Upstream's default samples a tenth of the cycles: the first nine time no plugin.
  for (int i = 0; i < 9; ++i) {
    CycleState state;
    REQUIRE(std::holds_alternative<ScheduleResult>(sched.schedule(state, pod, snap)));
  }
  auto count = [&](std::string_view series) {
    const std::string text = registry.render();
    const std::string line = std::string(series) + " ";
    const auto at = text.find(line);
    return at == std::string::npos
               ? std::string("absent")
               : text.substr(at + line.size(), text.find('\n', at) - at - line.size());
  };
  const std::string filter_point =
      R"(scheduler_framework_extension_point_duration_seconds_count{extension_point="Filter",)"
      R"(status="Success",profile="koord-scheduler"})";
  const std::string modulo_filter =
      R"(scheduler_plugin_execution_duration_seconds_count{plugin="Modulo",)"
      R"(extension_point="Filter",status="Success"})";
  CHECK(count(filter_point) == "9");
  CHECK(count(modulo_filter) == "absent");
  CycleState tenth;
  REQUIRE(std::holds_alternative<ScheduleResult>(sched.schedule(tenth, pod, snap)));
  CHECK(tenth.record_plugin_metrics);
  CHECK(count(filter_point) == "10");
  // Every node was filtered once; those refused count under their status.
  CHECK(count(modulo_filter) == "5");
  CHECK(count(R"(scheduler_plugin_execution_duration_seconds_count{plugin="Modulo",)"
              R"(extension_point="Filter",status="Unschedulable"})") == "5");
  CHECK(count(R"(scheduler_plugin_execution_duration_seconds_count{plugin="Index",)"
              R"(extension_point="Score",status="Success"})") == "5");
  CHECK(count(R"(scheduler_plugin_execution_duration_seconds_count{plugin="Modulo",)"
              R"(extension_point="PreFilter",status="Success"})") == "1");
  CHECK(count(R"(scheduler_framework_extension_point_duration_seconds_count{extension_point=)"
              R"("Score",status="Success",profile="koord-scheduler"})") == "10");

  // Every cycle timed: PreBind and Bind as well, where they end.
  (*fw)->setPluginMetricsSamplePercent(100);
  auto state = std::make_shared<CycleState>();
  REQUIRE(std::holds_alternative<ScheduleResult>(sched.schedule(*state, pod, snap)));
  auto bound = std::make_shared<PodInfo>(pod);
  Status result = Status::error("not called");
  (*fw)->runPreBindAndBind(state, bound, "n8", [&](Status s) { result = std::move(s); });
  REQUIRE(result.ok());
  CHECK(count(R"(scheduler_plugin_execution_duration_seconds_count{plugin="Binder",)"
              R"(extension_point="Bind",status="Success"})") == "1");
  CHECK(count(R"(scheduler_framework_extension_point_duration_seconds_count{extension_point=)"
              R"("PreBind",status="Success",profile="koord-scheduler"})") == "1");
  CHECK(count(R"(scheduler_framework_extension_point_duration_seconds_count{extension_point=)"
              R"("Bind",status="Success",profile="koord-scheduler"})") == "1");
}
