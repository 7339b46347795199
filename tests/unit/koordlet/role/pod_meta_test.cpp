#include <boost/json.hpp>

#include <catch2/catch.hpp>

#include "catch_expected.h"
#include "statesinformer/pod_meta.h"

using namespace koord::roles::koordlet;
namespace json = boost::json;

namespace {

const std::string kId(64, 'c');

json::value bePod() {
  return json::parse(R"({
    "metadata": {"namespace": "spark", "name": "exec-1", "uid": "6e2b5f4e-2c6a-4f0c-9a51-2d8a1c0f3b7e",
                 "labels": {"koordinator.sh/qosClass": "BE"}},
    "spec": {"priority": 5000, "containers": [
      {"name": "main", "resources": {"requests": {"kubernetes.io/batch-cpu": "1000",
                                                  "kubernetes.io/batch-memory": "2Gi"},
                                     "limits": {"kubernetes.io/batch-cpu": "2000",
                                                "kubernetes.io/batch-memory": "2Gi"}}},
      {"name": "side"}]},
    "status": {"phase": "Running", "qosClass": "BestEffort", "containerStatuses": [
      {"name": "main", "containerID": "containerd://)" +
                     kId + R"("},
      {"name": "side", "containerID": "containerd://../../etc"}]}})");
}

}  // namespace

TEST_CASE("a BE pod with batch resources") {
  auto pod = decodePodMeta(bePod());
  REQUIRE(pod);
  CHECK(pod->key() == "spark/exec-1");
  CHECK(pod->phase == PodPhase::kRunning);
  CHECK(pod->kube_qos == koord::apis::KubeQoS::kBestEffort);
  CHECK(pod->qos == koord::apis::QoSClass::kBE);
  CHECK(pod->priority == koord::apis::PriorityClass::kBatch);
  CHECK(pod->priority_value == 5000);
  CHECK(pod->isBE());
  REQUIRE(pod->containers.size() == 2);
  CHECK(pod->containers[0].runtime == "containerd");
  CHECK(pod->containers[0].id == kId);
  CHECK(pod->containers[0].limits.at("kubernetes.io/batch-cpu").value() == 2000);
  // A hostile container ID never becomes a path component.
  CHECK(pod->containers[1].id.empty());
  CHECK_FALSE(pod->containers[1].id_error.empty());
}

TEST_CASE("QoS follows the Kubernetes class when no koord label is set") {
  auto v = json::parse(R"({"metadata": {"namespace": "web", "name": "nginx",
    "uid": "0123456789abcdef0123456789abcdef"},
    "spec": {"containers": [{"name": "nginx", "resources": {"requests": {"cpu": "500m"}}}]},
    "status": {"phase": "Running"}})");
  auto pod = decodePodMeta(v);
  REQUIRE(pod);
  CHECK(pod->kube_qos == koord::apis::KubeQoS::kBurstable);
  CHECK(pod->qos == koord::apis::QoSClass::kLS);
  CHECK(pod->priority == koord::apis::PriorityClass::kProd);
  CHECK_FALSE(pod->isBE());
  CHECK(pod->containers[0].id.empty());
}

TEST_CASE("malformed pods are errors naming the field; a list keeps the good ones") {
  CHECK_FALSE(decodePodMeta(json::parse(R"({"metadata": {"name": "x"}})")));
  auto bad = decodePodMeta(json::parse(
      R"({"metadata": {"namespace": "a", "name": "b", "uid": "u"}, "spec": {"priority": "high"}})"));
  REQUIRE_FALSE(bad);
  CHECK(bad.error().message.find("spec.priority") != std::string::npos);
  json::array items{bePod(), json::parse(R"({"metadata": 7})")};
  auto list = decodePodList(json::object{{"items", items}});
  REQUIRE(list);
  CHECK(list->pods.size() == 1);
  REQUIRE(list->errors.size() == 1);
  CHECK(list->errors[0].find("items[1]") != std::string::npos);
  CHECK_FALSE(decodePodList(json::object{{"items", 3}}));
}

