#include "noderesource/node_view.h"

#include <boost/json.hpp>

#include <catch2/catch.hpp>

using namespace koord::roles::manager::noderesource;
using koord::apis::PriorityClass;
using koord::apis::QoSClass;
using koord::kube::Quantity;

namespace {

Quantity q(std::string_view text) {
  return Quantity::parse(text).value();
}

template <typename T>
std::string errorOf(const koord::kube::Expected<T>& r) {
  REQUIRE_FALSE(r.has_value());
  return r.error().message;
}

koord::kube::Expected<NodeView> node(std::string_view text) {
  return decodeNodeView(boost::json::parse(text));
}

koord::kube::Expected<PodView> pod(std::string_view text) {
  return decodePodView(boost::json::parse(text));
}

}  // namespace

TEST_CASE("node view decodes what the controller reads", "[manager][noderesource][decode]") {
  auto n = node(R"({"kind":"Node","metadata":{"name":"n1","uid":"u",
      "labels":{"zone":"a"},
      "annotations":{"node.koordinator.sh/reservation":
        "{\"resources\":{\"cpu\":\"2\",\"memory\":\"4Gi\"},\"reservedCPUs\":\"0-3,8\",\"applyPolicy\":\"Default\"}"}},
    "spec":{"podCIDR":"10.0.0.0/24"},
    "status":{
      "capacity":{"cpu":"32","memory":"131072Mi","pods":"110","kubernetes.io/batch-cpu":"12000"},
      "allocatable":{"cpu":"31500m","memory":"130000Mi","pods":"110",
                     "kubernetes.io/batch-cpu":"12000","kubernetes.io/batch-memory":"40Gi"}}})");
  REQUIRE(n.has_value());
  CHECK(n->name == "n1");
  CHECK(n->labels.at("zone") == "a");
  CHECK(n->capacity.at("cpu") == q("32"));
  CHECK(n->allocatable.at("cpu") == q("31500m"));
  CHECK(n->current_batch.cpu == q("12000"));
  CHECK(n->current_batch.memory == q("40Gi"));
  REQUIRE(n->reservation.has_value());
  // reservedCPUs "0-3,8" is 5 cpus and replaces resources' cpu.
  CHECK(n->reservation->at("cpu") == q("5"));
  CHECK(n->reservation->at("memory") == q("4Gi"));
  CHECK(n->reservation_error.empty());

  auto bare = node(R"({"metadata":{"name":"n2"}})");
  REQUIRE(bare.has_value());
  CHECK_FALSE(bare->current_batch.cpu.has_value());
  CHECK_FALSE(bare->reservation.has_value());
}

TEST_CASE("a malformed reservation annotation is ignored with its reason",
          "[manager][noderesource][decode]") {
  struct Case {
    const char* annotation;
    const char* reason;  // a fragment of reservation_error; "" when none
    bool has_reservation;
  };
  const Case cases[] = {
      {R"({not json)", "invalid JSON", false},
      {R"([1,2])", "expected object", false},
      {R"({"resources":{"cpu":"2x"}})", "resources[cpu]", false},
      {R"({"resources":"2"})", "resources: expected object", false},
      {R"({"reservedCPUs":"3-1"})", "reservedCPUs", false},
      {R"({"reservedCPUs":"a"})", "reservedCPUs", false},
      {R"({"reservedCPUs":7})", "reservedCPUs: expected string", false},
      {R"(null)", "", false},  // Go leaves the pointer nil: no reservation, no error
      {R"({})", "", true},
      {R"({"resources":null,"reservedCPUs":""})", "", true},
  };
  for (const auto& c : cases) {
    INFO("annotation: " << c.annotation);
    boost::json::object root;
    root["metadata"] = {{"name", "n"},
                        {"annotations", {{"node.koordinator.sh/reservation", c.annotation}}}};
    auto n = decodeNodeView(root);
    REQUIRE(n.has_value());
    CHECK(n->reservation.has_value() == c.has_reservation);
    if (*c.reason == '\0') {
      CHECK(n->reservation_error.empty());
    } else {
      CHECK_THAT(n->reservation_error, Catch::Contains(c.reason));
      CHECK_THAT(n->reservation_error, Catch::Contains("node.koordinator.sh/reservation"));
    }
  }
}

