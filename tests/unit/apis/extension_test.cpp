#include "koord/apis/extension.h"

#include <catch2/catch.hpp>

#include <string>

using namespace koord::apis;
using koord::kube::Quantity;
using koord::kube::ResourceList;

namespace {

// As qos_test.go's getResourceList: "" leaves the resource out.
ResourceList cpuMem(const std::string& cpu, const std::string& memory) {
  ResourceList out;
  if (!cpu.empty())
    out["cpu"] = Quantity::parse(cpu).value();
  if (!memory.empty())
    out["memory"] = Quantity::parse(memory).value();
  return out;
}

ContainerResources container(ResourceList requests, ResourceList limits) {
  return ContainerResources{std::move(requests), std::move(limits)};
}

}  // namespace

TEST_CASE("QoS class names round-trip and nothing else is a class", "[apis][extension]") {
  for (auto qos :
       {QoSClass::kSystem, QoSClass::kLSE, QoSClass::kLSR, QoSClass::kLS, QoSClass::kBE}) {
    CHECK(qosClassByName(qosClassName(qos)) == qos);
  }
  CHECK(qosClassName(QoSClass::kLSR) == "LSR");
  CHECK(qosClassName(QoSClass::kSystem) == "SYSTEM");
  CHECK(qosClassName(QoSClass::kNone).empty());
  CHECK(qosClassByName("ls") == QoSClass::kNone);  // case matters
  CHECK(qosClassByName("") == QoSClass::kNone);
  CHECK(qosClassByName("Guaranteed") == QoSClass::kNone);
}

TEST_CASE("priority classes: names, bands and defaults", "[apis][extension]") {
  CHECK(priorityClassByName("koord-prod") == PriorityClass::kProd);
  CHECK(priorityClassByName("koord-mid") == PriorityClass::kMid);
  CHECK(priorityClassByName("koord-batch") == PriorityClass::kBatch);
  CHECK(priorityClassByName("koord-free") == PriorityClass::kFree);
  CHECK(priorityClassByName("prod") == PriorityClass::kNone);
  CHECK(priorityClassName(PriorityClass::kBatch) == "koord-batch");
  CHECK(priorityClassName(PriorityClass::kNone).empty());

  auto prod = priorityBand(PriorityClass::kProd);
  REQUIRE(prod);
  CHECK(prod->min == 9000);
  CHECK(prod->max == 9999);
  CHECK(prod->default_value == 9500);
  CHECK(priorityBand(PriorityClass::kMid)->default_value == 7500);
  CHECK(priorityBand(PriorityClass::kBatch)->min == 5000);
  CHECK(priorityBand(PriorityClass::kFree)->max == 3999);
  CHECK_FALSE(priorityBand(PriorityClass::kNone));

  // Band edges, and the gaps between bands.
  CHECK(priorityClassByValue(9000) == PriorityClass::kProd);
  CHECK(priorityClassByValue(9999) == PriorityClass::kProd);
  CHECK(priorityClassByValue(10000) == PriorityClass::kNone);
  CHECK(priorityClassByValue(8999) == PriorityClass::kNone);
  CHECK(priorityClassByValue(7000) == PriorityClass::kMid);
  CHECK(priorityClassByValue(5999) == PriorityClass::kBatch);
  CHECK(priorityClassByValue(3000) == PriorityClass::kFree);
  CHECK(priorityClassByValue(2999) == PriorityClass::kNone);
  CHECK(priorityClassByValue(0) == PriorityClass::kNone);
  CHECK(priorityClassByValue(2000000000) == PriorityClass::kNone);
}

TEST_CASE("a pod's declared QoS and priority", "[apis][extension]") {
  CHECK(podQoSClassRaw({{"koordinator.sh/qosClass", "BE"}}) == QoSClass::kBE);
  CHECK(podQoSClassRaw({{"koordinator.sh/qosClass", "bogus"}}) == QoSClass::kNone);
  CHECK(podQoSClassRaw({}) == QoSClass::kNone);

  // The label wins over spec.priority, even when its value is unknown.
  CHECK(podPriorityClassRaw({{"koordinator.sh/priority-class", "koord-mid"}}, 9500) ==
        PriorityClass::kMid);
  CHECK(podPriorityClassRaw({{"koordinator.sh/priority-class", "gold"}}, 9500) ==
        PriorityClass::kNone);
  CHECK(podPriorityClassRaw({}, 5100) == PriorityClass::kBatch);
  CHECK(podPriorityClassRaw({}, 100) == PriorityClass::kNone);
  CHECK(podPriorityClassRaw({}, std::nullopt) == PriorityClass::kNone);
}