TEST_CASE("a pod list read from its text decodes item by item, as from the document") {
  json::array items{bePod(), json::parse(R"({"metadata": 7})"), bePod()};
  const std::string text = json::serialize(json::object{
      {"kind", "PodList"}, {"metadata", json::object{{"resourceVersion", "9"}}}, {"items", items}});
  auto list = decodePodListText(text);
  REQUIRE(list);
  CHECK(list->pods.size() == 2);
  REQUIRE(list->errors.size() == 1);
  CHECK(list->errors[0].find("items[1]") != std::string::npos);
  CHECK(list->pods[0].uid == decodePodMeta(bePod())->uid);

  auto none = decodePodListText(R"({"kind": "PodList", "items": []})");
  REQUIRE(none);
  CHECK(none->pods.empty());
  // Not a list, or cut short: an error naming the pod list, never a partial list taken as whole.
  for (std::string_view bad : {R"({"items": 3})", R"({"items": [{"metadata": {}})", "[]", "nope"}) {
    INFO(bad);
    auto r = decodePodListText(bad);
    REQUIRE_FALSE(r);
    CHECK(r.error().message.rfind("PodList: ", 0) == 0);
  }
}

TEST_CASE("the pod request sums containers, floors at each init container, adds overhead") {
  auto pod = decodePodMeta(json::parse(R"({
    "metadata": {"namespace": "web", "name": "api", "uid": "6e2b5f4e-2c6a-4f0c-9a51-2d8a1c0f3b7f",
                 "creationTimestamp": "2026-11-28T10:00:00Z"},
    "spec": {"containers": [
               {"name": "a", "resources": {"requests": {"cpu": "500m", "memory": "512Mi"}}},
               {"name": "b", "resources": {"requests": {"cpu": "1", "memory": "512Mi"}}}],
             "initContainers": [
               {"name": "init", "resources": {"requests": {"cpu": "2", "memory": "256Mi"}}}],
             "overhead": {"cpu": "100m", "memory": "10Mi"}},
    "status": {"phase": "Running", "qosClass": "Burstable"}})"));
  REQUIRE(pod);
  // cpu: max(0.5 + 1, 2) + 0.1; memory: max(1Gi, 256Mi) + 10Mi.
  CHECK(pod->pod_requests.at("cpu").milliValue() == 2100);
  CHECK(pod->pod_requests.at("memory").value() == (1024 + 10) * 1024 * 1024);
  REQUIRE(pod->creation_time.has_value());

  auto odd = json::parse(R"({
    "metadata": {"namespace": "web", "name": "api", "uid": "6e2b5f4e-2c6a-4f0c-9a51-2d8a1c0f3b7f",
                 "creationTimestamp": "yesterday"},
    "spec": {"containers": [{"name": "a"}]},
    "status": {"phase": "Running", "qosClass": "BestEffort"}})");
  auto decoded = decodePodMeta(odd);
  REQUIRE(decoded);
  CHECK_FALSE(decoded->creation_time.has_value());
  CHECK(decoded->pod_requests.empty());
}

TEST_CASE("only the annotations a koordlet module reads are kept, each within its bound") {
  auto v = bePod();
  auto& annotations = v.at("metadata").as_object()["annotations"].emplace_object();
  annotations["koordinator.sh/eviction-policy"] = R"(["BEMemoryEvict"])";
  annotations["koordinator.sh/eviction-priority"] = "7";
  annotations["koordinator.sh/cpuBurst"] = std::string(kMaxKeptAnnotationBytes + 1, 'x');
  annotations["koordinator.sh/memoryQOS"] = 3;  // not a string: as if absent
  annotations["kubectl.kubernetes.io/last-applied-configuration"] = std::string(4096, 'y');
  auto pod = decodePodMeta(v);
  REQUIRE(pod);
  CHECK(pod->annotations.size() == 2);
  CHECK(pod->annotations.at("koordinator.sh/eviction-policy") == R"(["BEMemoryEvict"])");
  CHECK(pod->annotations.at("koordinator.sh/eviction-priority") == "7");
}