TEST_CASE("cpuset lists are counted without expanding them", "[manager][noderesource][decode]") {
  CHECK(countCPUSet("").value() == 0);
  CHECK(countCPUSet("0").value() == 1);
  CHECK(countCPUSet("0-3,8,10-11").value() == 7);
  CHECK(countCPUSet("0-5,3-7").value() == 8);
  CHECK(countCPUSet("4,4,4").value() == 1);
  CHECK(countCPUSet("+2").value() == 1);
  CHECK(countCPUSet("0-4000000000").value() == 4000000001);
  for (const char* bad : {"1-", "-1", ",", "0,", "3-1", "a", "1-2-3", " 1", "99999999999999999999"})
    CHECK_FALSE(countCPUSet(bad).has_value());
}

TEST_CASE("node view errors name the field", "[manager][noderesource][decode]") {
  CHECK(errorOf(node(R"([])")) == "Node: expected object, got array");
  CHECK(errorOf(node(R"({"metadata":"x"})")) == "metadata: expected object, got string");
  CHECK(errorOf(node(R"({"metadata":{"name":5}})")) ==
        "metadata.name: expected string, got number");
  CHECK(errorOf(node(R"({"status":{"capacity":"32"}})")) ==
        "status.capacity: expected object, got string");
  CHECK_THAT(errorOf(node(R"({"status":{"allocatable":{"cpu":"lots"}}})")),
             Catch::StartsWith("status.allocatable[cpu]: "));
  CHECK_THAT(errorOf(node(R"({"metadata":{"annotations":{"a":1}}})")),
             Catch::StartsWith("metadata.annotations[a]: "));
}

TEST_CASE("pod view takes Kubernetes' effective request", "[manager][noderesource][decode]") {
  // containers 1 + 2 cores; the init container's 4 cores is the floor; overhead 250m on top.
  // memory: containers 1Gi + 1Gi = 2Gi beats the init container's 1Gi; + 128Mi overhead.
  auto p = pod(R"({"metadata":{"namespace":"ns","name":"p","uid":"u1"},
    "spec":{"nodeName":"n1",
      "containers":[{"name":"a","resources":{"requests":{"cpu":"1","memory":"1Gi"}}},
                    {"name":"b","resources":{"requests":{"cpu":"2","memory":"1Gi"}}}],
      "initContainers":[{"name":"i","resources":{"requests":{"cpu":"4","memory":"1Gi"}}}],
      "overhead":{"cpu":"250m","memory":"128Mi"}},
    "status":{"phase":"Running","qosClass":"Burstable"}})");
  REQUIRE(p.has_value());
  CHECK(p->namespace_ == "ns");
  CHECK(p->name == "p");
  CHECK(p->uid == "u1");
  CHECK(p->node_name == "n1");
  CHECK(p->phase == PodPhase::kRunning);
  CHECK(p->requests.cpu == q("4250m"));
  CHECK(p->requests.memory == q("2176Mi"));

  // Sidecars (restartPolicy Always) run beside the containers: containers 1 + sidecar 1 = 2;
  // the later init container runs with the sidecar: 2 + 1 = 3, which is the floor.
  auto sidecar = pod(R"({"spec":{
      "containers":[{"resources":{"requests":{"cpu":"1"}}}],
      "initContainers":[{"restartPolicy":"Always","resources":{"requests":{"cpu":"1"}}},
                        {"resources":{"requests":{"cpu":"2"}}}]}})");
  REQUIRE(sidecar.has_value());
  CHECK(sidecar->requests.cpu == q("3"));
  CHECK(sidecar->requests.memory == q("0"));

  // Pod-level requests replace the containers' sum where set; overhead still adds.
  auto pod_level = pod(R"({"spec":{
      "resources":{"requests":{"cpu":"5"}},
      "containers":[{"resources":{"requests":{"cpu":"1","memory":"1Gi"}}}],
      "overhead":{"cpu":"100m"}}})");
  REQUIRE(pod_level.has_value());
  CHECK(pod_level->requests.cpu == q("5100m"));
  CHECK(pod_level->requests.memory == q("1Gi"));
}

