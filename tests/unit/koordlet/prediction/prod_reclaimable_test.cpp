// The prod reclaimable estimate: which pods count in each of Koordinator's two sums (priority,
// cold start, finished, no model), the safety margin, the minimum of the two, and the
// NodeMetric field it becomes.
#include "prediction/prod_reclaimable.h"

#include <boost/json.hpp>

#include <catch2/catch.hpp>

#include "catch_expected.h"

#include <chrono>
#include <string>
#include <vector>

#include "koord/apis/node_metric.h"
#include "temp_tree.h"

using namespace koord::roles::koordlet;
using namespace koord::roles::koordlet::prediction;
using koord::apis::PriorityClass;
using koord::kube::Quantity;
using koord::testing::TempTree;
using namespace std::chrono_literals;

namespace {

const TimePoint kNow = TimePoint(std::chrono::seconds(1'700'000'000));
constexpr double kGi = 1024.0 * 1024 * 1024;
constexpr std::int64_t kGiB = std::int64_t{1} << 30;

std::int64_t cpuPeak(double cores) {
  const auto& b = cpuBuckets();
  return static_cast<std::int64_t>(b.bucketStart(b.findBucket(cores) + 1) * 1000.0);
}
std::int64_t memoryPeak(double bytes) {
  const auto& b = memoryBuckets();
  return static_cast<std::int64_t>(b.bucketStart(b.findBucket(bytes) + 1));
}
// Go's int64(float64(v) * 1.1): the 10% safety margin.
std::int64_t withMargin(std::int64_t v) {
  return static_cast<std::int64_t>(static_cast<double>(v) * 1.1);
}

struct PodSpec {
  std::string uid;
  PriorityClass priority;
  double cpu_used;     // cores; < 0: not trained
  double memory_used;  // bytes
  std::int64_t cpu_request_milli;
  std::int64_t memory_request;
  std::chrono::hours age;
  PodPhase phase = PodPhase::kRunning;
  bool terminating = false;
};

PodMeta podOf(const PodSpec& s) {
  PodMeta p;
  p.namespace_ = "default";
  p.name = s.uid;
  p.uid = s.uid;
  p.priority = s.priority;
  p.phase = s.phase;
  p.terminating = s.terminating;
  p.creation_time = kNow - s.age;
  p.pod_requests.emplace("cpu", Quantity::fromMilli(s.cpu_request_milli));
  p.pod_requests.emplace("memory", Quantity::fromInt(s.memory_request));
  return p;
}

const std::vector<PodSpec> kPods = {
    // Counted in both sums.
    {"a", PriorityClass::kProd, 1.0, 1 * kGi, 4000, 8 * kGiB, 48h},
    {"b", PriorityClass::kNone, 0.5, 0.5 * kGi, 1000, 1 * kGiB, 48h},
    // Batch: in neither.
    {"c", PriorityClass::kBatch, 2.0, 2 * kGi, 2000, 2 * kGiB, 48h},
    // Cold (an hour old): its request counts, its own prediction does not.
    {"d", PriorityClass::kProd, 0.2, 0.25 * kGi, 2000, 2 * kGiB, 1h},
    // No model: left out of both.
    {"e", PriorityClass::kProd, -1, 0, 1000, 1 * kGiB, 48h},
    // Terminating, and finished: in neither (they are trained all the same).
    {"f", PriorityClass::kProd, 0.3, 0.3 * kGi, 3000, 3 * kGiB, 48h, PodPhase::kRunning, true},
    {"g", PriorityClass::kProd, 0.1, 0.1 * kGi, 1000, 1 * kGiB, 48h, PodPhase::kSucceeded},
    // Mid: not prod-reclaimable.
    {"h", PriorityClass::kMid, 0.1, 0.1 * kGi, 1000, 1 * kGiB, 48h},
};

void trainAll(PeakPredictServer& server, double node_cpu, double node_memory) {
  for (int i = 3; i >= 1; --i) {
    TrainingRound r;
    for (const auto& s : kPods)
      if (s.cpu_used >= 0)
        r.pods.push_back({s.uid, s.priority, {s.cpu_used, s.memory_used}});
    r.node_cpu = node_cpu;
    r.node_memory = node_memory;
    server.train(r, kNow - std::chrono::minutes(i));
  }
}

}  // namespace

TEST_CASE("prediction prod reclaimable: the pod sum, the priority sum and their minimum",
          "[prediction][reclaimable]") {
  TempTree tree("koord-prediction");
  PredictionConfig config;
  config.checkpoint_dir = tree.path("ckpt");
  PeakPredictServer server(config);
  const double node_cpu = 8.0;
  const double node_memory = 8 * kGi;
  trainAll(server, node_cpu, node_memory);

  std::vector<PodMeta> pods;
  for (const auto& s : kPods)
    pods.push_back(podOf(s));
  std::vector<const PodMeta*> ptrs;
  for (const auto& p : pods)
    ptrs.push_back(&p);
  ptrs.push_back(&pods[0]);  // listed twice: counted once

  auto result = predictProdReclaimable(server, ptrs, kNow);
  REQUIRE(result);
  CHECK(result->pods_counted == 2);
  CHECK(result->pods_cold == 1);
  CHECK(result->pods_unpredicted == 1);

  // By pods: a and b, each max(request - peak * 1.1, 0).
  const std::int64_t a_cpu = 4000 - withMargin(cpuPeak(1.0));
  const std::int64_t b_cpu = 1000 - withMargin(cpuPeak(0.5));
  CHECK(a_cpu == 4000 - 1138);  // p95 of 1 core is 1035m, 1138.5 with the margin
  CHECK(result->by_pods.cpu_milli == a_cpu + b_cpu);
  CHECK(result->by_pods.memory_bytes == (8 * kGiB - withMargin(memoryPeak(1 * kGi))) +
                                            (1 * kGiB - withMargin(memoryPeak(0.5 * kGi))));

  // By priority: requests of a, b and d less (sys + prod + none) * 1.1. The prod item holds
  // every trained prod pod's usage (a, d, f, g), sys the node less all pods.
  const double all_cpu = 1.0 + 0.5 + 2.0 + 0.2 + 0.3 + 0.1 + 0.1;
  const double all_memory =
      1 * kGi + 0.5 * kGi + 2 * kGi + 0.25 * kGi + 0.3 * kGi + 0.1 * kGi + 0.1 * kGi;
  const std::int64_t peak_cpu =
      withMargin(cpuPeak(node_cpu - all_cpu) + cpuPeak(1.0 + 0.2 + 0.3 + 0.1) + cpuPeak(0.5));
  const std::int64_t peak_memory =
      withMargin(memoryPeak(node_memory - all_memory) +
                 memoryPeak(1 * kGi + 0.25 * kGi + 0.3 * kGi + 0.1 * kGi) + memoryPeak(0.5 * kGi));
  REQUIRE(peak_cpu < 7000);
  REQUIRE(peak_memory < 11 * kGiB);
  CHECK(result->by_priority.cpu_milli == 7000 - peak_cpu);
  CHECK(result->by_priority.memory_bytes == 11 * kGiB - peak_memory);

  CHECK(result->reclaimable.cpu_milli ==
        std::min(result->by_pods.cpu_milli, result->by_priority.cpu_milli));
  CHECK(result->reclaimable.memory_bytes ==
        std::min(result->by_pods.memory_bytes, result->by_priority.memory_bytes));
  CHECK(result->reclaimable.cpu_milli > 0);
}

TEST_CASE("prediction prod reclaimable: usage above the request reclaims nothing",
          "[prediction][reclaimable]") {
  TempTree tree("koord-prediction");
  PredictionConfig config;
  config.checkpoint_dir = tree.path("ckpt");
  struct Row {
    int margin;
    std::int64_t cpu_request;
    std::int64_t expected_by_pods;
  };
  // 1 core predicts 1035m: with a 10% margin 1138m, with none 1035m.
  const std::vector<Row> rows = {
      {10, 4000, 4000 - 1138}, {0, 4000, 4000 - 1035}, {10, 1000, 0}, {50, 1500, 0}};
  for (const auto& row : rows) {
    INFO("margin " << row.margin << " request " << row.cpu_request);
    config.safety_margin_percent = row.margin;
    PeakPredictServer server(config);
    TrainingRound r;
    r.pods = {{"a", PriorityClass::kProd, {1.0, 1 * kGi}}};
    r.node_cpu = 1.0;
    r.node_memory = 1 * kGi;
    server.train(r, kNow - 1min);
    PodMeta pod = podOf({"a", PriorityClass::kProd, 1.0, 1 * kGi, row.cpu_request, 0, 48h});
    const PodMeta* ptr = &pod;
    auto result = predictProdReclaimable(server, {&ptr, 1}, kNow);
    REQUIRE(result);
    CHECK(result->by_pods.cpu_milli == row.expected_by_pods);
    CHECK(result->by_pods.memory_bytes == 0);
    CHECK(result->by_priority.memory_bytes == 0);
    CHECK(result->reclaimable.memory_bytes == 0);
  }
  // The table's figures, checked by hand once.
  CHECK(static_cast<std::int64_t>(1035 * 1.1) == 1138);
}

TEST_CASE("prediction prod reclaimable: no prediction before the first round",
          "[prediction][reclaimable]") {
  TempTree tree("koord-prediction");
  PredictionConfig config;
  config.checkpoint_dir = tree.path("ckpt");
  PeakPredictServer server(config);
  PodMeta pod = podOf({"a", PriorityClass::kProd, 1.0, 1 * kGi, 4000, 8 * kGiB, 48h});
  const PodMeta* ptr = &pod;
  auto result = predictProdReclaimable(server, {&ptr, 1}, kNow);
  REQUIRE_FALSE(result);
  CHECK_THAT(result.error().message, Catch::Contains("__node-sys__"));
  // Without pods after a round: zero, not an error.
  server.train(TrainingRound{}, kNow);
  auto none = predictProdReclaimable(server, {}, kNow);
  REQUIRE(none);
  CHECK(none->reclaimable == Reclaimable{});
}

TEST_CASE("prediction prod reclaimable: the NodeMetric field, as the manager reads it",
          "[prediction][reclaimable]") {
  auto decodeStatus = [](const boost::json::object& field) {
    boost::json::value nm =
        boost::json::object{{"metadata", boost::json::object{{"name", "n1"}}},
                            {"status", boost::json::object{{"updateTime", "2024-01-01T00:00:00Z"},
                                                           {"prodReclaimableMetric", field}}}};
    auto decoded = koord::apis::decodeNodeMetric(nm);
    REQUIRE(decoded);
    return decoded->prod_reclaimable;
  };
  struct Row {
    Reclaimable value;
    std::string cpu;
    std::string memory;
  };
  // Bytes that are no multiple of 1024 print in decimal, as Kubernetes' BinarySI does.
  const std::vector<Row> rows = {
      {{1500, kGiB}, "1500m", "1Gi"}, {{2000, 0}, "2", "0"}, {{0, 1000}, "0", "1k"}};
  for (const auto& row : rows) {
    ProdReclaimableResult r;
    r.reclaimable = row.value;
    auto field = prodReclaimableMetricJson(koord::Expected<ProdReclaimableResult>(r));
    const auto& resources = field.at("resource").at("resources").as_object();
    CHECK(resources.at("cpu").as_string() == row.cpu);
    CHECK(resources.at("memory").as_string() == row.memory);
    auto read = decodeStatus(field);
    REQUIRE(read);
    CHECK(read->at("cpu").milliValue() == row.value.cpu_milli);
    CHECK(read->at("memory").value() == row.value.memory_bytes);
  }
  // A failed prediction clears the resources: the manager sees none and degrades Mid.
  auto failed = prodReclaimableMetricJson(
      koord::Expected<ProdReclaimableResult>(koord::invalidArgument("no prediction")));
  CHECK(failed.at("resource").at("resources").is_null());
  CHECK_FALSE(decodeStatus(failed).has_value());
  CHECK_FALSE(decodeStatus(boost::json::object{{"resource", boost::json::object{}}}).has_value());
}
