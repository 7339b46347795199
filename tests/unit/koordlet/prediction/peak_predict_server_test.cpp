// The peak predict server: which models a training round feeds and with what, model expiry,
// checkpoint steps (interval and per-step cap), and restore after a restart, including refused
// checkpoints that leave the models empty and say so.
#include "prediction/peak_predict_server.h"

#include <catch2/catch.hpp>

#include "catch_expected.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "log_lines.h"
#include "metriccache/metric_cache.h"
#include "prediction/prediction_runner.h"
#include "temp_tree.h"

using namespace koord::roles::koordlet;
using namespace koord::roles::koordlet::prediction;
using koord::apis::PriorityClass;
using koord::testing::LogLines;
using koord::testing::TempTree;
using namespace std::chrono_literals;

namespace {

const TimePoint kT0 = TimePoint(std::chrono::seconds(1'700'000'000));
constexpr double kGi = 1024.0 * 1024 * 1024;

PredictionConfig configIn(const TempTree& tree) {
  PredictionConfig c;
  c.checkpoint_dir = tree.path("ckpt");
  return c;
}

// What a model trained on one repeated value predicts: the end of its bucket.
std::int64_t cpuPeak(double cores) {
  const auto& b = cpuBuckets();
  return static_cast<std::int64_t>(b.bucketStart(b.findBucket(cores) + 1) * 1000.0);
}
std::int64_t memoryPeak(double bytes) {
  const auto& b = memoryBuckets();
  return static_cast<std::int64_t>(b.bucketStart(b.findBucket(bytes) + 1));
}

TrainingRound round() {
  TrainingRound r;
  r.pods = {{"a", PriorityClass::kProd, {1.0, 1 * kGi}},
            {"b", PriorityClass::kProd, {0.5, 2 * kGi}},
            {"c", PriorityClass::kBatch, {2.0, 4 * kGi}},
            {"d", PriorityClass::kNone, {0.25, 0.5 * kGi}}};
  r.node_cpu = 6.0;
  r.node_memory = 16 * kGi;
  return r;
}

std::set<std::string> keysOf(const PeakPredictServer& s) {
  auto keys = s.modelKeys();
  return {keys.begin(), keys.end()};
}

}  // namespace

TEST_CASE("prediction server: a round feeds pods, priority classes, node and sys",
          "[prediction][server]") {
  TempTree tree("koord-prediction");
  PeakPredictServer s(configIn(tree));
  CHECK_FALSE(s.hasSynced());
  CHECK_FALSE(s.prediction("a").has_value());
  for (int i = 0; i < 3; ++i)
    s.train(round(), kT0 + std::chrono::minutes(i));
  CHECK(s.hasSynced());
  CHECK(keysOf(s) == std::set<std::string>{"a", "b", "c", "d", "__node__", "__node-koord-prod__",
                                           "__node-koord-mid__", "__node-koord-batch__",
                                           "__node-koord-free__", "__node-__", "__node-sys__"});
  struct Row {
    std::string key;
    double cpu;
    double memory;
  };
  const std::vector<Row> rows = {
      {"a", 1.0, 1 * kGi},
      {"c", 2.0, 4 * kGi},
      {"__node__", 6.0, 16 * kGi},
      {"__node-koord-prod__", 1.5, 3 * kGi},
      {"__node-koord-batch__", 2.0, 4 * kGi},
      {"__node-__", 0.25, 0.5 * kGi},
      {"__node-koord-mid__", 0, 0},
      // node - all pods.
      {"__node-sys__", 6.0 - 3.75, (16 - 7.5) * kGi},
  };
  for (const auto& row : rows) {
    INFO(row.key);
    auto p = s.prediction(row.key);
    REQUIRE(p);
    CHECK(p->p95.cpu_milli == cpuPeak(row.cpu));
    CHECK(p->p98.memory_bytes == memoryPeak(row.memory));
    CHECK(p->max == p->p60);
  }
  // One hand-checked figure: 1 core falls in bucket 22, which ends at 1.0357 cores.
  CHECK(s.prediction("a")->p95.cpu_milli == 1035);
}

TEST_CASE("prediction server: without a node usage there is no node model and sys takes 0",
          "[prediction][server]") {
  TempTree tree("koord-prediction");
  PeakPredictServer s(configIn(tree));
  TrainingRound r = round();
  r.node_cpu.reset();
  s.train(r, kT0);
  CHECK_FALSE(s.prediction("__node__").has_value());
  auto sys = s.prediction("__node-sys__");
  REQUIRE(sys);
  CHECK(sys->p95.cpu_milli == cpuPeak(0));
  // Memory was known: node - pods.
  CHECK(sys->p98.memory_bytes == memoryPeak((16 - 7.5) * kGi));
  // No pods at all: sys is the node's usage.
  PeakPredictServer empty(configIn(tree));
  TrainingRound node_only;
  node_only.node_cpu = 3.0;
  node_only.node_memory = 2 * kGi;
  empty.train(node_only, kT0);
  CHECK(empty.prediction("__node-sys__")->p95.cpu_milli == cpuPeak(3.0));
}

TEST_CASE("prediction server: models not trained for the expiration are dropped with their files",
          "[prediction][server]") {
  TempTree tree("koord-prediction");
  PredictionConfig config = configIn(tree);
  PeakPredictServer s(config);
  // Nothing before the first round.
  CHECK(s.collectGarbage(kT0 + 24h).empty());
  CHECK(s.checkpoint(kT0 + 24h).written == 0);

  s.train(round(), kT0);
  REQUIRE(s.checkpoint(kT0).written == 11);
  CHECK(std::filesystem::exists(tree.path("ckpt/a.ckpt")));
  TrainingRound later = round();
  later.pods.erase(later.pods.begin());  // pod a is gone
  s.train(later, kT0 + 20min);

  CHECK(s.collectGarbage(kT0 + 30min).empty());  // exactly the expiration: kept
  auto dropped = s.collectGarbage(kT0 + 30min + 1s);
  CHECK(dropped == std::vector<std::string>{"a"});
  CHECK_FALSE(s.prediction("a").has_value());
  CHECK(s.prediction("b").has_value());
  CHECK_FALSE(std::filesystem::exists(tree.path("ckpt/a.ckpt")));
  CHECK(std::filesystem::exists(tree.path("ckpt/b.ckpt")));
}

TEST_CASE("prediction server: checkpoint steps take the longest-waiting models, a few at a time",
          "[prediction][server]") {
  TempTree tree("koord-prediction");
  PredictionConfig config = configIn(tree);
  config.checkpoint_max_per_step = 4;
  config.checkpoint_interval = 10min;
  PeakPredictServer s(config);
  s.train(round(), kT0);  // 11 models
  CHECK(s.checkpoint(kT0).written == 4);
  CHECK(s.checkpoint(kT0 + 1min).written == 4);
  CHECK(s.checkpoint(kT0 + 2min).written == 3);
  // All checkpointed less than the interval ago.
  CHECK(s.checkpoint(kT0 + 3min).written == 0);
  CHECK(s.checkpoint(kT0 + 9min).written == 0);
  // The first four are due again first.
  CHECK(s.checkpoint(kT0 + 10min).written == 4);
  CHECK(s.checkpoint(kT0 + 10min).written == 0);
  std::size_t files = 0;
  for (const auto& e : std::filesystem::directory_iterator(tree.path("ckpt"))) {
    (void)e;
    ++files;
  }
  CHECK(files == 11);

  // A directory that cannot be created: every due model fails, and counts as checkpointed.
  tree.write("blocked", "a file, not a directory");
  PredictionConfig blocked = configIn(tree);
  blocked.checkpoint_dir = tree.path("blocked/ckpt");
  PeakPredictServer b(blocked);
  b.train(round(), kT0);
  auto report = b.checkpoint(kT0);
  CHECK(report.written == 0);
  CHECK(report.failed == 11);
  CHECK_THAT(report.first_error, Catch::Contains("cannot create"));
  CHECK(b.checkpoint(kT0 + 1min).failed == 0);
}

TEST_CASE("prediction server: a restart restores known models and removes the others",
          "[prediction][server]") {
  TempTree tree("koord-prediction");
  PredictionConfig config = configIn(tree);
  config.checkpoint_max_per_step = 100;
  {
    PeakPredictServer before(config);
    for (int i = 0; i < 30; ++i) {
      TrainingRound r = round();
      r.pods[0].usage.cpu = 0.5 + 0.3 * (i % 3);
      before.train(r, kT0 + std::chrono::minutes(i));
    }
    REQUIRE(before.checkpoint(kT0 + 30min).written == 11);
    PeakPredictServer after(config);
    // Pod c is gone; the node is not known yet either.
    RestoreReport report = after.restore({"a", "b", "d"}, false, kT0 + 40min);
    CHECK(report.restored == 9);  // a, b, d, sys and five priority items
    CHECK(report.unknown == 2);   // c and __node__
    CHECK(report.refused.empty());
    CHECK_FALSE(std::filesystem::exists(tree.path("ckpt/c.ckpt")));
    CHECK_FALSE(std::filesystem::exists(tree.path("ckpt/__node__.ckpt")));
    CHECK(std::filesystem::exists(tree.path("ckpt/a.ckpt")));
    for (const std::string key : {"a", "b", "__node-koord-prod__", "__node-sys__"}) {
      INFO(key);
      auto was = before.prediction(key);
      auto now = after.prediction(key);
      REQUIRE(now);
      CHECK(now->p60 == was->p60);
      CHECK(now->p95 == was->p95);
      CHECK(now->p98 == was->p98);
      CHECK(now->max == was->max);
    }
    // The restored models expire from their own last update unless trained again.
    after.train(TrainingRound{}, kT0 + 40min);
    auto dropped = after.collectGarbage(kT0 + 61min);
    CHECK(std::find(dropped.begin(), dropped.end(), "a") != dropped.end());
    CHECK(std::find(dropped.begin(), dropped.end(), "__node-sys__") == dropped.end());
  }
}

TEST_CASE("prediction server: refused checkpoints leave the models empty and are removed",
          "[prediction][server]") {
  TempTree tree("koord-prediction");
  PredictionConfig config = configIn(tree);
  {
    PeakPredictServer writer(config);
    writer.train(round(), kT0);
    REQUIRE(writer.checkpoint(kT0).written == 11);
  }
  std::string good = tree.read("ckpt/a.ckpt");
  REQUIRE_FALSE(good.empty());
  auto swap = [](std::string text, const std::string& from, const std::string& to) {
    auto at = text.find(from);
    REQUIRE(at != std::string::npos);
    return text.replace(at, from.size(), to);
  };
  tree.write("ckpt/a.ckpt", good.substr(0, 40));
  tree.write("ckpt/b.ckpt", std::string(kMaxModelCheckpointBytes + 1, ' '));
  tree.write("ckpt/d.ckpt", swap(swap(good, "\"version\":1", "\"version\":0"), "\"a\"", "\"d\""));
  // Restored at a time before the histograms' reference: their samples would weigh nothing.
  PeakPredictServer early(config);
  RestoreReport report = early.restore({"a", "b", "d"}, true, kT0 - 3 * 24h);
  CHECK(report.restored == 0);
  CHECK(early.modelCount() == 0);
  // a, b, d unreadable; the node, sys and the five priority items too far ahead; c unknown.
  CHECK(report.refused.size() == 10);
  CHECK(report.unknown == 1);
  CHECK_FALSE(std::filesystem::exists(tree.path("ckpt/a.ckpt")));
  CHECK_FALSE(std::filesystem::exists(tree.path("ckpt/b.ckpt")));
  CHECK_FALSE(std::filesystem::exists(tree.path("ckpt/d.ckpt")));
  CHECK_FALSE(std::filesystem::exists(tree.path("ckpt/__node-sys__.ckpt")));
}

TEST_CASE("prediction runner: waits for the states, restores once, trains from the cache",
          "[prediction][runner]") {
  TempTree tree("koord-prediction");
  PredictionConfig config = configIn(tree);
  tree.write("ckpt/pod-a.ckpt", "{\"version\":7}");
  PeakPredictServer server(config);
  metriccache::MetricCache cache;
  const auto now = kT0;
  for (int s = 50; s >= 0; s -= 10) {
    auto t = now - std::chrono::seconds(s);
    REQUIRE(cache.append(metriccache::MetricKind::kPodCPUUsage, "pod-a", t, 1.0));
    REQUIRE(cache.append(metriccache::MetricKind::kPodMemoryUsage, "pod-a", t, kGi));
    REQUIRE(cache.append(metriccache::MetricKind::kNodeCPUUsage, "", t, 3.0));
    REQUIRE(cache.append(metriccache::MetricKind::kNodeMemoryUsage, "", t, 4 * kGi));
    // Pod b has CPU samples only: left out of the round.
    REQUIRE(cache.append(metriccache::MetricKind::kPodCPUUsage, "pod-b", t, 2.0));
  }
  // Outside the training window.
  REQUIRE(cache.append(metriccache::MetricKind::kPodMemoryUsage, "pod-b", now - 5min, kGi));

  auto pods = std::make_shared<std::vector<PodMeta>>(2);
  (*pods)[0].uid = "pod-a";
  (*pods)[0].priority = PriorityClass::kProd;
  (*pods)[1].uid = "pod-b";
  StatesSnapshot snapshot;
  PredictionRunner runner(server, cache, [&] { return snapshot; });

  LogLines logs;
  CHECK_FALSE(runner.step(now, true, true));
  CHECK(server.modelCount() == 0);
  CHECK(logs.count("prediction:") == 0);

  snapshot.synced = true;
  snapshot.pods = pods;
  CHECK(runner.step(now, true, true));
  CHECK(logs.count("pod-a.ckpt refused and removed: version 7 is not 1") == 1);
  CHECK(logs.count("0 models restored") == 1);
  CHECK(logs.count("models start empty") == 1);
  REQUIRE(server.prediction("pod-a"));
  CHECK(server.prediction("pod-a")->p95.cpu_milli == cpuPeak(1.0));
  CHECK_FALSE(server.prediction("pod-b").has_value());
  CHECK(server.prediction("__node-sys__")->p95.cpu_milli == cpuPeak(2.0));
  // The maintenance pass checkpointed every model, the first step after the restore.
  CHECK(std::filesystem::exists(tree.path("ckpt/pod-a.ckpt")));
  // The restore ran once.
  CHECK(runner.step(now + 1min, false, false));
  CHECK(logs.count("models restored") == 1);
}

TEST_CASE("prediction runner: its thread trains once the states sync and stops at once",
          "[prediction][runner]") {
  TempTree tree("koord-prediction");
  PeakPredictServer server(configIn(tree));
  metriccache::MetricCache cache;
  const auto now = std::chrono::system_clock::now();
  REQUIRE(cache.append(metriccache::MetricKind::kNodeCPUUsage, "", now, 2.0));
  REQUIRE(cache.append(metriccache::MetricKind::kNodeMemoryUsage, "", now, kGi));
  std::mutex mu;
  StatesSnapshot snapshot;
  PredictionRunner runner(server, cache, [&] {
    std::lock_guard lock(mu);
    return snapshot;
  });
  runner.start();
  std::this_thread::sleep_for(50ms);
  CHECK_FALSE(server.hasSynced());
  {
    std::lock_guard lock(mu);
    snapshot.synced = true;
    snapshot.pods = std::make_shared<std::vector<PodMeta>>();
  }
  for (int i = 0; i < 100 && !server.hasSynced(); ++i)
    std::this_thread::sleep_for(50ms);
  CHECK(server.hasSynced());
  CHECK(server.prediction("__node__").has_value());
  const auto before = std::chrono::steady_clock::now();
  runner.stop();
  runner.stop();
  CHECK(std::chrono::steady_clock::now() - before < 2s);
}
