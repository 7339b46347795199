#include "qosmanager/cpusuppress/cpu_suppress_calculator.h"

#include <limits>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

using namespace koord::roles::koordlet::qosmanager;
using koord::apis::KubeQoS;
using koord::apis::QoSClass;

namespace {

PodCPUUsage pod(std::int64_t milli, QoSClass koord_qos, KubeQoS kube_qos) {
  return PodCPUUsage{
      .used_milli = milli, .known = true, .koord_qos = koord_qos, .kube_qos = kube_qos};
}

PodCPUUsage unknownPod(std::int64_t milli) {
  PodCPUUsage p;
  p.used_milli = milli;
  p.known = false;
  return p;
}

HostAppCPUUsage hostApp(std::int64_t milli, QoSClass qos, bool under_besteffort) {
  return HostAppCPUUsage{
      .used_milli = milli, .qos = qos, .under_kube_besteffort = under_besteffort};
}

// Koordinator's test node: 20 cores, threshold 70% => a 14-core budget for LS + system.
SuppressInput node20(std::int64_t used_milli) {
  SuppressInput in;
  in.node_capacity_milli = 20000;
  in.node_used_milli = used_milli;
  in.threshold_percent = 70;
  return in;
}

struct Case {
  std::string name;
  SuppressInput in;
  SuppressResult want;
};

}  // namespace

TEST_CASE("BE classification of pods reads the koord label and the Kubernetes QoS apart") {
  CHECK(isNonBEPod(QoSClass::kLS, KubeQoS::kBurstable));
  CHECK(isNonBEPod(QoSClass::kLSR, KubeQoS::kGuaranteed));
  CHECK(isNonBEPod(QoSClass::kNone, KubeQoS::kBurstable));
  CHECK(isNonBEPod(QoSClass::kSystem, KubeQoS::kGuaranteed));
  CHECK_FALSE(isNonBEPod(QoSClass::kBE, KubeQoS::kBurstable));
  // A plain BestEffort pod without a koord label is BE, as is a mislabelled one.
  CHECK_FALSE(isNonBEPod(QoSClass::kNone, KubeQoS::kBestEffort));
  CHECK_FALSE(isNonBEPod(QoSClass::kLS, KubeQoS::kBestEffort));
}

TEST_CASE("BE classification of host apps needs BE QoS and the besteffort cgroup") {
  CHECK_FALSE(isNonBEHostApp(QoSClass::kBE, true));
  CHECK(isNonBEHostApp(QoSClass::kBE, false));
  CHECK(isNonBEHostApp(QoSClass::kLS, true));
  CHECK(isNonBEHostApp(QoSClass::kNone, false));
}