TEST_CASE("defaults follow the Kubernetes QoS and the koord QoS", "[apis][extension]") {
  CHECK(qosClassForKubeQoS(KubeQoS::kGuaranteed) == QoSClass::kLSR);
  CHECK(qosClassForKubeQoS(KubeQoS::kBurstable) == QoSClass::kLS);
  CHECK(qosClassForKubeQoS(KubeQoS::kBestEffort) == QoSClass::kBE);

  CHECK(podQoSClassWithDefault({}, KubeQoS::kGuaranteed) == QoSClass::kLSR);
  CHECK(podQoSClassWithDefault({{"koordinator.sh/qosClass", "LSE"}}, KubeQoS::kBestEffort) ==
        QoSClass::kLSE);
  CHECK(podQoSClassWithDefault({{"koordinator.sh/qosClass", "x"}}, KubeQoS::kBestEffort) ==
        QoSClass::kBE);

  CHECK(priorityClassForQoS(QoSClass::kSystem) == PriorityClass::kProd);
  CHECK(priorityClassForQoS(QoSClass::kLSE) == PriorityClass::kProd);
  CHECK(priorityClassForQoS(QoSClass::kLSR) == PriorityClass::kProd);
  CHECK(priorityClassForQoS(QoSClass::kLS) == PriorityClass::kProd);
  CHECK(priorityClassForQoS(QoSClass::kBE) == PriorityClass::kBatch);
  CHECK(priorityClassForQoS(QoSClass::kNone) == PriorityClass::kNone);

  // Declared class, else from the QoS label, else from the Kubernetes QoS.
  CHECK(podPriorityClassWithDefault({{"koordinator.sh/priority-class", "koord-free"}}, 9500,
                                    KubeQoS::kGuaranteed) == PriorityClass::kFree);
  CHECK(podPriorityClassWithDefault({}, 7100, KubeQoS::kBestEffort) == PriorityClass::kMid);
  CHECK(podPriorityClassWithDefault({{"koordinator.sh/qosClass", "BE"}}, std::nullopt,
                                    KubeQoS::kGuaranteed) == PriorityClass::kBatch);
  CHECK(podPriorityClassWithDefault({}, 0, KubeQoS::kBestEffort) == PriorityClass::kBatch);
  CHECK(podPriorityClassWithDefault({}, std::nullopt, KubeQoS::kBurstable) == PriorityClass::kProd);
}

