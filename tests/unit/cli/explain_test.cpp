#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <string>

#include "explain/pod_explanation_text.h"
#include "explain/snapshot_scheduler.h"
#include "framework/pod_info.h"
#include "recording.h"
#include "snapshot/cluster_snapshot.h"
#include "temp_tree.h"

namespace json = boost::json;
using namespace koord::roles::cli;
namespace scheduler = koord::roles::scheduler;

namespace {

scheduler::PodInfo pod(const ClusterSnapshot& s, std::string_view name) {
  for (const auto& p : s.of("Pod")) {
    if (p.at("metadata").at("name").as_string() == name) {
      auto decoded = scheduler::decodePodInfo(p);
      REQUIRE(decoded.has_value());
      return std::move(*decoded);
    }
  }
  FAIL("no pod " << name << " in the recording");
  throw std::logic_error("unreachable");
}

}  // namespace

// The recording's ConfigMap runs LoadAwareScheduling at Koordinator's 65 % cpu threshold beside
// the default plugins; the hot node's NodeMetric says 7 of its 8 cores are in use.
TEST_CASE("explain on the recorded snapshot: the hot node refused by LoadAwareScheduling",
          "[cli][explain]") {
  const ClusterSnapshot s = recording();
  SnapshotScheduler sim(s, {});
  CHECK(sim.configSource() == "ConfigMap koordinator-system/koord-scheduler-config");
  CHECK(sim.problems().empty());
  auto e = sim.scheduler().explain(pod(s, "ls-pending"));
  REQUIRE(e.has_value());
  CHECK(e->profile == "koord-scheduler");
  CHECK(e->pre_filter.ok());
  REQUIRE(e->nodes.size() == 2);
  const auto& fits = e->nodes[0];
  const auto& hot = e->nodes[1];
  CHECK(fits.node == nodeName(s));
  CHECK(fits.filter.ok());
  REQUIRE_FALSE(fits.scores.empty());
  std::int64_t total = 0;
  bool load_aware = false;
  for (const auto& part : fits.scores) {
    REQUIRE(part.scores.size() == 1);
    total += part.weight * part.scores[0];
    load_aware = load_aware || part.plugin == "LoadAwareScheduling";
  }
  CHECK(load_aware);
  CHECK(fits.total == total);
  CHECK(hot.node == nodeName(s) + "-hot");
  CHECK(hot.filter.plugin() == "LoadAwareScheduling");
  CHECK(hot.filter.message() == "node(s) cpu usage exceed threshold");
  CHECK(hot.scores.empty());

  const std::string summary = explanationSummary(*e);
  CHECK(summary == "fits 1 of 2 node(s), best " + nodeName(s) + " (score " + std::to_string(total) +
                       "); 1 node refuses at LoadAwareScheduling (node(s) cpu usage exceed "
                       "threshold)");
  const std::string table = explanationTable(*e);
  CHECK(table.rfind("NODE ", 0) == 0);
  CHECK(table.find(summary) != std::string::npos);
  const json::value j = explanationJson("ns/ls-pending", *e);
  CHECK(j.at("nodes").at(1).at("plugin").as_string() == "LoadAwareScheduling");
  CHECK(j.at("nodes").at(0).at("score").as_int64() == total);
}

TEST_CASE("explain reads the snapshot as of its time, not now", "[cli][explain]") {
  // Hours after the recording the NodeMetrics would be expired for a scheduler reading the
  // clock; explained as of the snapshot's time they are fresh, so the fitting node still fits.
  const ClusterSnapshot s = recording();
  SnapshotScheduler sim(s, {});
  auto e = sim.scheduler().explain(pod(s, "ls-pending"));
  REQUIRE(e.has_value());
  CHECK(e->nodes.at(0).filter.ok());
}

TEST_CASE("explain's configuration: a file, or a clear error without one", "[cli][explain]") {
  ClusterSnapshot s = recording();
  koord::testing::TempTree tree("koord-cli-explain");
  tree.write("config.yaml",
             "apiVersion: kubescheduler.config.k8s.io/v1beta2\nkind: KubeSchedulerConfiguration\n"
             "profiles:\n- schedulerName: default-scheduler\n");
  SnapshotSchedulerOptions options;
  options.config_file = tree.path("config.yaml").string();
  // A bound pod explained as koord explain does: as if pending, not counted on its node.
  options.as_pending =
      std::string(s.of("Pod").at(0).at("metadata").at("namespace").as_string()) + "/ls-web";
  SnapshotScheduler from_file(s, options);
  auto web = pod(s, "ls-web");
  web.node_name.clear();
  auto e = from_file.scheduler().explain(web);
  REQUIRE(e.has_value());
  // Without LoadAwareScheduling both nodes fit.
  CHECK(e->nodes.at(0).filter.ok());
  CHECK(e->nodes.at(1).filter.ok());
  // A pod for a scheduler no profile is.
  CHECK_FALSE(from_file.scheduler().explain(pod(s, "ls-pending")).has_value());

  tree.write("bad.yaml", "profiles: [1]\n");
  options.config_file = tree.path("bad.yaml").string();
  CHECK_THROWS_WITH(SnapshotScheduler(s, options), Catch::Contains("bad.yaml"));
  // A configuration bigger than a ConfigMap may hold is refused before it is parsed.
  for (auto& cm : s.objects["ConfigMap"]) {
    if (cm.at("metadata").at("name").as_string() == "koord-scheduler-config")
      cm.at("data").as_object()["koord-scheduler-config"] = std::string((1 << 20) + 1, '#');
  }
  CHECK_THROWS_WITH(SnapshotScheduler(s, {}), Catch::Contains("holds 1048577 bytes"));
  s.objects.erase("ConfigMap");
  CHECK_THROWS_WITH(SnapshotScheduler(s, {}),
                    Catch::Contains("no ConfigMap koordinator-system/koord-scheduler-config"));
}
