// What the descheduler's informers keep of a Pod, a Node and a PodDisruptionBudget, and the
// objects they refuse (naming the field) rather than act on.
#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>
#include <string>

#include "framework/object_decode.h"

using namespace koord::roles::descheduler;
namespace json = boost::json;

TEST_CASE("a pod's projection carries what the plugins and the evictor read") {
  const auto v = json::parse(R"({
    "metadata": {"namespace": "web", "name": "w-1", "uid": "u1", "resourceVersion": "9",
      "labels": {"app": "w", "koordinator.sh/qosClass": "BE"},
      "annotations": {"kubernetes.io/config.source": "file", "big": "ignored"},
      "creationTimestamp": "2026-11-28T00:00:00Z",
      "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "w-abc",
                           "uid": "rs1", "controller": true}]},
    "spec": {"nodeName": "n1", "schedulerName": "koord-scheduler", "priority": 5000,
      "nodeSelector": {"pool": "a"},
      "tolerations": [{"key": "k", "operator": "Exists", "effect": "NoSchedule"}],
      "affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
          {"labelSelector": {"matchLabels": {"app": "w"}}, "topologyKey": "kubernetes.io/hostname"}]}},
      "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "zone",
          "whenUnsatisfiable": "ScheduleAnyway", "labelSelector": {"matchLabels": {"app": "w"}}}],
      "initContainers": [{"name": "i", "image": "init", "resources": {"requests": {"cpu": "2"}}}],
      "containers": [
        {"name": "a", "image": "img-a", "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}}},
        {"name": "b", "image": "img-b", "resources": {"requests": {"cpu": "250m"}}}],
      "overhead": {"memory": "64Mi"},
      "volumes": [{"name": "scratch", "emptyDir": {}}, {"name": "data", "persistentVolumeClaim": {"claimName": "d"}}]},
    "status": {"phase": "Running", "qosClass": "Burstable", "startTime": "2026-11-28T00:00:05Z",
      "containerStatuses": [{"name": "a", "restartCount": 3,
        "state": {"waiting": {"reason": "CrashLoopBackOff"}}}]}
  })");
  auto p = decodePod(v);
  REQUIRE(p.has_value());
  CHECK(p->key() == "web/w-1");
  CHECK(p->node_name == "n1");
  CHECK(p->priority == 5000);
  CHECK(p->static_pod);
  CHECK_FALSE(p->mirror);
  CHECK_FALSE(p->annotations.contains("big"));
  REQUIRE(p->controller() != nullptr);
  CHECK(p->controller()->name == "w-abc");
  CHECK(p->requests.at("cpu") == 2000);  // the init container's 2 cores exceed 750m
  CHECK(p->requests.at("memory") == (std::int64_t{1} << 30) + (std::int64_t{64} << 20));
  CHECK(p->container_images == std::vector<std::string>{"img-a", "img-b"});
  CHECK(p->has_local_storage);
  CHECK(p->has_pvc);
  CHECK(p->tolerations.size() == 1);
  REQUIRE(p->required_anti_affinity.size() == 1);
  CHECK(p->required_anti_affinity[0].topology_key == "kubernetes.io/hostname");
  REQUIRE(p->topology_spread.size() == 1);
  CHECK(p->topology_spread[0].when_unsatisfiable == UnsatisfiableConstraintAction::kScheduleAnyway);
  CHECK(p->phase == PodPhase::kRunning);
  REQUIRE(p->container_statuses.size() == 1);
  CHECK(p->container_statuses[0].restart_count == 3);
  CHECK(p->container_statuses[0].waiting_reason == "CrashLoopBackOff");
  CHECK(p->qos == koord::apis::QoSClass::kBE);
  CHECK(p->start_time.has_value());
}

TEST_CASE("a pod keeps Kubernetes' QoS apart from Koordinator's") {
  SECTION("status.qosClass is the Kubernetes class whatever the koord label says") {
    auto p = decodePod(json::parse(R"({"metadata": {"labels": {"koordinator.sh/qosClass": "LS"}},
                                       "status": {"qosClass": "Guaranteed"}})"));
    REQUIRE(p.has_value());
    CHECK(p->kube_qos == koord::apis::KubeQoS::kGuaranteed);
    CHECK(p->qos == koord::apis::QoSClass::kLS);
  }
  SECTION("unlabelled, Koordinator's QoS follows the Kubernetes class") {
    auto p = decodePod(json::parse(R"({"status": {"qosClass": "Burstable"}})"));
    REQUIRE(p.has_value());
    CHECK(p->kube_qos == koord::apis::KubeQoS::kBurstable);
    CHECK(p->qos == koord::apis::QoSClass::kLS);
  }
  SECTION("without status.qosClass the containers' requests and limits decide") {
    auto p = decodePod(json::parse(R"({"spec": {"containers": [{"name": "a", "resources": {
        "requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"cpu": "1", "memory": "1Gi"}}}]}})"));
    REQUIRE(p.has_value());
    CHECK(p->kube_qos == koord::apis::KubeQoS::kGuaranteed);
    CHECK(p->qos == koord::apis::QoSClass::kLSR);
    auto empty = decodePod(json::parse(R"({"spec": {"containers": [{"name": "a"}]}})"));
    REQUIRE(empty.has_value());
    CHECK(empty->kube_qos == koord::apis::KubeQoS::kBestEffort);
  }
  SECTION("a limit that does not parse is refused when it decides the class") {
    auto p = decodePod(json::parse(
        R"({"spec": {"containers": [{"name": "a", "resources": {"limits": {"cpu": "lots"}}}]}})"));
    REQUIRE_FALSE(p.has_value());
    CHECK(p.error().message.find("spec.containers[0].resources.limits") != std::string::npos);
  }
}

