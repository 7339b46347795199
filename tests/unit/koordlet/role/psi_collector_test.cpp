#include <catch2/catch.hpp>

#include <fmt/format.h>

#include "catch_expected.h"
#include "collector_fixture.h"
#include "log_lines.h"
#include "metricsadvisor/collectors/psi/psi_collector_spec.h"
#include "metricsadvisor/collectors/psi/psi_reader.h"

using namespace koord::roles::koordlet;
using namespace koord::roles::koordlet::testing;
using koord::cgroup::CgroupVersion;
namespace mc = koord::roles::koordlet::metriccache;
namespace ma = koord::roles::koordlet::metricsadvisor;

namespace {

const std::string kUid = "6e2b5f4e-2c6a-4f0c-9a51-2d8a1c0f3b7e";
const std::string kOther = "0123456789abcdef0123456789abcdef";

std::string pressure(double some10, double full10, bool full = true) {
  std::string s = fmt::format("some avg10={:.2f} avg60=1.50 avg300=0.25 total=12345\n", some10);
  if (full)
    s += fmt::format("full avg10={:.2f} avg60=0.50 avg300=0.05 total=678\n", full10);
  return s;
}

// cpu, memory and io pressure files in `dir`; cpu's some avg10 is `cpu_some`, memory's 2x, io's
// 3x; full avg10 a tenth of some.
void writePSI(const CollectorFixture& f, const std::string& dir, double cpu_some,
              bool cpu_full = true) {
  f.write(dir + "/cpu.pressure", pressure(cpu_some, cpu_some / 10, cpu_full));
  f.write(dir + "/memory.pressure", pressure(2 * cpu_some, 2 * cpu_some / 10));
  f.write(dir + "/io.pressure", pressure(3 * cpu_some, 3 * cpu_some / 10));
}

// A pod and its container with pressure under `base` ("cpuacct/", "unified/" or "" for v2),
// plus the kubepods files the collector checks for.
void writePodTree(const CollectorFixture& f, const std::string& base, const PodMeta& p,
                  double pod_cpu, double container_cpu) {
  writePSI(f, base + "kubepods", 0);
  writePSI(f, base + podDirOf(p), pod_cpu);
  writePSI(f, base + containerDirOf(p), container_cpu);
}

}  // namespace

TEST_CASE("psi: pressure files parse, with and without a full line", "[psi]") {
  auto both = ma::parsePSI(
      "some avg10=12.50 avg60=3.25 avg300=0.75 total=987654\n"
      "full avg10=1.00 avg60=0.50 avg300=0.10 total=4321\n");
  REQUIRE(both);
  CHECK(both->some.avg10 == 12.5);
  CHECK(both->some.avg60 == 3.25);
  CHECK(both->some.avg300 == 0.75);
  CHECK(both->some.total == 987654);
  CHECK(both->full_supported);
  CHECK(both->full.avg10 == 1.0);
  CHECK(both->full.total == 4321);

  // CPU pressure on older kernels: no full line; full reads as zeros.
  auto some_only = ma::parsePSI("some avg10=0.30 avg60=0.10 avg300=0.00 total=42\n");
  REQUIRE(some_only);
  CHECK_FALSE(some_only->full_supported);
  CHECK(some_only->some.avg10 == Approx(0.3));
  CHECK(some_only->full.avg10 == 0);
}

TEST_CASE("psi: malformed pressure files are errors that quote the line", "[psi]") {
  const char* bad = GENERATE(
      "", "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n",
      "some avg10=abc avg60=0.00 avg300=0.00 total=0\n", "some avg10=0.00 avg60=0.00\n",
      "some avg60=0.00 avg10=0.00 avg300=0.00 total=0\n",
      "some avg10=100.01 avg60=0.00 avg300=0.00 total=0\n",
      "some avg10=-1 avg60=0.00 avg300=0.00 total=0\n",
      "some avg10=0.00 avg60=0.00 avg300=0.00 total=-5\n",
      "some avg10=0.00 avg60=0.00 avg300=0.00 total=0 extra=1\n",
      "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\nsome avg10=0.00 avg60=0.00 avg300=0.00 "
      "total=0\n",
      "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\nfull avg10=0.00 avg60=0.00 avg300=0.00 "
      "total=0\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n",
      "partial avg10=0.00 avg60=0.00 avg300=0.00 total=0\n",
      "some avg10=nan avg60=0.00 avg300=0.00 total=0\n");
  INFO(bad);
  auto parsed = ma::parsePSI(bad);
  REQUIRE_FALSE(parsed);
  CHECK_THAT(parsed.error().message, Catch::Contains("pressure"));
}

