// Memory QoS's configuration and formulas without cgroups: each class's memoryQOS with
// Koordinator's defaults and bounds, the koordinator.sh/memoryQOS override, memory.high's
// formula, and the values planned for tier, pod and container cgroups.
#include <boost/json/parse.hpp>

#include <catch2/catch.hpp>

#include "catch_expected.h"

#include <cstdint>
#include <limits>
#include <optional>
#include <string>

#include "koord/cgroup/cgroup_resource.h"
#include "qosmanager/cgreconcile/memory_qos_plan.h"
#include "qosmanager/cgreconcile/memory_qos_policy.h"
#include "role_fixture.h"

using namespace koord::roles::koordlet;
using namespace koord::roles::koordlet::qosmanager;
using koord::cgroup::Resource;

namespace {

constexpr std::int64_t kGi = std::int64_t{1} << 30;

koord::kube::Expected<MemoryQOSStrategy> decode(const char* json) {
  return decodeMemoryQOSStrategy(boost::json::parse(json).as_object());
}

MemoryQOS qos(std::int64_t min, std::int64_t low, std::int64_t throttling, std::int64_t ratio,
              std::int64_t scale, std::int64_t adj, std::int64_t prio_enable = 0,
              std::int64_t prio = 0, std::int64_t oom_group = 0) {
  return {min, low, throttling, ratio, scale, adj, prio_enable, prio, oom_group};
}

}  // namespace

TEST_CASE("memory qos policy: each class's memoryQOS merged with Koordinator's defaults",
          "[koordlet][memoryqos]") {
  const MemoryQOS none = qos(0, 0, 0, 0, 50, 0);
  struct Case {
    const char* name;
    const char* strategy;
    MemoryQOSClass cls;
    bool enable;
    MemoryQOS want;
  };
  const Case cases[] = {
      // Absent or disabled: NoneMemoryQOS, whatever else the class says.
      {"absent", "{}", MemoryQOSClass::kLS, false, none},
      {"disabled with fields", R"({"lsClass":{"memoryQOS":{"enable":false,"wmarkRatio":80}}})",
       MemoryQOSClass::kLS, false, none},
      // Enabled: DefaultMemoryQOS, with the given fields laid over.
      {"LSR enabled", R"({"lsrClass":{"memoryQOS":{"enable":true}}})", MemoryQOSClass::kLSR, true,
       qos(0, 0, 0, 95, 20, -25)},
      {"LS enabled with fields",
       R"({"lsClass":{"memoryQOS":{"enable":true,"minLimitPercent":50,"throttlingPercent":80,
           "priorityEnable":1,"priority":12,"oomKillGroup":1}}})",
       MemoryQOSClass::kLS, true, qos(50, 0, 80, 95, 20, -25, 1, 12, 1)},
      {"BE enabled", R"({"beClass":{"memoryQOS":{"enable":true}}})", MemoryQOSClass::kBE, true,
       qos(0, 0, 0, 95, 20, 50)},
      // SYSTEM keeps its fields when disabled, as Koordinator's merge leaves it alone.
      {"SYSTEM disabled keeps fields", R"({"systemClass":{"memoryQOS":{"wmarkRatio":70}}})",
       MemoryQOSClass::kSystem, false, qos(0, 0, 0, 70, 50, 0)},
      {"null class", R"({"beClass":null})", MemoryQOSClass::kBE, false, none},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    auto s = decode(c.strategy);
    REQUIRE(s);
    CHECK(s->of(c.cls).enable == c.enable);
    CHECK(s->of(c.cls).qos == c.want);
  }
}

TEST_CASE("memory qos policy: values outside the API's bounds and wrong types are refused",
          "[koordlet][memoryqos]") {
  struct Case {
    const char* strategy;
    const char* names;
  };
  const Case cases[] = {
      {R"({"lsClass":{"memoryQOS":{"minLimitPercent":101}}})",
       "resourceQOSStrategy.lsClass.memoryQOS.minLimitPercent"},
      {R"({"lsClass":{"memoryQOS":{"lowLimitPercent":-1}}})", "lowLimitPercent"},
      {R"({"beClass":{"memoryQOS":{"wmarkScalePermill":0}}})", "wmarkScalePermill"},
      {R"({"beClass":{"memoryQOS":{"wmarkMinAdj":51}}})", "wmarkMinAdj"},
      {R"({"lsrClass":{"memoryQOS":{"priority":13}}})", "priority"},
      {R"({"lsrClass":{"memoryQOS":{"oomKillGroup":2}}})", "oomKillGroup"},
      {R"({"lsrClass":{"memoryQOS":{"priorityEnable":1.5}}})", "priorityEnable"},
      {R"({"lsClass":{"memoryQOS":{"enable":"true"}}})", "enable"},
      {R"({"lsClass":{"memoryQOS":{"wmarkRatio":"95"}}})", "wmarkRatio"},
      {R"({"lsClass":{"memoryQOS":[]}})", "memoryQOS"},
      {R"({"lsClass":7})", "lsClass"},
  };
  for (const auto& c : cases) {
    INFO(c.strategy);
    auto s = decode(c.strategy);
    REQUIRE_FALSE(s);
    CHECK_THAT(s.error().message, Catch::Contains(c.names));
  }
}

