// The MidResource plugin: mid-cpu and mid-memory from the koordlet's prod reclaimable capped by
// the thresholds, taken away when the NodeMetric is missing, stale or without a prediction, the
// write decision, the status patch, and --noderesource-plugins.
#include "noderesource/mid_resource.h"

#include <boost/json.hpp>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <catch2/catch.hpp>

#include "koord/kube/time.h"
#include "noderesource/device_resource.h"
#include "noderesource/node_status_patch.h"

using namespace koord::roles::manager::noderesource;
using koord::kube::Quantity;
using koord::kube::ResourceList;
using std::chrono::minutes;

namespace {

const auto kNow = *koord::kube::parseTime("2024-05-01T10:00:00Z");

Quantity q(std::string_view text) {
  return Quantity::parse(text).value();
}

ResourceList cpuMem(std::string_view cpu, std::string_view memory) {
  return {{"cpu", q(cpu)}, {"memory", q(memory)}};
}

// A 100-core, 200Gi node whose koordlet reported a prediction a minute ago.
struct Fixture {
  NodeView node;
  std::optional<koord::apis::NodeMetric> metric;
  koord::apis::ColocationStrategy strategy;

  Fixture() {
    node.name = "n1";
    node.capacity = cpuMem("100", "200Gi");
    node.allocatable = cpuMem("96", "190Gi");
    metric.emplace();
    metric->name = "n1";
    metric->update_time = kNow - minutes(1);
    metric->prod_reclaimable = cpuMem("20", "50Gi");
    strategy.enable = true;
  }
  MidResult run() const {
    return calculateMidResource(node, metric ? &*metric : nullptr, strategy, kNow);
  }
};

}  // namespace

TEST_CASE("mid resource: min(prod reclaimable, allocatable x threshold) from a table",
          "[manager][noderesource][mid]") {
  struct Row {
    std::string what;
    std::string reclaim_cpu, reclaim_memory;
    std::int64_t cpu_percent, memory_percent;
    std::string cpu, memory;  // expected toString()
  };
  // Whole milli-core counts print as Kubernetes prints them: 20000 is "20k".
  const std::vector<Row> rows = {
      {"under the caps", "20", "50Gi", 100, 100, "20k", "50Gi"},
      {"cpu capped at 10% of 96", "20", "50Gi", 10, 100, "9600", "50Gi"},
      {"memory capped at 20% of 190Gi", "20", "50Gi", 100, 20, "20k", "38Gi"},
      {"zero threshold", "20", "50Gi", 0, 0, "0", "0"},
      {"milli-cores kept exact", "1500m", "1000", 100, 100, "1500", "1k"},
      {"nothing reclaimable", "0", "0", 100, 100, "0", "0"},
      {"a negative figure is floored", "-2", "-1Gi", 100, 100, "0", "0"},
      {"fractional bytes round up", "1m", "1.5", 100, 100, "1", "2"},
  };
  for (const auto& row : rows) {
    INFO(row.what);
    Fixture f;
    f.metric->prod_reclaimable = cpuMem(row.reclaim_cpu, row.reclaim_memory);
    f.strategy.mid_cpu_threshold_percent = row.cpu_percent;
    f.strategy.mid_memory_threshold_percent = row.memory_percent;
    MidResult r = f.run();
    REQUIRE(r.state == BatchState::kCalculated);
    REQUIRE(r.desired.cpu);
    REQUIRE(r.desired.memory);
    CHECK(r.desired.cpu->toString() == row.cpu);
    CHECK(r.desired.memory->toString() == row.memory);
    CHECK(r.reason.empty());
  }
  Fixture f;
  f.strategy.mid_cpu_threshold_percent = 10;
  MidResult r = f.run();
  CHECK(r.cpu_message ==
        "midAllocatable[CPU(milli-core)]:9600 = min(nodeAllocatable:96000 * thresholdRatio:0.1, "
        "ProdReclaimable:20000)");
  CHECK(r.memory_message ==
        "midAllocatable[Memory(byte)]:50Gi = min(nodeAllocatable:190Gi * thresholdRatio:1, "
        "ProdReclaimable:50Gi)");
  // A resource the prediction leaves out counts as zero.
  f.metric->prod_reclaimable = ResourceList{{"cpu", q("3")}};
  r = f.run();
  CHECK(r.desired.cpu->toString() == "3k");
  CHECK(r.desired.memory->toString() == "0");
}

