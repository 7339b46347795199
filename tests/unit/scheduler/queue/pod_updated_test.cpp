#include "queue/pod_updated.h"

#include <catch2/catch.hpp>

#include <functional>
#include <string>
#include <vector>

#include "fixture.h"

namespace koord::roles::scheduler::queue_testing {
namespace {

PodAffinityTerm termOn(std::string key) {
  PodAffinityTerm t;
  t.topology_key = std::move(key);
  return t;
}

TEST_CASE("isPodUpdated ignores status and resourceVersion only", "[scheduler][queue][update]") {
  struct Case {
    std::string name;
    std::function<void(PodInfo&)> change;
    bool want;
  };
  const std::vector<Case> cases = {
      {"nothing", [](PodInfo&) {}, false},
      {"resourceVersion", [](PodInfo& p) { p.resource_version = "2"; }, false},
      {"phase", [](PodInfo& p) { p.phase = PodPhase::kRunning; }, false},
      {"nominatedNodeName", [](PodInfo& p) { p.nominated_node_name = "n"; }, false},
      {"labels", [](PodInfo& p) { p.labels["a"] = "b"; }, true},
      {"annotations", [](PodInfo& p) { p.annotations["a"] = "b"; }, true},
      {"deletionTimestamp", [](PodInfo& p) { p.terminating = true; }, true},
      {"nodeName", [](PodInfo& p) { p.node_name = "n"; }, true},
      {"priority", [](PodInfo& p) { p.priority = 7; }, true},
      {"requests", [](PodInfo& p) { p.requests.milli_cpu = 100; }, true},
      {"limits", [](PodInfo& p) { p.limits.memory = 1; }, true},
      {"hostPorts", [](PodInfo& p) { p.host_ports.push_back(HostPort{.port = 80}); }, true},
      {"nodeSelector", [](PodInfo& p) { p.node_selector["zone"] = "a"; }, true},
      {"nodeAffinity", [](PodInfo& p) { p.node_affinity = kube::NodeAffinity{}; }, true},
      {"tolerations", [](PodInfo& p) { p.tolerations.push_back(kube::Toleration{}); }, true},
      {"pod affinity term", [](PodInfo& p) { p.pod_affinity.required.push_back(termOn("z")); },
       true},
      {"pod affinity topology key",
       [](PodInfo& p) { p.pod_anti_affinity.required.front().topology_key = "other"; }, true},
      {"preferred weight", [](PodInfo& p) { p.pod_affinity.preferred.front().weight = 2; }, true},
      {"spread constraint skew",
       [](PodInfo& p) { p.topology_spread_constraints.front().max_skew = 3; }, true},
      {"qos", [](PodInfo& p) { p.qos = apis::QoSClass::kBE; }, true},
  };
  PodInfo base = *makePod("p");
  base.pod_anti_affinity.required.push_back(termOn("zone"));
  base.pod_affinity.preferred.push_back(
      WeightedPodAffinityTerm{.weight = 1, .term = termOn("zone")});
  TopologySpreadConstraint spread;
  spread.topology_key = "zone";
  base.topology_spread_constraints.push_back(spread);
  for (const auto& c : cases) {
    INFO(c.name);
    PodInfo changed = base;
    c.change(changed);
    CHECK(isPodUpdated(base, changed) == c.want);
    CHECK(isPodUpdated(changed, base) == c.want);
  }
}

}  // namespace
}  // namespace koord::roles::scheduler::queue_testing
