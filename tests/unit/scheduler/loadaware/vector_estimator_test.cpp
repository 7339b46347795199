// VectorEstimator (the per-node estimate when PreFilter did not run) must give exactly what
// Estimator::estimatePod gives, in the vectorizer's slots.
#include "plugins/loadaware/estimator.h"

#include <functional>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "fixture.h"

using namespace koord::roles::scheduler::loadaware;
using namespace loadaware_test;
using koord::apis::PriorityClass;
using koord::apis::QoSClass;

namespace {

Resource batch(std::string_view cpu_milli, std::string_view memory) {
  return Resource::fromList(
      {{"kubernetes.io/batch-cpu", q(cpu_milli)}, {"kubernetes.io/batch-memory", q(memory)}});
}

PodInfo with(PodInfo p, const std::function<void(PodInfo&)>& change) {
  change(p);
  return p;
}

void setFactors(PodInfo& p, std::string text) {
  p.annotations[std::string(kAnnotationCustomEstimatedScalingFactors)] = std::move(text);
}

}  // namespace

TEST_CASE("loadaware vector estimator: the same estimates as the map-based estimator",
          "[scheduler][loadaware]") {
  const std::vector<PodInfo> pods = {
      pod("requests-only", res("1", "1Gi"), Resource{}),
      pod("limits-above", res("1", "1Gi"), res("2", "2Gi")),
      pod("nothing", Resource{}),
      pod("limit-below", res("2", "2Gi"), res("1", "1Gi")),
      pod("odd", res("1234m", "777Mi"), res("3333m", "1111Mi")),
      with(pod("batch", batch("1000", "1Gi")),
           [](PodInfo& p) { p.priority_class = PriorityClass::kBatch; }),
      with(pod("batch-empty", res("4", "4Gi")),
           [](PodInfo& p) { p.priority_class = PriorityClass::kBatch; }),
      with(pod("be", batch("2000", "2Gi")), [](PodInfo& p) { p.qos = QoSClass::kBE; }),
      with(pod("ls", res("3", "3Gi")), [](PodInfo& p) { p.qos = QoSClass::kLS; }),
      with(pod("mid", Resource::fromList({{"kubernetes.io/mid-cpu", q("2000")}})),
           [](PodInfo& p) { p.priority_class = PriorityClass::kMid; }),
      with(pod("free", res("4", "4Gi")),
           [](PodInfo& p) { p.priority_class = PriorityClass::kFree; }),
      with(pod("custom", res("1", "1Gi")), [](PodInfo& p) { setFactors(p, R"({"cpu": 50})"); }),
      with(pod("custom-bad", res("1", "1Gi")),
           [](PodInfo& p) { setFactors(p, R"({"cpu": "half"})"); }),
      with(pod("custom-unknown", res("1", "1Gi")),
           [](PodInfo& p) { setFactors(p, R"({"nvidia.com/gpu": 10, "memory": null})"); }),
      pod("gpu", Resource::fromList({{"cpu", q("3")},
                                     {"memory", q("1Gi")},
                                     {"nvidia.com/gpu", q("2")},
                                     {"ephemeral-storage", q("10Gi")}})),
  };
  struct ArgsCase {
    const char* name;
    std::function<void(LoadAwareSchedulingArgs&)> change;
  };
  const std::vector<ArgsCase> arg_cases = {
      {"default args", [](LoadAwareSchedulingArgs&) {}},
      {"customisation allowed", [](auto& a) { a.allow_customize_estimation = true; }},
      {"more resources and factors",
       [](auto& a) {
         a.estimated_scaling_factors = {
             {"cpu", 100}, {"memory", 50}, {"nvidia.com/gpu", 100}, {"ephemeral-storage", 30}};
         a.supported_resources = {"pods"};
         a.allow_customize_estimation = true;
       }},
  };
  for (const auto& ac : arg_cases) {
    SECTION(ac.name) {
      LoadAwareSchedulingArgs args;
      ac.change(args);
      const ResourceVectorizer v = vectorizerFor(args);
      const Estimator estimator(args);
      const VectorEstimator fast(args, v);
      for (const auto& p : pods) {
        CAPTURE(p.name);
        ResourceVector got(v.size(), -1);
        fast.estimate(p, got.data());
        CHECK(got == v.fromFactors(estimator.estimatePod(p)));
      }
    }
  }
}