TEST_CASE("memory qos policy: the pod annotation overrides its class's settings",
          "[koordlet][memoryqos]") {
  const MemoryQOS node = qos(50, 60, 80, 95, 20, -25, 1, 3, 1);
  struct Case {
    const char* name;
    std::optional<std::string_view> annotation;
    MemoryQOSClass cls;
    MemoryQOS want;
  };
  const Case cases[] = {
      {"no annotation", std::nullopt, MemoryQOSClass::kLS, node},
      {"null", "null", MemoryQOSClass::kLS, node},
      {"fields over the node's", R"({"minLimitPercent":100,"wmarkRatio":90,"unknown":1})",
       MemoryQOSClass::kLS, qos(100, 60, 80, 90, 20, -25, 1, 3, 1)},
      {"policy default", R"({"policy":"default","priority":5})", MemoryQOSClass::kLS,
       qos(50, 60, 80, 95, 20, -25, 1, 5, 1)},
      // none ignores the pod's other fields.
      {"policy none", R"({"policy":"none","minLimitPercent":100})", MemoryQOSClass::kLS,
       qos(0, 0, 0, 0, 50, 0)},
      // auto starts from the class's DefaultMemoryQOS, not from the node's settings.
      {"policy auto LS", R"({"policy":"auto"})", MemoryQOSClass::kLS, qos(0, 0, 0, 95, 20, -25)},
      {"policy auto BE with a field", R"({"policy":"auto","lowLimitPercent":10})",
       MemoryQOSClass::kBE, qos(0, 10, 0, 95, 20, 50)},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    auto q = podMemoryQOS(node, c.cls, c.annotation);
    REQUIRE(q);
    CHECK(*q == c.want);
  }
  const char* bad[] = {
      "{",  // not JSON
      "[]",
      R"({"policy":"aggressive"})",
      R"({"policy":1})",
      R"({"minLimitPercent":"50"})",
      R"({"throttlingPercent":150})",
  };
  for (const char* b : bad) {
    INFO(b);
    auto q = podMemoryQOS(node, MemoryQOSClass::kLS, b);
    REQUIRE_FALSE(q);
    CHECK_THAT(q.error().message, Catch::Contains("koordinator.sh/memoryQOS"));
  }
  const std::string huge(kMaxPodMemoryQOSBytes + 1, ' ');
  CHECK_FALSE(podMemoryQOS(node, MemoryQOSClass::kLS, huge));
}

TEST_CASE("memory qos policy: classes of pods and kubelet tiers", "[koordlet][memoryqos]") {
  using koord::apis::KubeQoS;
  using koord::apis::QoSClass;
  CHECK(memoryQOSClassOf(QoSClass::kLSE) == MemoryQOSClass::kLSR);
  CHECK(memoryQOSClassOf(QoSClass::kLSR) == MemoryQOSClass::kLSR);
  CHECK(memoryQOSClassOf(QoSClass::kLS) == MemoryQOSClass::kLS);
  CHECK(memoryQOSClassOf(QoSClass::kBE) == MemoryQOSClass::kBE);
  CHECK(memoryQOSClassOf(QoSClass::kSystem) == MemoryQOSClass::kSystem);
  CHECK_FALSE(memoryQOSClassOf(QoSClass::kNone));
  CHECK(memoryQOSClassOfTier(KubeQoS::kGuaranteed) == MemoryQOSClass::kLSR);
  CHECK(memoryQOSClassOfTier(KubeQoS::kBurstable) == MemoryQOSClass::kLS);
  CHECK(memoryQOSClassOfTier(KubeQoS::kBestEffort) == MemoryQOSClass::kBE);
}