TEST_CASE("psi: pod and container pressure on cgroup v1 from cpuacct", "[psi]") {
  CollectorFixture f(CgroupVersion::kV1, ma::psiCollector());
  auto p = collectorPod(kUid, 'c');
  writePodTree(f, "cpuacct/", p, 4.0, 8.0);
  // A stale unified tree must not win over cpuacct.
  writePodTree(f, "unified/", p, 90.0, 90.0);
  f.round({p});

  const std::string cid(64, 'c');
  CHECK(f.cache.last(mc::MetricKind::kPodPSICPUSome, kUid)->value == 4.0);
  CHECK(f.cache.last(mc::MetricKind::kPodPSICPUFull, kUid)->value == Approx(0.4));
  CHECK(f.cache.last(mc::MetricKind::kPodPSIMemSome, kUid)->value == 8.0);
  CHECK(f.cache.last(mc::MetricKind::kPodPSIIOSome, kUid)->value == 12.0);
  CHECK(f.cache.last(mc::MetricKind::kPodPSIIOFull, kUid)->value == Approx(1.2));
  CHECK(f.cache.last(mc::MetricKind::kPodPSICPUFullSupported, kUid)->value == 1.0);
  CHECK(f.cache.last(mc::MetricKind::kContainerPSICPUSome, cid)->value == 8.0);
  CHECK(f.cache.last(mc::MetricKind::kContainerPSIMemFull, cid)->value == Approx(1.6));
  CHECK(f.cache.last(mc::MetricKind::kContainerPSICPUFullSupported, cid)->value == 1.0);

  // Koordinator's gauges: 3 resources x (some, full) x (avg10, avg60, avg300).
  CHECK(f.lines("koordlet_pod_psi") == 18);
  CHECK(f.lines("koordlet_container_psi") == 18);
  CHECK(f.registry.render().find(
            "koordlet_pod_psi{node=\"node-1\",pod_uid=\"" + kUid +
            "\",pod_name=\"pod-6e2b\",pod_namespace=\"ns\",psi_resource_type=\"cpu\","
            "psi_precision=\"avg10\",psi_degree=\"some\",cpu_full_supported=\"true\"} 4\n") !=
        std::string::npos);
  CHECK(f.registry.render().find(
            "koordlet_container_psi{node=\"node-1\",container_id=\"containerd://" + cid +
            "\",container_name=\"app\",pod_uid=\"" + kUid +
            "\",pod_name=\"pod-6e2b\",pod_namespace=\"ns\",psi_resource_type=\"mem\","
            "psi_precision=\"avg60\",psi_degree=\"full\",cpu_full_supported=\"true\"} 0.5\n") !=
        std::string::npos);
}

TEST_CASE("psi: on a v1 host without cpuacct pressure the unified mount is read", "[psi]") {
  CollectorFixture f(CgroupVersion::kV1, ma::psiCollector());
  auto p = collectorPod(kUid, 'c');
  writePodTree(f, "unified/", p, 5.0, 7.0);
  koord::testing::LogLines log;
  f.round({p});
  CHECK(f.cache.last(mc::MetricKind::kPodPSICPUSome, kUid)->value == 5.0);
  CHECK(f.cache.last(mc::MetricKind::kContainerPSICPUSome, std::string(64, 'c'))->value == 7.0);
  CHECK(f.lines("koordlet_pod_psi", {"psi_resource_type=\"io\"", "} 15\n"}) == 1);
  CHECK(log.count("unified/kubepods") == 1);
  f.round({p});
  CHECK(log.count("unified/kubepods") == 1);  // said once, not every round
}

TEST_CASE("psi: with no pressure files anywhere it says so once and publishes nothing", "[psi]") {
  CollectorFixture f(CgroupVersion::kV1, ma::psiCollector());
  auto p = collectorPod(kUid, 'c');
  f.write("cpuacct/" + podDirOf(p) + "/cpuacct.usage", "0");
  koord::testing::LogLines log;
  for (int i = 0; i < 3; ++i)
    f.round({p});
  CHECK(log.count("psi collector: neither") == 1);
  CHECK(log.count("proc/pressure/cpu") == 1);  // nor the node's
  CHECK(log.problems() == 2);
  CHECK(f.lines("koordlet_pod_psi") == 0);
  CHECK_FALSE(f.cache.last(mc::MetricKind::kPodPSICPUSome, kUid));
}