TEST_CASE("pods the descheduler must not act on are refused, naming the field") {
  struct Case {
    const char* name;
    const char* json;
    const char* field;
  };
  const Case cases[] = {
      {"not an object", "[]", "expected object"},
      {"bad phase", R"({"status": {"phase": "Sleeping"}})", "status.phase"},
      {"bad request", R"({"spec": {"containers": [{"resources": {"requests": {"cpu": "lots"}}}]}})",
       "spec.containers[0].resources.requests"},
      {"priority out of int32", R"({"spec": {"priority": 99999999999}})", "spec.priority"},
      {"zero maxSkew",
       R"({"spec": {"topologySpreadConstraints": [{"maxSkew": 0, "topologyKey": "z"}]}})",
       "spec.topologySpreadConstraints[0].maxSkew"},
      {"bad whenUnsatisfiable",
       R"({"spec": {"topologySpreadConstraints": [{"maxSkew": 1, "whenUnsatisfiable": "Maybe"}]}})",
       "whenUnsatisfiable"},
      {"bad owner reference", R"({"metadata": {"ownerReferences": [{"controller": "yes"}]}})",
       "metadata.ownerReferences[0].controller"},
      {"bad anti-affinity selector",
       R"({"spec": {"affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{"labelSelector": {"matchExpressions": [{"key": "a", "operator": "Near"}]}}]}}}})",
       "podAntiAffinity"},
  };
  for (const auto& tc : cases) {
    SECTION(tc.name) {
      auto p = decodePod(json::parse(tc.json));
      REQUIRE_FALSE(p.has_value());
      INFO(p.error().message);
      CHECK(p.error().message.find(tc.field) != std::string::npos);
    }
  }
}

TEST_CASE("requests too large to add up stick at the int64 bound") {
  // Found by descheduler_objects_fuzz: the sum of the containers' requests overflowed.
  auto p = decodePod(json::parse(R"({"spec": {
      "containers": [{"name": "a", "resources": {"requests": {"cpu": "9223372036854775807"}}},
                     {"name": "b", "resources": {"requests": {"cpu": "1", "memory": "8Ei"}}}],
      "overhead": {"memory": "8Ei"}}})"));
  REQUIRE(p.has_value());
  CHECK(p->requests.at("cpu") == std::numeric_limits<std::int64_t>::max());
  CHECK(p->requests.at("memory") == std::numeric_limits<std::int64_t>::max());
}

TEST_CASE("more containers than any kubelet runs is refused") {
  json::array list;
  for (std::size_t i = 0; i <= kMaxContainersPerPod; ++i)
    list.push_back(json::object{{"name", "c"}});
  auto p = decodePod(json::object{{"spec", json::object{{"containers", list}}}});
  REQUIRE_FALSE(p.has_value());
  CHECK(p.error().message.find("more than") != std::string::npos);
}

TEST_CASE("a node's projection: allocatable, taints, schedulable and Ready") {
  auto n = decodeNode(json::parse(R"({
    "metadata": {"name": "n1", "labels": {"zone": "a"}},
    "spec": {"unschedulable": true, "taints": [{"key": "k", "value": "v", "effect": "NoExecute"}]},
    "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"},
      "conditions": [{"type": "MemoryPressure", "status": "False"}, {"type": "Ready", "status": "True"}]}
  })"));
  REQUIRE(n.has_value());
  CHECK(n->name == "n1");
  CHECK(n->unschedulable);
  CHECK(n->ready);
  CHECK(n->allocatable.at("cpu") == 4000);
  CHECK(n->allocatable.at("pods") == 110);
  REQUIRE(n->taints.size() == 1);
  CHECK(n->taints[0].effect == koord::kube::TaintEffect::kNoExecute);
  // No Ready condition reported yet: not ready.
  auto fresh = decodeNode(json::parse(R"({"metadata": {"name": "n2"}})"));
  REQUIRE(fresh.has_value());
  CHECK_FALSE(fresh->ready);
}

TEST_CASE("a PodDisruptionBudget's selector and allowed disruptions") {
  auto pdb = decodePodDisruptionBudget(json::parse(R"({
    "metadata": {"namespace": "web", "name": "w"},
    "spec": {"minAvailable": 2, "selector": {"matchLabels": {"app": "w"}}},
    "status": {"disruptionsAllowed": 0}})"));
  REQUIRE(pdb.has_value());
  CHECK(pdb->has_selector);
  CHECK(pdb->selector.matches({{"app", "w"}}));
  CHECK(pdb->disruptions_allowed == 0);
}