TEST_CASE("memory qos formulas: percentages of bytes and memory.high", "[koordlet][memoryqos]") {
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  CHECK(percentOfBytes(kGi, 80) == 858993459);  // 858993459.2 rounded down
  CHECK(percentOfBytes(199, 50) == 99);
  CHECK(percentOfBytes(kGi, 0) == 0);
  CHECK(percentOfBytes(kMax, 100) == kMax);  // no overflow of the product
  CHECK(percentOfBytes(kMax, 50) == kMax / 2);
  CHECK(percentOfBytes(-199, 50) == -99);  // toward zero, as Go

  struct Case {
    std::int64_t request;
    std::int64_t limit;
    std::optional<std::int64_t> node;
    std::int64_t percent;
    std::optional<std::int64_t> want;
  };
  const Case cases[] = {
      {kGi, 2 * kGi, std::nullopt, 0, kMemoryUnlimited},
      // request + (limit - request) * 80% = 1932735283, down to a page.
      {kGi, 2 * kGi, std::nullopt, 80, 1932734464},
      {kGi, 2 * kGi, std::nullopt, 100, 2 * kGi},
      // No limit: the node's allocatable memory is the ceiling.
      {kGi, -1, 8 * kGi, 50, kGi * 9 / 2},
      {0, -1, 8 * kGi, 10, 858992640},
      {kGi, -1, std::nullopt, 50, std::nullopt},
      {kGi, -1, 0, 50, std::nullopt},
  };
  for (const auto& c : cases) {
    INFO(c.request << " " << c.limit << " " << c.percent);
    CHECK(containerMemoryHigh(c.request, c.limit, c.node, c.percent, 4096) == c.want);
  }
}

TEST_CASE("memory qos plan: tier sums, pod and container values, BE sized by batch memory",
          "[koordlet][memoryqos]") {
  using koord::apis::KubeQoS;
  using koord::apis::QoSClass;
  using koord::roles::koordlet::testing::batchResourcePod;
  using koord::roles::koordlet::testing::res;
  auto strategy = decode(R"({
      "lsClass": {"memoryQOS": {"enable": true, "minLimitPercent": 50, "lowLimitPercent": 40,
                                "throttlingPercent": 80}},
      "beClass": {"memoryQOS": {"enable": true, "minLimitPercent": 50}},
      "lsrClass": {"memoryQOS": {"enable": true, "priorityEnable": 1, "priority": 6}}})");
  REQUIRE(strategy);
  PodMeta ls;
  ls.namespace_ = "default";
  ls.name = "ls";
  ls.uid = "11111111-2222-3333-4444-555555555555";
  ls.phase = PodPhase::kRunning;
  ls.kube_qos = KubeQoS::kBurstable;
  ls.qos = QoSClass::kLS;
  ContainerMeta c;
  c.name = "c";
  c.runtime = "containerd";
  c.id = std::string(64, 'c');
  c.requests = res({{"memory", "1Gi"}, {"kubernetes.io/batch-memory", "8Gi"}});
  c.limits = res({{"memory", "2Gi"}});
  ls.containers = {c};
  ls.pod_requests = res({{"memory", "1Gi"}});
  PodMeta done = ls;
  done.name = "done";
  done.uid = "11111111-2222-3333-4444-000000000000";
  done.phase = PodPhase::kSucceeded;
  PodMeta bad = ls;
  bad.name = "bad";
  bad.uid = "NOT_A_UID";
  const std::vector<PodMeta> pods = {
      ls, batchResourcePod("default", "be", "bbbbbbbb-2222-3333-4444-555555555555"), done, bad};
  auto plan = planMemoryQOS(*strategy, pods, {});
  // A UID that is not one: named, its cgroups left; its request still counts in its tier.
  REQUIRE(plan.errors.size() == 1);
  CHECK_THAT(plan.errors.front(), Catch::Contains("default/bad"));

  auto find = [&](MemoryQOSLevel level, std::string_view dir_part,
                  Resource r) -> std::optional<std::int64_t> {
    for (const auto& v : plan.at(level)) {
      if (v.resource == r && v.dir.find(dir_part) != std::string::npos)
        return v.value;
    }
    return std::nullopt;
  };
  // LS: min 50% and low 40% of 1Gi; low is raised to min.
  CHECK(find(MemoryQOSLevel::kPod, ls.uid, Resource::kMemoryMin) == kGi / 2);
  CHECK(find(MemoryQOSLevel::kPod, ls.uid, Resource::kMemoryLow) == kGi / 2);
  CHECK(find(MemoryQOSLevel::kPod, ls.uid, Resource::kMemoryHigh) == std::nullopt);
  CHECK(find(MemoryQOSLevel::kPod, ls.uid, Resource::kMemoryWmarkRatio) == 95);
  CHECK(find(MemoryQOSLevel::kContainer, ls.uid, Resource::kMemoryHigh) == 1932734464);
  CHECK(find(MemoryQOSLevel::kContainer, ls.uid, Resource::kMemoryWmarkMinAdj) == -25);
  CHECK(find(MemoryQOSLevel::kPod, done.uid, Resource::kMemoryMin) == std::nullopt);
  // Tiers: burstable holds LS and the bad pod, summed before low is raised to min; besteffort
  // the BE pod's 1Gi batch request at 50%; kubepods all of them.
  CHECK(find(MemoryQOSLevel::kQoS, "kubepods/burstable", Resource::kMemoryMin) == kGi);
  CHECK(find(MemoryQOSLevel::kQoS, "kubepods/burstable", Resource::kMemoryLow) ==
        2 * percentOfBytes(kGi, 40));
  CHECK(find(MemoryQOSLevel::kQoS, "kubepods/besteffort", Resource::kMemoryMin) == kGi / 2);
  CHECK(find(MemoryQOSLevel::kQoS, "kubepods/besteffort", Resource::kMemoryLow) == 0);
  const auto& tiers = plan.at(MemoryQOSLevel::kQoS);
  REQUIRE_FALSE(tiers.empty());
  CHECK(tiers.front() == MemoryCgroupValue{"kubepods", Resource::kMemoryMin, kGi * 3 / 2});
  CHECK(find(MemoryQOSLevel::kQoS, "kubepods", Resource::kMemoryPriority) == 6);
  CHECK(find(MemoryQOSLevel::kQoS, "kubepods", Resource::kMemoryUsePriorityOom) == 1);
  // No tier gets memory.high or watermarks.
  for (const auto& v : tiers) {
    CHECK(v.resource != Resource::kMemoryHigh);
    CHECK(v.resource != Resource::kMemoryWmarkRatio);
  }
}