// The cases of Kubernetes v1.20's pkg/apis/core/v1/helper/qos/qos_test.go (TestGetPodQOS).
TEST_CASE("Kubernetes QoS as GetPodQOS computes it", "[apis][extension]") {
  struct Case {
    const char* name;
    std::vector<ContainerResources> containers;
    KubeQoS expected;
  };
  ResourceList hugepages = cpuMem("0", "0");
  hugepages["hugepages-2Mi"] = Quantity::parse("1Gi").value();
  const std::vector<Case> cases{
      {"guaranteed",
       {container(cpuMem("100m", "100Mi"), cpuMem("100m", "100Mi"))},
       KubeQoS::kGuaranteed},
      {"guaranteed-guaranteed",
       {container(cpuMem("100m", "100Mi"), cpuMem("100m", "100Mi")),
        container(cpuMem("100m", "100Mi"), cpuMem("100m", "100Mi"))},
       KubeQoS::kGuaranteed},
      {"best-effort-best-effort",
       {container(cpuMem("", ""), cpuMem("", "")), container(cpuMem("", ""), cpuMem("", ""))},
       KubeQoS::kBestEffort},
      {"best-effort", {container(cpuMem("", ""), cpuMem("", ""))}, KubeQoS::kBestEffort},
      {"best-effort-burstable",
       {container(cpuMem("", ""), cpuMem("", "")), container(cpuMem("1", ""), cpuMem("2", ""))},
       KubeQoS::kBurstable},
      {"best-effort-guaranteed",
       {container(cpuMem("", ""), cpuMem("", "")),
        container(cpuMem("10m", "100Mi"), cpuMem("10m", "100Mi"))},
       KubeQoS::kBurstable},
      {"burstable-cpu-guaranteed-memory",
       {container(cpuMem("", "100Mi"), cpuMem("", "100Mi"))},
       KubeQoS::kBurstable},
      {"burstable-no-limits",
       {container(cpuMem("100m", "100Mi"), cpuMem("", ""))},
       KubeQoS::kBurstable},
      {"burstable-guaranteed",
       {container(cpuMem("1", "100Mi"), cpuMem("2", "100Mi")),
        container(cpuMem("100m", "100Mi"), cpuMem("100m", "100Mi"))},
       KubeQoS::kBurstable},
      {"burstable-unbounded-but-requests-match-limits",
       {container(cpuMem("100m", "100Mi"), cpuMem("200m", "200Mi")),
        container(cpuMem("100m", "100Mi"), cpuMem("", ""))},
       KubeQoS::kBurstable},
      {"burstable-1",
       {container(cpuMem("10m", "100Mi"), cpuMem("100m", "200Mi"))},
       KubeQoS::kBurstable},
      {"burstable-2", {container(cpuMem("0", "0"), cpuMem("100m", "200Mi"))}, KubeQoS::kBurstable},
      {"best-effort-hugepages", {container(hugepages, hugepages)}, KubeQoS::kBestEffort},
      // init-container: GetPodQOS walks init containers like any other.
      {"init-container",
       {container(cpuMem("", ""), cpuMem("", "")),
        container(cpuMem("10m", "100Mi"), cpuMem("100m", "200Mi"))},
       KubeQoS::kBurstable},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    CHECK(computeKubeQoS(c.containers) == c.expected);
  }
  // Equal values written differently are equal quantities.
  CHECK(computeKubeQoS({container(cpuMem("1", "1Gi"), cpuMem("1000m", "1024Mi"))}) ==
        KubeQoS::kGuaranteed);
  CHECK(computeKubeQoS({}) == KubeQoS::kBestEffort);
}

TEST_CASE("status.qosClass wins over the computation when it is known", "[apis][extension]") {
  std::vector<ContainerResources> guaranteed{
      container(cpuMem("100m", "100Mi"), cpuMem("100m", "100Mi"))};
  CHECK(kubeQoSFromStatus("BestEffort", guaranteed) == KubeQoS::kBestEffort);
  CHECK(kubeQoSFromStatus("Burstable", guaranteed) == KubeQoS::kBurstable);
  CHECK(kubeQoSFromStatus("Guaranteed", {}) == KubeQoS::kGuaranteed);
  CHECK(kubeQoSFromStatus("", guaranteed) == KubeQoS::kGuaranteed);
  CHECK(kubeQoSFromStatus("guaranteed", {}) == KubeQoS::kBestEffort);
}

TEST_CASE("extended resources replace cpu and memory for batch and mid", "[apis][extension]") {
  CHECK(extendedResourceFor(PriorityClass::kBatch, "cpu") == "kubernetes.io/batch-cpu");
  CHECK(extendedResourceFor(PriorityClass::kBatch, "memory") == "kubernetes.io/batch-memory");
  CHECK(extendedResourceFor(PriorityClass::kMid, "cpu") == "kubernetes.io/mid-cpu");
  CHECK(extendedResourceFor(PriorityClass::kMid, "memory") == "kubernetes.io/mid-memory");
  CHECK(extendedResourceFor(PriorityClass::kProd, "cpu").empty());
  CHECK(extendedResourceFor(PriorityClass::kFree, "memory").empty());
  CHECK(extendedResourceFor(PriorityClass::kNone, "cpu").empty());
  CHECK(extendedResourceFor(PriorityClass::kBatch, "ephemeral-storage").empty());
  CHECK(extendedResourceFor(PriorityClass::kBatch, "nvidia.com/gpu").empty());
}
