// SystemConfig on fake /proc and /sys trees: the NodeSLO's systemStrategy (or the koordlet's
// defaults) written to the vm sysctls and, only where the kernel has it, memcg_reaper's
// reap_background; values outside their range and bad NodeSLOs write nothing.
#include <boost/json/parse.hpp>

#include <catch2/catch.hpp>

#include "catch_expected.h"

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>

#include "qos_strategy_modules.h"
#include "qosmanager/sysreconcile/system_config_reconcile.h"
#include "temp_tree.h"

using namespace koord::roles::koordlet;
using namespace koord::roles::koordlet::qosmanager;
using koord::testing::TempTree;
namespace fs = std::filesystem;

namespace {

constexpr std::int64_t kGiB = std::int64_t{1} << 30;

void writeKernel(const TempTree& t, bool reaper) {
  t.write("proc/sys/vm/min_free_kbytes", "67584\n");
  t.write("proc/sys/vm/watermark_scale_factor", "10\n");
  if (reaper)
    t.write("sys/kernel/mm/memcg_reaper/reap_background", "0\n");
}

// The file's value as the kernel would print it back, without the trailing newline.
std::string value(const TempTree& t, std::string_view rel) {
  std::string v = t.read(rel);
  while (!v.empty() && v.back() == '\n')
    v.pop_back();
  return v;
}

SystemConfigRoots roots(const TempTree& t) {
  return {t.path("proc"), t.path("sys")};
}

// A synced snapshot of a node with `memory` capacity and this systemStrategy (null: none).
StatesSnapshot snapshot(std::int64_t memory, const char* system_strategy) {
  auto slo = std::make_shared<NodeSLOInfo>();
  if (system_strategy != nullptr) {
    slo->system_strategy = std::make_shared<const boost::json::object>(
        boost::json::parse(system_strategy).as_object());
  }
  auto s = koord::roles::koordlet::testing::syncedSnapshot(std::move(slo));
  auto node = std::make_shared<NodeInfo>();
  node->capacity.emplace("memory", koord::kube::Quantity::fromInt(memory));
  s.node = node;
  return s;
}

}  // namespace

TEST_CASE("system config: the plan's values written, reap_background only where it exists",
          "[koordlet][systemconfig]") {
  for (bool reaper : {true, false}) {
    INFO("memcg_reaper " << reaper);
    TempTree t("koord-sysconfig");
    writeKernel(t, reaper);
    CHECK(systemConfigMissingInterface(roots(t)).empty());
    SystemConfigPlan plan;
    plan.min_free_kbytes = 671088;
    plan.watermark_scale_factor = 150;
    plan.memcg_reap_background = 1;
    auto stats = applySystemConfig(roots(t), plan);
    CHECK(stats.errors.empty());
    CHECK(stats.written == (reaper ? 3u : 2u));
    CHECK(value(t, "proc/sys/vm/min_free_kbytes") == "671088");
    CHECK(value(t, "proc/sys/vm/watermark_scale_factor") == "150");
    if (reaper)
      CHECK(value(t, "sys/kernel/mm/memcg_reaper/reap_background") == "1");
    else
      CHECK_FALSE(fs::exists(t.path("sys/kernel/mm/memcg_reaper/reap_background")));
    // Unchanged values are not written again.
    auto again = applySystemConfig(roots(t), plan);
    CHECK(again.written == 0);
    CHECK(again.unchanged == (reaper ? 3u : 2u));
  }
}

TEST_CASE("system config: a missing vm sysctl is named by the probe and never created",
          "[koordlet][systemconfig]") {
  TempTree t("koord-sysconfig");
  t.write("proc/sys/vm/min_free_kbytes", "67584\n");
  CHECK(systemConfigMissingInterface(roots(t)) ==
        t.path("proc/sys/vm/watermark_scale_factor").string());
  SystemConfigPlan plan;
  plan.watermark_scale_factor = 150;
  auto stats = applySystemConfig(roots(t), plan);
  REQUIRE(stats.errors.size() == 1);
  CHECK_THAT(stats.errors.front(), Catch::Contains("watermark_scale_factor"));
  CHECK_FALSE(fs::exists(t.path("proc/sys/vm/watermark_scale_factor")));
}

TEST_CASE("system config strategy: NodeSLO values, defaults, and bad input changing nothing",
          "[koordlet][systemconfig]") {
  TempTree t("koord-sysconfig");
  writeKernel(t, true);
  koord::roles::koordlet::testing::StrategyModules m(t.path("cgroup"));
  m.options.proc_root_dir = t.path("proc").string();
  m.options.sys_root_dir = t.path("sys").string();
  auto spec = systemConfigStrategy();
  CHECK(spec.gate == "SystemConfig");
  auto strategy = spec.make(m.context());
  const auto now = std::chrono::system_clock::now();

  struct Case {
    const char* name;
    std::int64_t memory;
    const char* strategy;  // null: the NodeSLO has no systemStrategy
    const char* min_free_kbytes;
    const char* watermark;
    const char* reap;
  };
  const Case cases[] = {
      // Koordinator's defaults: factor 100 (1% of memory), 150, 0.
      {"defaults", 64 * kGiB, nullptr, "671088", "150", "0"},
      {"configured", 16 * kGiB,
       R"({"minFreeKbytesFactor": 250, "watermarkScaleFactor": 300, "memcgReapBackGround": 1})",
       "419430", "300", "1"},
      // Too small a node for the 10 MiB floor: min_free_kbytes is left, the others written.
      {"below the floor", 512 * 1024 * 1024, R"({"watermarkScaleFactor": 200})", "419430", "200",
       "0"},
      // Bad input: nothing at all changes.
      {"wrong type", 64 * kGiB, R"({"watermarkScaleFactor": "100"})", "419430", "200", "0"},
      {"out of range", 64 * kGiB, R"({"memcgReapBackGround": 5})", "419430", "200", "0"},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    strategy->runOnce(snapshot(c.memory, c.strategy), now);
    CHECK(value(t, "proc/sys/vm/min_free_kbytes") == c.min_free_kbytes);
    CHECK(value(t, "proc/sys/vm/watermark_scale_factor") == c.watermark);
    CHECK(value(t, "sys/kernel/mm/memcg_reaper/reap_background") == c.reap);
  }
  // No NodeSLO, or not synced: nothing is written either.
  StatesSnapshot no_slo;
  no_slo.synced = true;
  strategy->runOnce(no_slo, now);
  auto unsynced = snapshot(64 * kGiB, nullptr);
  unsynced.synced = false;
  strategy->runOnce(unsynced, now);
  CHECK(value(t, "proc/sys/vm/watermark_scale_factor") == "200");
}