TEST_CASE("mid resource: removed when colocation is off or the NodeMetric cannot be used",
          "[manager][noderesource][mid]") {
  struct Row {
    std::string what;
    std::function<void(Fixture&)> change;
    BatchState state;
    std::string detail;
  };
  const std::vector<Row> rows = {
      {"colocation disabled", [](Fixture& f) { f.strategy.enable = false; }, BatchState::kReset,
       "DisableInConfig"},
      {"no NodeMetric", [](Fixture& f) { f.metric.reset(); }, BatchState::kDegraded,
       "NodeMetric not found"},
      {"never reported", [](Fixture& f) { f.metric->update_time.reset(); }, BatchState::kDegraded,
       "no status.updateTime"},
      {"no prediction", [](Fixture& f) { f.metric->prod_reclaimable.reset(); },
       BatchState::kDegraded, "no prodReclaimableMetric"},
      {"older than degradeTimeMinutes",
       [](Fixture& f) { f.metric->update_time = kNow - minutes(16); }, BatchState::kDegraded,
       "over degradeTimeMinutes 15"},
      {"no allocatable", [](Fixture& f) { f.node.allocatable.clear(); }, BatchState::kDegraded,
       "no status.allocatable"},
  };
  for (const auto& row : rows) {
    INFO(row.what);
    Fixture f;
    row.change(f);
    MidResult r = f.run();
    CHECK(r.state == row.state);
    CHECK_FALSE(r.desired.cpu.has_value());
    CHECK_FALSE(r.desired.memory.has_value());
    CHECK_THAT(r.reason, Catch::Contains(row.detail));
    if (row.state == BatchState::kDegraded)
      CHECK_THAT(r.reason, Catch::StartsWith(std::string(kMidDegradeReason)));
  }
  // Exactly degradeTimeMinutes old is still fresh; an empty prediction is a prediction.
  Fixture f;
  f.metric->update_time = kNow - minutes(15);
  f.metric->prod_reclaimable = ResourceList{};
  MidResult r = f.run();
  CHECK(r.state == BatchState::kCalculated);
  CHECK(r.desired.cpu->toString() == "0");
}

TEST_CASE("mid resource: the prediction field as the koordlet writes it",
          "[manager][noderesource][mid]") {
  auto metricFrom = [](std::string_view reclaimable) {
    auto v = boost::json::parse(fmt::format(
        R"({{"metadata":{{"name":"n1"}},"status":{{"updateTime":"2024-05-01T09:59:00Z",
            "prodReclaimableMetric":{}}}}})",
        reclaimable));
    auto m = koord::apis::decodeNodeMetric(v);
    REQUIRE(m.has_value());
    return *m;
  };
  Fixture f;
  auto good = metricFrom(R"({"resource":{"resources":{"cpu":"2500m","memory":"3Gi"}}})");
  auto r = calculateMidResource(f.node, &good, f.strategy, kNow);
  REQUIRE(r.state == BatchState::kCalculated);
  CHECK(r.desired.cpu->toString() == "2500");
  CHECK(r.desired.memory->toString() == "3Gi");
  // Koordinator's empty ReclaimableMetric (a failed prediction), or a null resources map.
  for (std::string_view empty :
       {R"({"resource":{}})", R"({"resource":{"resources":null}})", R"({})"}) {
    INFO(empty);
    auto m = metricFrom(empty);
    CHECK(calculateMidResource(f.node, &m, f.strategy, kNow).state == BatchState::kDegraded);
  }
}