TEST_CASE("psi: pod and container pressure on cgroup v2; a CPU line without full", "[psi]") {
  CollectorFixture f(CgroupVersion::kV2, ma::psiCollector());
  auto p = collectorPod(kUid, 'c');
  writePSI(f, podDirOf(p), 6.0, /*cpu_full=*/false);
  writePSI(f, containerDirOf(p), 3.0);
  f.round({p});
  CHECK(f.cache.last(mc::MetricKind::kPodPSICPUSome, kUid)->value == 6.0);
  CHECK(f.cache.last(mc::MetricKind::kPodPSICPUFull, kUid)->value == 0.0);
  CHECK(f.cache.last(mc::MetricKind::kPodPSICPUFullSupported, kUid)->value == 0.0);
  CHECK(f.cache.last(mc::MetricKind::kPodPSIMemSome, kUid)->value == 12.0);
  // Koordinator publishes full only where the kernel has it: cpu some x 3, mem and io x 6.
  CHECK(f.lines("koordlet_pod_psi") == 15);
  CHECK(f.lines("koordlet_pod_psi", {"psi_resource_type=\"cpu\"", "psi_degree=\"full\""}) == 0);
  CHECK(f.lines("koordlet_pod_psi",
                {"psi_resource_type=\"cpu\"", "cpu_full_supported=\"false\""}) == 3);
  CHECK(f.lines("koordlet_container_psi") == 18);

  // The kernel gains the full line: the cpu series change label, the old ones go.
  writePSI(f, podDirOf(p), 6.0, /*cpu_full=*/true);
  f.round({p});
  CHECK(f.lines("koordlet_pod_psi") == 18);
  CHECK(f.lines("koordlet_pod_psi", {"cpu_full_supported=\"false\""}) == 0);
  CHECK(f.cache.last(mc::MetricKind::kPodPSICPUFullSupported, kUid)->value == 1.0);
}

TEST_CASE("psi: a pod that leaves takes its series and cache entries with it", "[psi]") {
  CollectorFixture f(CgroupVersion::kV2, ma::psiCollector());
  auto a = collectorPod(kUid, 'a');
  auto b = collectorPod(kOther, 'b');
  for (const auto& p : {a, b}) {
    writePSI(f, podDirOf(p), 1.0);
    writePSI(f, containerDirOf(p), 2.0);
  }
  f.round({a, b});
  CHECK(f.lines("koordlet_pod_psi") == 36);
  CHECK(f.lines("koordlet_container_psi") == 36);

  f.round({b});
  CHECK(f.lines("koordlet_pod_psi") == 18);
  CHECK(f.lines("koordlet_pod_psi", {kUid}) == 0);
  CHECK(f.lines("koordlet_container_psi", {std::string(64, 'a')}) == 0);
  CHECK(f.lines("koordlet_container_psi", {std::string(64, 'b')}) == 18);
  CHECK_FALSE(f.cache.last(mc::MetricKind::kPodPSICPUSome, kUid));
  CHECK_FALSE(f.cache.last(mc::MetricKind::kContainerPSIIOFull, std::string(64, 'a')));
  CHECK(f.cache.last(mc::MetricKind::kPodPSICPUSome, kOther));

  // A pod whose cgroup vanished while it is still listed drops its gauges too, and says why once.
  koord::testing::LogLines log;
  std::filesystem::remove_all(f.tree.path("cgroup/" + podDirOf(b)));
  f.round({b});
  f.round({b});
  CHECK(f.lines("koordlet_pod_psi") == 0);
  CHECK(f.lines("koordlet_container_psi") == 0);
  CHECK(log.count("psi collector: ns/pod-0123") == 1);
}

TEST_CASE("psi: the feature probe names /proc/pressure/cpu when it is missing", "[psi]") {
  koord::testing::TempTree t("koord-psi-probe");
  CHECK(ma::psiMissingInterface(t.path("proc")) == t.path("proc/pressure/cpu").string());
  t.write("proc/pressure/cpu", pressure(0, 0));
  CHECK(ma::psiMissingInterface(t.path("proc")).empty());
}

TEST_CASE("psi: the node's own pressure from /proc/pressure goes into the cache", "[psi]") {
  CollectorFixture f(CgroupVersion::kV2, ma::psiCollector());
  auto p = collectorPod(kUid, 'c');
  writePodTree(f, "", p, 1.0, 1.0);
  f.tree.write("proc/pressure/cpu", pressure(5.0, 0, false));
  f.tree.write("proc/pressure/memory", pressure(6.0, 0.6));
  f.tree.write("proc/pressure/io", pressure(7.0, 0.7));
  f.round({p});
  CHECK(f.cache.last(mc::MetricKind::kNodePSICPUSome, "")->value == 5.0);
  CHECK(f.cache.last(mc::MetricKind::kNodePSICPUFullSupported, "")->value == 0.0);
  CHECK(f.cache.last(mc::MetricKind::kNodePSIMemFull, "")->value == Approx(0.6));
  CHECK(f.cache.last(mc::MetricKind::kNodePSIIOSome, "")->value == 7.0);
  CHECK(f.lines("koordlet_pod_psi") == 18);  // the pods' series are unaffected

  // A garbled node file is said once, naming it; the pods are still collected.
  f.tree.write("proc/pressure/io", "some avg10=x\n");
  koord::testing::LogLines log;
  f.round({p});
  f.round({p});
  CHECK(log.count("proc/pressure/io") == 1);
  CHECK(f.cache.last(mc::MetricKind::kNodePSIIOSome, "")->value == 7.0);  // the last good one
  CHECK(f.cache.last(mc::MetricKind::kPodPSICPUSome, kUid)->value == 1.0);
}