TEST_CASE("suppress formula, hand-computed cases") {
  std::vector<Case> cases;
  {
    Case c{"empty input", SuppressInput{}, {}};
    c.in.threshold_percent = 70;
    cases.push_back(c);
  }
  {
    // Koordinator's case: a metric without a pod (uid abc) counts as non-BE; system usage
    // 11 - 8 - 4 < 0 is clamped to 0. 14 - 8 - 0 = 6.
    Case c{"pod metric without pod meta is non-BE", node20(11000), {}};
    c.in.pods = {unknownPod(8000), pod(4000, QoSClass::kBE, KubeQoS::kBestEffort)};
    c.want = {.non_be_pods_used_milli = 8000,
              .non_be_host_apps_used_milli = 0,
              .system_used_milli = 0,
              .suppress_milli = 6000};
    cases.push_back(c);
  }
  {
    // 14 - 8 (LS) - (12 - 8 - 2) = 4.
    Case c{"LS and BE pods", node20(12000), {}};
    c.in.pods = {pod(8000, QoSClass::kLS, KubeQoS::kGuaranteed),
                 pod(2000, QoSClass::kBE, KubeQoS::kBestEffort)};
    c.want = {8000, 0, 2000, 4000};
    cases.push_back(c);
  }
  {
    // The unlabelled BestEffort pod is BE: only the Burstable one counts. 14 - 5 - 1 = 8.
    Case c{"BestEffort pod without a koord label is BE", node20(12000), {}};
    c.in.pods = {pod(5000, QoSClass::kNone, KubeQoS::kBurstable),
                 pod(6000, QoSClass::kNone, KubeQoS::kBestEffort)};
    c.want = {5000, 0, 1000, 8000};
    cases.push_back(c);
  }
  {
    // Both are BE: one by label, one by Kubernetes QoS despite an LS label. 14 - 0 - 2 = 12.
    Case c{"BE label or BestEffort QoS makes a pod BE", node20(10000), {}};
    c.in.pods = {pod(3000, QoSClass::kBE, KubeQoS::kGuaranteed),
                 pod(5000, QoSClass::kLS, KubeQoS::kBestEffort)};
    c.want = {0, 0, 2000, 12000};
    cases.push_back(c);
  }
  {
    // Koordinator's case: 14 - 8 - 1 (LS app) - (12 - 8 - 2 - 1) = 4.
    Case c{"LS host app is subtracted and not system", node20(12000), {}};
    c.in.pods = {pod(8000, QoSClass::kLS, KubeQoS::kGuaranteed),
                 pod(2000, QoSClass::kBE, KubeQoS::kBestEffort)};
    c.in.host_apps = {hostApp(1000, QoSClass::kLS, false)};
    c.want = {8000, 1000, 1000, 4000};
    cases.push_back(c);
  }
  {
    // Koordinator's case: 14 - 8 - 0 (BE app under besteffort) - 1 = 5.
    Case c{"BE host app under besteffort is BE", node20(12000), {}};
    c.in.pods = {pod(8000, QoSClass::kLS, KubeQoS::kGuaranteed),
                 pod(2000, QoSClass::kBE, KubeQoS::kBestEffort)};
    c.in.host_apps = {hostApp(1000, QoSClass::kBE, true)};
    c.want = {8000, 0, 1000, 5000};
    cases.push_back(c);
  }
  {
    // A BE app outside the besteffort cgroup is not held back by it, so it counts: 4.
    Case c{"BE host app elsewhere is non-BE", node20(12000), {}};
    c.in.pods = {pod(8000, QoSClass::kLS, KubeQoS::kGuaranteed),
                 pod(2000, QoSClass::kBE, KubeQoS::kBestEffort)};
    c.in.host_apps = {hostApp(1000, QoSClass::kBE, false)};
    c.want = {8000, 1000, 1000, 4000};
    cases.push_back(c);
  }
  {
    // System uses 12 - 10 = 2 but 3 are reserved: 14 - 8 - 3 = 3.
    Case c{"reserved above system usage wins", node20(12000), {}};
    c.in.node_reserved_milli = 3000;
    c.in.pods = {pod(8000, QoSClass::kLS, KubeQoS::kGuaranteed),
                 pod(2000, QoSClass::kBE, KubeQoS::kBestEffort)};
    c.want = {8000, 0, 3000, 3000};
    cases.push_back(c);
  }
  {
    // System uses 2, only 1 reserved: 14 - 8 - 2 = 4.
    Case c{"system usage above reserved wins", node20(12000), {}};
    c.in.node_reserved_milli = 1000;
    c.in.pods = {pod(8000, QoSClass::kLS, KubeQoS::kGuaranteed),
                 pod(2000, QoSClass::kBE, KubeQoS::kBestEffort)};
    c.want = {8000, 0, 2000, 4000};
    cases.push_back(c);
  }
  {
    // Koordinator's case: 4 by the formula, raised to 20 x 60% = 12.
    Case c{"min percent floors the result", node20(12000), {}};
    c.in.min_percent = 60;
    c.in.pods = {pod(8000, QoSClass::kLS, KubeQoS::kGuaranteed),
                 pod(2000, QoSClass::kBE, KubeQoS::kBestEffort)};
    c.want = {8000, 0, 2000, 12000};
    cases.push_back(c);
  }
  {
    // Below the floor's value it changes nothing: 4 > 20 x 10% = 2.
    Case c{"min percent below the result is inert", node20(12000), {}};
    c.in.min_percent = 10;
    c.in.pods = {pod(8000, QoSClass::kLS, KubeQoS::kGuaranteed),
                 pod(2000, QoSClass::kBE, KubeQoS::kBestEffort)};
    c.want = {8000, 0, 2000, 4000};
    cases.push_back(c);
  }
  {
    // 10 cores x 65% = 6.5; LS 9, system 0.5: 6.5 - 9 - 0.5 = -3, kept negative.
    Case c{"overloaded node goes negative without a floor", SuppressInput{}, {}};
    c.in.node_capacity_milli = 10000;
    c.in.node_used_milli = 9500;
    c.in.pods = {pod(9000, QoSClass::kLS, KubeQoS::kBurstable)};
    c.want = {9000, 0, 500, -3000};
    cases.push_back(c);
    c.name = "overloaded node with a floor";
    c.in.min_percent = 10;
    c.want.suppress_milli = 1000;
    cases.push_back(c);
  }
  {
    // 3.333 cores x 65 / 100 = 2.16645, truncated to 2166 milli.
    Case c{"percent product truncates", SuppressInput{}, {}};
    c.in.node_capacity_milli = 3333;
    c.want = {0, 0, 0, 2166};
    cases.push_back(c);
  }

  for (const Case& c : cases) {
    INFO(c.name);
    const SuppressResult got = calculateBESuppressCPU(c.in);
    CHECK(got.non_be_pods_used_milli == c.want.non_be_pods_used_milli);
    CHECK(got.non_be_host_apps_used_milli == c.want.non_be_host_apps_used_milli);
    CHECK(got.system_used_milli == c.want.system_used_milli);
    CHECK(got.suppress_milli == c.want.suppress_milli);
  }
}

// koord top runs this formula on NodeMetric figures anyone with write access can set: sums and
// products saturate instead of overflowing (UBSan fails the old arithmetic here).
TEST_CASE("suppress formula saturates on absurd figures") {
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  SuppressInput in = node20(kMax);
  in.node_capacity_milli = kMax;
  in.threshold_percent = 100;
  in.min_percent = 100;
  in.pods = {unknownPod(kMax), unknownPod(kMax)};
  in.host_apps = {hostApp(kMax, QoSClass::kLS, false)};
  const SuppressResult r = calculateBESuppressCPU(in);
  CHECK(r.non_be_pods_used_milli == kMax);
  CHECK(r.non_be_host_apps_used_milli == kMax);
  CHECK(r.suppress_milli == kMax / 100);
  in.node_used_milli = std::numeric_limits<std::int64_t>::min();
  in.min_percent.reset();
  CHECK(calculateBESuppressCPU(in).system_used_milli == 0);
}
