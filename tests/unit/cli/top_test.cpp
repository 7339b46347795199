#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <string>

#include "recording.h"
#include "snapshot/cluster_snapshot.h"
#include "top/node_top.h"
#include "top/pod_top.h"

namespace json = boost::json;
using namespace koord::roles::cli;

namespace {

ClusterSnapshot parsed(std::string_view items) {
  auto s = parseSnapshot(
      std::string(R"({"apiVersion":"koord.koordinator.sh/v1alpha1","kind":"Snapshot",)"
                  R"("takenAt":"2026-01-02T03:04:05Z","items":[)") +
      std::string(items) + "]}");
  REQUIRE(s.has_value());
  return std::move(*s);
}

}  // namespace

// The recording: an 8-core node with batch-cpu 3000, an LS pod using 1200m and a BE pod 300m
// of the node's 2000m, CPU suppression at 65 % by cfsQuota, one eviction Event, one Available
// Reservation, the NodeMetric updated 31 s before the snapshot was taken; beside it a "hot"
// node using 7 of its 8 cores, and a pending pod for koord-scheduler.
TEST_CASE("top nodes on the recorded snapshot", "[cli][top]") {
  const ClusterSnapshot s = recording();
  auto rows = topNodes(s);
  REQUIRE(rows.size() == 2);
  const NodeTopRow& r = rows[0];
  CHECK(r.name == nodeName(s));
  CHECK(rows[1].name == nodeName(s) + "-hot");
  CHECK(rows[1].node_cpu_used_milli == 7000);
  CHECK_FALSE(rows[1].be_cpu_limit_milli.has_value());
  CHECK(r.cpu_allocatable_milli == 8000);
  CHECK(r.node_cpu_used_milli == 2000);
  CHECK(r.ls_cpu_used_milli == 1200);
  CHECK(r.be_cpu_used_milli == 300);
  CHECK(r.ls_memory_used == 1LL << 30);
  CHECK(r.be_memory_used == 256LL << 20);
  CHECK(r.batch_cpu_milli == 3000);
  CHECK(r.batch_memory == 4LL << 30);
  CHECK_FALSE(r.mid_cpu_milli.has_value());
  CHECK(r.be_cpu_limit_milli == 3500);
  CHECK(r.suppress_policy == "cfsQuota");
  CHECK(r.ls_pods == 1);
  CHECK(r.be_pods == 1);
  CHECK(r.evictions == 1);
  CHECK(r.reservations == 1);
  CHECK(r.metric_age == std::chrono::seconds(31));
  CHECK(r.problems.empty());

  const std::string name = nodeName(s);
  // The NAME column is as wide as the hot node's name, four longer.
  const std::string pad(name.size(), ' ');
  const std::string table = nodeTopTable(rows);
  CHECK(table.substr(0, table.find('\n', table.find('\n') + 1) + 1) ==
        "NAME" + pad +
            "   CPU-ALLOC   LS-CPU   BE-CPU   BATCH-CPU   MID-CPU   BE-CPU-LIMIT   MEM-ALLOC   "
            "LS-MEM   BE-MEM   BATCH-MEM   MID-MEM   PODS(LS/BE)   EVICTIONS   RESERVATIONS   "
            "METRIC-AGE\n" +
            name + "    " +
            "   8000m       1200m    300m     3000m       <none>    3500m          16384Mi     "
            "1024Mi   256Mi    4096Mi      <none>    1/1           1           1              "
            "31s\n");
  const json::value j = nodeTopJson(s, rows);
  CHECK(j.at("takenAt").as_string() == "2026-11-30T08:14:21Z");
  const json::value& cpu = j.at("nodes").at(0).at("cpu");
  CHECK(cpu.at("beLimitMilli").as_int64() == 3500);
  CHECK(cpu.at("midAllocatableMilli").is_null());
}