TEST_CASE("pod view resolves koord QoS and priority with defaults",
          "[manager][noderesource][decode]") {
  struct Case {
    const char* json;
    QoSClass qos;
    PriorityClass priority;
  };
  const Case cases[] = {
      {R"({"metadata":{"labels":{"koordinator.sh/qosClass":"LSE"}},"status":{"qosClass":"Guaranteed"}})",
       QoSClass::kLSE, PriorityClass::kProd},
      {R"({"status":{"qosClass":"BestEffort"}})", QoSClass::kBE, PriorityClass::kBatch},
      {R"({"status":{"qosClass":"Burstable"}})", QoSClass::kLS, PriorityClass::kProd},
      {R"({"spec":{"priority":5500},"status":{"qosClass":"Burstable"}})", QoSClass::kLS,
       PriorityClass::kBatch},
      {R"({"metadata":{"labels":{"koordinator.sh/priority-class":"koord-free"}},"spec":{"priority":9000}})",
       QoSClass::kBE, PriorityClass::kFree},
      {R"({"metadata":{"labels":{"koordinator.sh/priority-class":"koord-mid","koordinator.sh/qosClass":"LS"}}})",
       QoSClass::kLS, PriorityClass::kMid},
      // No status.qosClass: computed from the containers (requests == limits: Guaranteed).
      {R"({"spec":{"containers":[{"resources":{"limits":{"cpu":"1","memory":"1Gi"},
          "requests":{"cpu":"1","memory":"1Gi"}}}]}})",
       QoSClass::kLSR, PriorityClass::kProd},
  };
  for (const auto& c : cases) {
    INFO(c.json);
    auto p = pod(c.json);
    REQUIRE(p.has_value());
    CHECK(p->qos == c.qos);
    CHECK(p->priority == c.priority);
    CHECK(p->isLSE() == (c.qos == QoSClass::kLSE));
  }
}

TEST_CASE("pod phases", "[manager][noderesource][decode]") {
  auto phase = [](const char* name) {
    boost::json::object o;
    o["status"] = {{"phase", name}};
    return decodePodView(o).value();
  };
  CHECK(phase("Running").isActive());
  CHECK(phase("Pending").isActive());
  CHECK_FALSE(phase("Succeeded").isActive());
  CHECK_FALSE(phase("Failed").isActive());
  CHECK_FALSE(phase("Unknown").isActive());
  CHECK(phase("Failed").phase == PodPhase::kFailed);
}

TEST_CASE("pod view errors name the field", "[manager][noderesource][decode]") {
  CHECK(errorOf(pod(R"("pod")")) == "Pod: expected object, got string");
  CHECK_THAT(
      errorOf(pod(R"({"spec":{"containers":[{},{"resources":{"requests":{"cpu":"1x"}}}]}})")),
      Catch::StartsWith("spec.containers[1].resources.requests[cpu]: "));
  CHECK(errorOf(pod(R"({"spec":{"initContainers":[5]}})")) ==
        "spec.initContainers[0]: expected object, got number");
  CHECK(errorOf(pod(R"({"spec":{"containers":{}}})")) ==
        "spec.containers: expected array, got object");
  CHECK(errorOf(pod(R"({"spec":{"priority":"high"}})")) ==
        "spec.priority: expected int32, got string");
  CHECK(errorOf(pod(R"({"spec":{"priority":10000000000}})")) ==
        "spec.priority: expected int32, got number");
  CHECK(errorOf(pod(R"({"status":{"phase":1}})")) == "status.phase: expected string, got number");
  CHECK_THAT(errorOf(pod(R"({"spec":{"overhead":{"memory":[]}}})")),
             Catch::StartsWith("spec.overhead[memory]: "));
  CHECK(errorOf(pod(R"({"metadata":{"labels":{"a":true}}})")) ==
        "metadata.labels[a]: expected string, got boolean");
}
