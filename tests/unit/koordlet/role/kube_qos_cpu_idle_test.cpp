#include <catch2/catch.hpp>

#include <boost/json/parse.hpp>

#include <fmt/format.h>

#include "catch_expected.h"
#include "koord/cgroup/resource_executor.h"
#include "runtimehooks/coresched/kube_qos_cpu_idle.h"
#include "temp_tree.h"

using namespace koord::roles::koordlet;
using koord::cgroup::QoSTier;
using koord::testing::TempTree;

namespace {

boost::json::object strategy(std::string_view text) {
  return boost::json::parse(text).as_object();
}

// Koordinator's default resourceQOSStrategy classes with the BE class's schedIdle set.
std::string withPolicy(std::string_view policy, int be_idle, bool ls_enable = false) {
  return fmt::format(
      R"({{"policies": {{"cpuPolicy": "{}"}},
          "lsrClass": {{"cpuQOS": {{"enable": false, "groupIdentity": 2, "schedIdle": 0}}}},
          "lsClass": {{"cpuQOS": {{"enable": {}, "groupIdentity": 2, "schedIdle": 0}}}},
          "beClass": {{"cpuQOS": {{"enable": true, "groupIdentity": -1, "schedIdle": {}}}}}}})",
      policy, ls_enable ? "true" : "false", be_idle);
}

}  // namespace

TEST_CASE("cpu.idle rule: coreSched policy and the class's schedIdle") {
  auto o = strategy(withPolicy("coreSched", 1));
  auto rule = decodeKubeQOSCPUIdle(&o);
  REQUIRE(rule);
  REQUIRE(rule->has_value());
  CHECK((*rule)->of(QoSTier::kBestEffort) == 1);
  CHECK((*rule)->of(QoSTier::kBurstable) == 0);
  CHECK((*rule)->of(QoSTier::kGuaranteed) == 0);

  // schedIdle means nothing under the groupIdentity policy (Koordinator's default): back to 0.
  auto gi = strategy(withPolicy("groupIdentity", 1));
  auto off = decodeKubeQOSCPUIdle(&gi);
  REQUIRE(off);
  REQUIRE(off->has_value());
  CHECK((*off)->of(QoSTier::kBestEffort) == 0);

  // No NodeSLO: nothing decided, nothing to write.
  auto none = decodeKubeQOSCPUIdle(nullptr);
  REQUIRE(none);
  CHECK_FALSE(none->has_value());

  // Guaranteed follows LSR when LSR's core sched is enabled, else LS.
  auto lsr = strategy(R"({"policies": {"cpuPolicy": "coreSched"},
      "lsrClass": {"cpuQOS": {"enable": true, "schedIdle": 0}},
      "lsClass": {"cpuQOS": {"enable": false, "schedIdle": 1}}})");
  auto g = decodeKubeQOSCPUIdle(&lsr);
  REQUIRE(g);
  CHECK((*g)->of(QoSTier::kGuaranteed) == 0);
  CHECK((*g)->of(QoSTier::kBurstable) == 1);
  auto ls = strategy(R"({"policies": {"cpuPolicy": "coreSched"},
      "lsClass": {"cpuQOS": {"enable": false, "schedIdle": 1}}})");
  auto g2 = decodeKubeQOSCPUIdle(&ls);
  REQUIRE(g2);
  CHECK((*g2)->of(QoSTier::kGuaranteed) == 1);
}

TEST_CASE("cpu.idle rule: malformed fields are errors naming them") {
  auto bad_idle = strategy(R"({"policies": {"cpuPolicy": "coreSched"},
      "beClass": {"cpuQOS": {"schedIdle": 2}}})");
  auto e1 = decodeKubeQOSCPUIdle(&bad_idle);
  REQUIRE_FALSE(e1);
  CHECK(e1.error().message ==
        "resourceQOSStrategy.beClass.cpuQOS.schedIdle: must be 0 or 1, got 2");
  auto bad_type = strategy(R"({"beClass": {"cpuQOS": {"schedIdle": "1"}}})");
  auto e2 = decodeKubeQOSCPUIdle(&bad_type);
  REQUIRE_FALSE(e2);
  CHECK_THAT(e2.error().message,
             Catch::StartsWith("resourceQOSStrategy.beClass.cpuQOS.schedIdle: expected integer"));
  auto bad_policy = strategy(R"({"policies": {"cpuPolicy": 1}})");
  CHECK_FALSE(decodeKubeQOSCPUIdle(&bad_policy));
  auto bad_class = strategy(R"({"beClass": []})");
  CHECK_FALSE(decodeKubeQOSCPUIdle(&bad_class));
}

TEST_CASE("cpu.idle is written to the QoS tiers, v1 and v2, and only where the kernel has it") {
  auto o = strategy(withPolicy("coreSched", 1));
  auto rule = decodeKubeQOSCPUIdle(&o).value().value();
  {
    TempTree t("koord-cpuidle");
    for (auto d : {"kubepods", "kubepods/burstable", "kubepods/besteffort"})
      t.write(std::string("cpu/") + d + "/cpu.idle", "0");
    koord::cgroup::ResourceExecutor e(
        {t.root(), koord::cgroup::CgroupVersion::kV1, koord::cgroup::CgroupDriver::kCgroupfs});
    auto stats = applyKubeQOSCPUIdle(e, rule);
    CHECK(stats.errors.empty());
    CHECK_FALSE(stats.unsupported);
    CHECK(stats.written == 1);
    CHECK(stats.unchanged == 2);
    CHECK(t.read("cpu/kubepods/besteffort/cpu.idle") == "1");
    CHECK(t.read("cpu/kubepods/burstable/cpu.idle") == "0");
    CHECK(t.read("cpu/kubepods/cpu.idle") == "0");
    // Back to the groupIdentity policy: the besteffort tier leaves SCHED_IDLE.
    auto gi = strategy(withPolicy("groupIdentity", 1));
    auto stats2 = applyKubeQOSCPUIdle(e, decodeKubeQOSCPUIdle(&gi).value().value());
    CHECK(stats2.written == 1);
    CHECK(t.read("cpu/kubepods/besteffort/cpu.idle") == "0");
  }
  {
    TempTree t("koord-cpuidle");
    t.write("cgroup.controllers", "cpu memory");
    t.write("kubepods.slice/kubepods-besteffort.slice/cpu.idle", "0");
    // No burstable pod has run yet: its tier is skipped, not an error.
    t.write("kubepods.slice/cpu.idle", "0");
    koord::cgroup::ResourceExecutor e(
        {t.root(), koord::cgroup::CgroupVersion::kV2, koord::cgroup::CgroupDriver::kSystemd});
    auto stats = applyKubeQOSCPUIdle(e, rule);
    CHECK(stats.errors.empty());
    CHECK(stats.written == 1);
    CHECK(t.read("kubepods.slice/kubepods-besteffort.slice/cpu.idle") == "1");
  }
  {
    // A kernel before 5.15: the cgroup is there, cpu.idle is not; nothing is created.
    TempTree t("koord-cpuidle");
    t.write("cpu/kubepods/besteffort/cpu.shares", "2");
    koord::cgroup::ResourceExecutor e(
        {t.root(), koord::cgroup::CgroupVersion::kV1, koord::cgroup::CgroupDriver::kCgroupfs});
    auto stats = applyKubeQOSCPUIdle(e, rule);
    CHECK(stats.unsupported);
    CHECK(stats.written == 0);
    CHECK_FALSE(std::filesystem::exists(t.path("cpu/kubepods/besteffort/cpu.idle")));
  }
}