TEST_CASE("top pods on the recorded snapshot", "[cli][top]") {
  const ClusterSnapshot s = recording();
  auto rows = topPods(s, {});
  REQUIRE(rows.size() == 3);
  const PodTopRow& pending = rows[1];
  CHECK(pending.name == "ls-pending");
  CHECK(pending.node_name.empty());
  CHECK_FALSE(pending.cpu_used_milli.has_value());
  rows.erase(rows.begin() + 1);
  const PodTopRow& be = rows[0];
  CHECK(be.name == "be-batch");
  CHECK(be.qos == "BE");
  CHECK(be.priority == "koord-batch");
  // batch-cpu 500 is 500 milli-cores.
  CHECK(be.cpu_request_milli == 500);
  CHECK(be.memory_request == 512LL << 20);
  CHECK(be.cpu_used_milli == 300);
  const PodTopRow& ls = rows[1];
  CHECK(ls.name == "ls-web");
  CHECK(ls.qos == "LS");
  CHECK(ls.priority == "koord-prod");
  CHECK(ls.cpu_request_milli == 1000);
  CHECK(ls.cpu_used_milli == 1200);
  CHECK(ls.phase == "Pending");

  const std::string table = podTopTable(rows, true);
  CHECK(table.rfind("NAME ", 0) == 0);
  CHECK(table.find("NAMESPACE") == std::string::npos);
  CHECK(podTopTable(rows, false).rfind("NAMESPACE ", 0) == 0);
  CHECK(topPods(s, {"elsewhere", ""}).empty());
  CHECK(topPods(s, {"", nodeName(s)}).size() == 2);
  CHECK(topPods(s, {"", nodeName(s) + "-hot"}).empty());
  CHECK(topPods(s, {"", "other-node"}).empty());
}

TEST_CASE("top reads what it can and says what it could not", "[cli][top]") {
  // A node with no NodeMetric has no usage and no age; a NodeMetric or NodeSLO that does not
  // decode is named in the row's problems; a pod that does not decode is named on its node.
  const ClusterSnapshot s = parsed(
      R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"quiet"},)"
      R"("status":{"allocatable":{"cpu":"4","memory":"8Gi"}}},)"
      R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"bad"},)"
      R"("status":{"capacity":{"cpu":"4"},"allocatable":{"cpu":"4"}}},)"
      R"({"apiVersion":"slo.koordinator.sh/v1alpha1","kind":"NodeMetric","metadata":{"name":"bad"},)"
      R"("status":{"podsMetric":"many"}},)"
      R"({"apiVersion":"slo.koordinator.sh/v1alpha1","kind":"NodeSLO","metadata":{"name":"bad"},)"
      R"("spec":{"resourceUsedThresholdWithBE":{"enable":"yes"}}},)"
      R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"x"},)"
      R"("spec":{"nodeName":"bad","containers":[{"name":"c","resources":{"requests":{"cpu":"lots"}}}]},)"
      R"("status":{"phase":"Running"}})");
  auto rows = topNodes(s);
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].name == "bad");
  REQUIRE(rows[0].problems.size() == 3);
  CHECK_THAT(rows[0].problems[0], Catch::Contains("pod x/p"));
  CHECK_THAT(rows[0].problems[1], Catch::Contains("NodeMetric: status.podsMetric"));
  CHECK_THAT(rows[0].problems[2], Catch::Contains("NodeSLO"));
  CHECK(rows[0].ls_pods == 0);
  CHECK(rows[1].name == "quiet");
  CHECK(rows[1].cpu_allocatable_milli == 4000);
  CHECK_FALSE(rows[1].metric_age.has_value());
  CHECK_FALSE(rows[1].be_cpu_limit_milli.has_value());
  CHECK(rows[1].problems.empty());
  auto pods = topPods(s, {});
  REQUIRE(pods.size() == 1);
  CHECK_THAT(pods[0].problem, Catch::Contains("requests[cpu]"));
}

TEST_CASE("hostile figures saturate instead of overflowing", "[cli][top]") {
  const ClusterSnapshot s = parsed(
      R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"n"},)"
      R"("status":{"capacity":{"cpu":"9000P"},"allocatable":{"cpu":"9000P"}}},)"
      R"({"apiVersion":"slo.koordinator.sh/v1alpha1","kind":"NodeSLO","metadata":{"name":"n"},)"
      R"("spec":{"resourceUsedThresholdWithBE":{"enable":true,"cpuSuppressThresholdPercent":100}}},)"
      R"({"apiVersion":"slo.koordinator.sh/v1alpha1","kind":"NodeMetric","metadata":{"name":"n"},)"
      R"("status":{"updateTime":"2026-01-02T03:04:00Z",)"
      R"("nodeMetric":{"nodeUsage":{"resources":{"cpu":"9000P"}}},"podsMetric":[)"
      R"({"namespace":"a","name":"1","podUsage":{"resources":{"cpu":"9000P"}}},)"
      R"({"namespace":"a","name":"2","podUsage":{"resources":{"cpu":"9000P"}}}]}})");
  auto rows = topNodes(s);
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].ls_cpu_used_milli == std::numeric_limits<std::int64_t>::max());
  REQUIRE(rows[0].be_cpu_limit_milli.has_value());
}
