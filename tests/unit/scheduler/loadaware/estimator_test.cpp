#include "plugins/loadaware/estimator.h"

#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "fixture.h"

using namespace koord::roles::scheduler::loadaware;
using namespace loadaware_test;
using koord::apis::PriorityClass;
using koord::apis::QoSClass;

namespace {

constexpr std::int64_t kGi = 1024LL * 1024 * 1024;
constexpr std::int64_t kMi = 1024LL * 1024;

Resource batch(std::string_view cpu_milli, std::string_view memory) {
  return Resource::fromList(
      {{"kubernetes.io/batch-cpu", q(cpu_milli)}, {"kubernetes.io/batch-memory", q(memory)}});
}

}  // namespace

TEST_CASE("loadaware estimator: pod estimates", "[scheduler][loadaware]") {
  struct Case {
    const char* name;
    PodInfo pod;
    bool allow_customize;
    std::int64_t cpu;
    std::int64_t memory;
  };
  auto with = [](PodInfo p, auto change) {
    change(p);
    return p;
  };
  const std::vector<Case> cases = {
      {"requests only: 85% cpu, 70% memory", pod("a", res("1", "1Gi"), Resource{}), false, 850,
       751619277},  // round(0.7 Gi)
      {"limits above requests are what is estimated", pod("b", res("1", "1Gi"), res("2", "2Gi")),
       false, 1700, 1503238554},
      {"a pod asking for nothing counts 250m and 200Mi", pod("c", Resource{}), false, 250,
       200 * kMi},
      {"the estimate never passes the limit",
       with(pod("d", res("2", "2Gi"), res("1", "1Gi")), [](PodInfo&) {}), false, 1000, kGi},
      {"a batch pod is estimated from batch-cpu/batch-memory",
       with(pod("e", batch("1000", "1Gi")),
            [](PodInfo& p) { p.priority_class = PriorityClass::kBatch; }),
       false, 850, 751619277},
      {"a batch pod without batch resources counts the defaults",
       with(pod("f", res("4", "4Gi")),
            [](PodInfo& p) { p.priority_class = PriorityClass::kBatch; }),
       false, 250, 200 * kMi},
      {"a BE pod is batch by its QoS",
       with(pod("g", batch("2000", "2Gi")), [](PodInfo& p) { p.qos = QoSClass::kBE; }), false, 1700,
       1503238554},
      {"a mid pod reads mid-cpu, with no default when it has none",
       with(pod("h", Resource::fromList({{"kubernetes.io/mid-cpu", q("2000")}})),
            [](PodInfo& p) { p.priority_class = PriorityClass::kMid; }),
       false, 1700, 0},
      {"a free pod has no resource to read and estimates nothing",
       with(pod("i", res("4", "4Gi")), [](PodInfo& p) { p.priority_class = PriorityClass::kFree; }),
       false, 0, 0},
      {"the factors annotation is ignored unless allowed",
       with(pod("j", res("1", "1Gi")),
            [](PodInfo& p) {
              p.annotations[std::string(kAnnotationCustomEstimatedScalingFactors)] =
                  R"({"cpu": 50})";
            }),
       false, 850, 751619277},
      {"the factors annotation overrides per resource when allowed",
       with(pod("k", res("1", "1Gi")),
            [](PodInfo& p) {
              p.annotations[std::string(kAnnotationCustomEstimatedScalingFactors)] =
                  R"({"cpu": 50})";
            }),
       true, 500, 751619277},
      {"a malformed factors annotation falls back to the args",
       with(pod("l", res("1", "1Gi")),
            [](PodInfo& p) {
              p.annotations[std::string(kAnnotationCustomEstimatedScalingFactors)] =
                  R"({"cpu": "half"})";
            }),
       true, 850, 751619277},
  };
  for (const auto& c : cases) {
    SECTION(c.name) {
      LoadAwareSchedulingArgs args;
      args.allow_customize_estimation = c.allow_customize;
      auto estimate = Estimator(args).estimatePod(c.pod);
      CHECK(estimate.at("cpu") == c.cpu);
      CHECK(estimate.at("memory") == c.memory);
    }
  }
}

TEST_CASE("loadaware estimator: configured factors and extra resources", "[scheduler][loadaware]") {
  LoadAwareSchedulingArgs args;
  args.estimated_scaling_factors = {{"cpu", 100}, {"memory", 50}, {"nvidia.com/gpu", 100}};
  auto p = pod("gpu", Resource::fromList({{"cpu", q("3")},
                                          {"memory", q("1Gi")},
                                          {"nvidia.com/gpu", q("2")},
                                          {"ephemeral-storage", q("10Gi")}}));
  auto estimate = Estimator(args).estimatePod(p);
  CHECK(estimate == ResourceFactors{{"cpu", 3000}, {"memory", kGi / 2}, {"nvidia.com/gpu", 2}});
}

TEST_CASE("loadaware estimator: node allocatable and raw-allocatable", "[scheduler][loadaware]") {
  struct Case {
    const char* name;
    std::optional<std::string> raw;
    std::int64_t cpu;
    std::int64_t memory;
  };
  const std::vector<Case> cases = {
      {"status.allocatable", std::nullopt, 96000, 512 * kGi},
      {"raw-allocatable replaces the amplified entries", R"({"cpu": "48"})", 48000, 512 * kGi},
      {"raw-allocatable with both", R"({"cpu": "32", "memory": "128Gi"})", 32000, 128 * kGi},
      {"malformed raw-allocatable is ignored", "{not json", 96000, 512 * kGi},
      {"a bad quantity is ignored", R"({"cpu": "lots"})", 96000, 512 * kGi},
  };
  for (const auto& c : cases) {
    SECTION(c.name) {
      koord::kube::Labels annotations;
      if (c.raw)
        annotations[std::string(kAnnotationNodeRawAllocatable)] = *c.raw;
      LoadAwareSchedulingArgs args;
      auto v = vectorizerFor(args);
      auto alloc = Estimator(args).estimateNode(*node("n", annotations), v);
      CHECK(alloc[v.indexOf("cpu")] == c.cpu);
      CHECK(alloc[v.indexOf("memory")] == c.memory);
    }
  }
}

TEST_CASE("loadaware estimator: customised seconds annotations", "[scheduler][loadaware]") {
  const std::string key(kAnnotationCustomEstimatedSecondsAfterPodScheduled);
  CHECK(customSeconds({{key, "300"}}, key) == 300);
  CHECK(customSeconds({{key, "+30"}}, key) == 30);
  CHECK(customSeconds({{key, "5m"}}, key) == -1);
  CHECK(customSeconds({{key, ""}}, key) == -1);
  CHECK(customSeconds({}, key) == -1);
}