TEST_CASE("mid resource: written when a value moves past the diff threshold or appears",
          "[manager][noderesource][mid]") {
  koord::apis::ColocationStrategy strategy;
  strategy.resource_diff_threshold = 0.1;
  auto values = [](std::optional<std::string_view> cpu, std::optional<std::string_view> memory) {
    BatchValues v;
    if (cpu)
      v.cpu = q(*cpu);
    if (memory)
      v.memory = q(*memory);
    return v;
  };
  struct Row {
    BatchValues current, desired;
    bool need;
    std::string reason;
  };
  const std::vector<Row> rows = {
      {values("10000", "10Gi"), values("10000", "10Gi"), false, ""},
      {values("10000", "10Gi"), values("10900", "10Gi"), false, ""},
      {values("10000", "10Gi"), values("11001", "10Gi"), true, "kubernetes.io/mid-cpu"},
      {values("10000", "10Gi"), values("10000", "12Gi"), true, "kubernetes.io/mid-memory"},
      {values(std::nullopt, std::nullopt), values("0", "0"), true, "kubernetes.io/mid-cpu"},
      {values("0", "0"), values(std::nullopt, std::nullopt), true, "kubernetes.io/mid-cpu"},
      {values(std::nullopt, std::nullopt), values(std::nullopt, std::nullopt), false, ""},
  };
  for (std::size_t i = 0; i < rows.size(); ++i) {
    INFO("row " << i);
    auto d = needMidSync(rows[i].current, rows[i].desired, strategy);
    CHECK(d.need == rows[i].need);
    CHECK_THAT(d.reason, Catch::Contains(rows[i].reason));
  }
}

TEST_CASE("mid resource: the status patch sets or removes both resources beside batch",
          "[manager][noderesource][mid]") {
  BatchValues batch{q("25000"), q("33G")};
  auto patch = buildNodeStatusPatch(batch);
  addMidResourcesToPatch(patch, BatchValues{q("2000"), q("3Gi")});
  for (const char* section : {"capacity", "allocatable"}) {
    INFO(section);
    const auto& list = patch.at("status").at(section).as_object();
    CHECK(list.at("kubernetes.io/mid-cpu").as_string() == "2k");
    CHECK(list.at("kubernetes.io/mid-memory").as_string() == "3Gi");
    CHECK(list.at("kubernetes.io/batch-cpu").as_string() == "25k");
  }
  auto removed = buildNodeStatusPatch(batch);
  addMidResourcesToPatch(removed, BatchValues{});
  CHECK(removed.at("status").at("allocatable").at("kubernetes.io/mid-cpu").is_null());
  CHECK(removed.at("status").at("capacity").at("kubernetes.io/mid-memory").is_null());
  // Onto an empty patch too.
  boost::json::value empty;
  addMidResourcesToPatch(empty, BatchValues{q("1"), std::nullopt});
  CHECK(empty.at("status").at("capacity").at("kubernetes.io/mid-cpu").as_string() == "1");
}

TEST_CASE("mid resource: --noderesource-plugins turns MidResource on and off",
          "[manager][noderesource][mid]") {
  struct Row {
    std::vector<std::string> flag;
    bool mid;
  };
  const std::vector<Row> rows = {
      {{"MidResource", "BatchResource"}, true}, {{"BatchResource"}, false},     {{"*"}, true},
      {{"-MidResource", "*"}, false},           {{"*", "-MidResource"}, false}, {{}, false},
  };
  for (const auto& row : rows) {
    INFO(fmt::format("{}", fmt::join(row.flag, ",")));
    CHECK(enabledNodeResourcePlugins(row.flag).mid == row.mid);
  }
  CHECK(NodeResourcePlugins{}.mid);
}

TEST_CASE("mid resource: the node's current mid values are read from allocatable",
          "[manager][noderesource][mid]") {
  auto node = decodeNodeView(boost::json::parse(R"({"metadata":{"name":"n1"},"status":{
      "capacity":{"cpu":"8","kubernetes.io/mid-cpu":"9999"},
      "allocatable":{"cpu":"8","kubernetes.io/mid-cpu":"1500","kubernetes.io/mid-memory":"2Gi"}}})"));
  REQUIRE(node.has_value());
  REQUIRE(node->current_mid.cpu);
  CHECK(node->current_mid.cpu->toString() == "1500");
  CHECK(node->current_mid.memory->toString() == "2Gi");
  CHECK_FALSE(node->current_batch.cpu.has_value());
}