TEST_CASE("memory qos files: the cgroup table's files and value ranges", "[koordlet][memoryqos]") {
  using koord::cgroup::CgroupVersion;
  using koord::cgroup::resourceByFileName;
  using koord::cgroup::resourceFile;
  using koord::cgroup::validateValue;
  struct Case {
    Resource resource;
    const char* file;
    const char* ok_low;
    const char* ok_high;
    const char* bad_low;
    const char* bad_high;
  };
  const Case cases[] = {
      {Resource::kMemoryMin, "memory.min", "0", "9223372036854775807", "-2", "1Gi"},
      {Resource::kMemoryLow, "memory.low", "0", "4096", "-2", "x"},
      {Resource::kMemoryHigh, "memory.high", "0", "1073741824", "-5", "1.5"},
      {Resource::kMemoryWmarkRatio, "memory.wmark_ratio", "0", "100", "-1", "101"},
      {Resource::kMemoryWmarkScaleFactor, "memory.wmark_scale_factor", "1", "1000", "0", "1001"},
      {Resource::kMemoryWmarkMinAdj, "memory.wmark_min_adj", "-25", "50", "-26", "51"},
      {Resource::kMemoryPriority, "memory.priority", "0", "12", "-1", "13"},
      {Resource::kMemoryUsePriorityOom, "memory.use_priority_oom", "0", "1", "-1", "2"},
      {Resource::kMemoryOomGroup, "memory.oom.group", "0", "1", "-1", "2"},
  };
  for (const auto& c : cases) {
    INFO(c.file);
    CHECK(resourceFile(c.resource, CgroupVersion::kV1).subsystem == "memory");
    CHECK(resourceFile(c.resource, CgroupVersion::kV1).file == c.file);
    CHECK(resourceFile(c.resource, CgroupVersion::kV2).subsystem.empty());
    CHECK(resourceFile(c.resource, CgroupVersion::kV2).file == c.file);
    CHECK(resourceByFileName(c.file) == c.resource);
    CHECK(validateValue(c.resource, c.ok_low).value() == c.ok_low);
    CHECK(validateValue(c.resource, c.ok_high).value() == c.ok_high);
    CHECK_FALSE(validateValue(c.resource, c.bad_low));
    CHECK_FALSE(validateValue(c.resource, c.bad_high));
  }
  // The byte values take the kernel's "max", and -1 for it.
  for (auto r : {Resource::kMemoryMin, Resource::kMemoryLow, Resource::kMemoryHigh}) {
    CHECK(validateValue(r, "max").value() == "max");
    CHECK(validateValue(r, "-1").value() == "max");
  }
  CHECK_FALSE(validateValue(Resource::kMemoryPriority, "max"));
}
