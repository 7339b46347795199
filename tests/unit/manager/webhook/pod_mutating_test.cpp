#include "webhook/pod_mutating.h"

#include <boost/json.hpp>

#include <map>

#include <catch2/catch.hpp>

#include "koord/apis/colocation_profile.h"
#include "webhook/extended_resource_spec.h"
#include "webhook/json_patch.h"
#include "webhook_test_util.h"

using namespace koord::manager::webhook;
using namespace koord::manager::webhook::testing;
using koord::apis::ClusterColocationProfile;
namespace json = boost::json;

namespace {

std::shared_ptr<const ClusterColocationProfile> profile(std::string_view text) {
  auto p = koord::apis::decodeClusterColocationProfile(parse(text));
  REQUIRE(p.has_value());
  return std::make_shared<const ClusterColocationProfile>(std::move(*p));
}

// The koordinator.sh docs' example profile, turning pods of labelled namespaces into BE pods.
constexpr std::string_view kBatchProfile = R"({
  "apiVersion": "config.koordinator.sh/v1alpha1", "kind": "ClusterColocationProfile",
  "metadata": {"name": "colocation-profile-example"},
  "spec": {
    "namespaceSelector": {"matchLabels": {"koordinator.sh/enable-colocation": "true"}},
    "selector": {"matchLabels": {"koordinator.sh/enable-colocation": "true"}},
    "qosClass": "BE", "priorityClassName": "koord-batch", "koordinatorPriority": 1000,
    "schedulerName": "koord-scheduler",
    "labels": {"koordinator.sh/mutated": "true"},
    "annotations": {"koordinator.sh/intercepted": "true"},
    "patch": {"spec": {"terminationGracePeriodSeconds": 30}}}})";

struct Fixture {
  std::vector<std::shared_ptr<const ClusterColocationProfile>> profiles;
  std::map<std::string, koord::kube::Labels, std::less<>> namespaces{
      {"default", {}},
      {"colo", {{"koordinator.sh/enable-colocation", "true"}}},
  };
  std::map<std::string, PriorityClassInfo, std::less<>> classes{
      {"koord-batch", {5000, "PreemptLowerPriority"}},
      {"koord-mid", {7000, ""}},
      {"koord-prod", {9000, ""}},
  };
  int random = 0;

  PodMutatingContext context() {
    PodMutatingContext c;
    c.profiles = [this] { return profiles; };
    c.namespace_labels = [this](std::string_view ns) -> std::optional<koord::kube::Labels> {
      auto it = namespaces.find(ns);
      if (it == namespaces.end())
        return std::nullopt;
      return it->second;
    };
    c.priority_class = [this](std::string_view name) -> std::optional<PriorityClassInfo> {
      auto it = classes.find(name);
      if (it == classes.end())
        return std::nullopt;
      return it->second;
    };
    c.random_percent = [this] { return random; };
    return c;
  }

  json::object mutate(const json::object& pod, std::string_view ns = "colo") {
    auto out = mutatePodOnCreate(pod, ns, context());
    INFO((out ? std::string() : out.error().message));
    REQUIRE(out.has_value());
    return *out;
  }
};

json::object colocatedPod(std::string_view resources) {
  return parseObject(std::string(R"({"apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "p", "namespace": "colo",
                 "labels": {"koordinator.sh/enable-colocation": "true"}},
    "spec": {"containers": [{"name": "main", "image": "nginx", "resources": )") +
                     std::string(resources) + "}]}}");
}

const json::value& at(const json::object& o, std::initializer_list<std::string_view> path) {
  const json::value* v = nullptr;
  const json::object* cur = &o;
  for (auto key : path) {
    REQUIRE(cur != nullptr);
    v = cur->if_contains(key);
    INFO("key " << key);
    REQUIRE(v != nullptr);
    cur = v->if_object();
  }
  return *v;
}

const json::object& mainResources(const json::object& pod) {
  return pod.at("spec").at("containers").at(0).at("resources").as_object();
}

}  // namespace

TEST_CASE("the docs' example profile turns a pod into a BE batch pod", "[webhook][mutate]") {
  Fixture f;
  f.profiles = {profile(kBatchProfile)};
  auto pod = colocatedPod(R"({"requests": {"cpu": "500m", "memory": "1Gi"},
                              "limits": {"cpu": "1.5", "memory": "1536Mi"}})");
  auto out = f.mutate(pod);

  const auto& labels = at(out, {"metadata", "labels"}).as_object();
  CHECK(labels.at("koordinator.sh/qosClass") == "BE");
  CHECK(labels.at("koordinator.sh/priority") == "1000");
  CHECK(labels.at("koordinator.sh/mutated") == "true");
  CHECK(at(out, {"metadata", "annotations", "koordinator.sh/intercepted"}) == "true");
  CHECK(at(out, {"spec", "schedulerName"}) == "koord-scheduler");
  CHECK(at(out, {"spec", "priorityClassName"}) == "koord-batch");
  CHECK(at(out, {"spec", "priority"}) == 5000);
  CHECK(at(out, {"spec", "preemptionPolicy"}) == "PreemptLowerPriority");
  CHECK(at(out, {"spec", "terminationGracePeriodSeconds"}) == 30);

  CHECK(mainResources(out) == parseObject(R"({
    "requests": {"kubernetes.io/batch-cpu": "500", "kubernetes.io/batch-memory": "1Gi"},
    "limits": {"kubernetes.io/batch-cpu": "1500", "kubernetes.io/batch-memory": "1536Mi"}})"));
  CHECK(at(out, {"metadata", "annotations", "node.koordinator.sh/extended-resource-spec"}) ==
        R"({"containers":{"main":{"limits":{"kubernetes.io/batch-cpu":"1500",)"
        R"("kubernetes.io/batch-memory":"1536Mi"},"requests":{"kubernetes.io/batch-cpu":"500",)"
        R"("kubernetes.io/batch-memory":"1Gi"}}}})");

  // The patch the handler would send brings the original to exactly this pod.
  auto applied = applyJsonPatch(pod, createJsonPatch(pod, out));
  REQUIRE(applied.has_value());
  CHECK(*applied == out);
}

TEST_CASE("batch cpu is the integer milli value, memory keeps its bytes", "[webhook][mutate]") {
  Fixture f;
  f.profiles = {profile(kBatchProfile)};
  auto out = f.mutate(colocatedPod(R"({"requests": {"cpu": 2, "memory": "1.5Gi"},
                                       "limits": {"cpu": "2500m", "memory": "2e9"}})"));
  CHECK(mainResources(out) == parseObject(R"({
    "requests": {"kubernetes.io/batch-cpu": "2k", "kubernetes.io/batch-memory": "1536Mi"},
    "limits": {"kubernetes.io/batch-cpu": "2500", "kubernetes.io/batch-memory": "2e9"}})"));
}

TEST_CASE("a limit without a request is requested", "[webhook][mutate]") {
  Fixture f;
  f.profiles = {profile(kBatchProfile)};
  auto out = f.mutate(colocatedPod(R"({"limits": {"cpu": "1", "memory": "512Mi"}})"));
  CHECK(mainResources(out) == parseObject(R"({
    "limits": {"kubernetes.io/batch-cpu": "1k", "kubernetes.io/batch-memory": "512Mi"},
    "requests": {"kubernetes.io/batch-cpu": "1k", "kubernetes.io/batch-memory": "512Mi"}})"));
  auto only_cpu = f.mutate(colocatedPod(
      R"({"requests": {"memory": "1Gi"}, "limits": {"cpu": "250m", "memory": "1Gi"}})"));
  CHECK(mainResources(only_cpu).at("requests") ==
        parseObject(R"({"kubernetes.io/batch-memory": "1Gi", "kubernetes.io/batch-cpu": "250"})"));
}

TEST_CASE("init containers and overhead are converted too", "[webhook][mutate]") {
  Fixture f;
  f.profiles = {profile(kBatchProfile)};
  auto pod = parseObject(R"({"kind": "Pod",
    "metadata": {"name": "p", "labels": {"koordinator.sh/enable-colocation": "true"}},
    "spec": {"initContainers": [{"name": "init", "resources": {"requests": {"cpu": "100m"}}}],
             "containers": [{"name": "main"}],
             "overhead": {"cpu": "50m", "memory": "64Mi"}}})");
  auto out = f.mutate(pod);
  CHECK(at(out, {"spec", "initContainers"}).at(0).at("resources") ==
        parse(R"({"requests": {"kubernetes.io/batch-cpu": "100"}})"));
  CHECK(at(out, {"spec", "overhead"}) ==
        parse(R"({"kubernetes.io/batch-cpu": "50", "kubernetes.io/batch-memory": "64Mi"})"));
  // No container has batch resources: the annotation stays away.
  CHECK_FALSE(at(out, {"metadata", "annotations"})
                  .as_object()
                  .contains("node.koordinator.sh/extended-resource-spec"));
}

TEST_CASE("mid pods get mid resources, prod pods keep theirs", "[webhook][mutate]") {
  Fixture f;
  f.profiles = {profile(R"({"metadata": {"name": "mid"},
    "spec": {"qosClass": "LS", "priorityClassName": "koord-mid"}})")};
  auto out = f.mutate(colocatedPod(R"({"requests": {"cpu": "1", "memory": "1Gi"}})"));
  CHECK(mainResources(out) ==
        parseObject(
            R"({"requests": {"kubernetes.io/mid-cpu": "1k", "kubernetes.io/mid-memory": "1Gi"}})"));
  CHECK(at(out, {"spec", "priority"}) == 7000);
  CHECK_FALSE(at(out, {"spec"}).as_object().contains("preemptionPolicy"));
  // mid resources stay out of the extended-resource-spec, which is for batch resources only.
  CHECK_FALSE(out.at("metadata").as_object().contains("annotations"));

  f.profiles = {profile(R"({"metadata": {"name": "prod"},
    "spec": {"qosClass": "LS", "priorityClassName": "koord-prod"}})")};
  auto prod = f.mutate(colocatedPod(R"({"requests": {"cpu": "1", "memory": "1Gi"}})"));
  CHECK(mainResources(prod) == parseObject(R"({"requests": {"cpu": "1", "memory": "1Gi"}})"));

  // No priority anywhere: a labelled BE pod defaults to koord-batch.
  f.profiles = {profile(R"({"metadata": {"name": "be"}, "spec": {"qosClass": "BE"}})")};
  auto be = f.mutate(colocatedPod(R"({"requests": {"cpu": "1"}})"));
  CHECK(mainResources(be) == parseObject(R"({"requests": {"kubernetes.io/batch-cpu": "1k"}})"));
  // No label either: a Burstable pod is LS, so koord-prod, untouched.
  f.profiles = {profile(R"({"metadata": {"name": "plain"}, "spec": {"labels": {"a": "b"}}})")};
  auto ls = f.mutate(colocatedPod(R"({"requests": {"cpu": "1"}})"));
  CHECK(mainResources(ls) == parseObject(R"({"requests": {"cpu": "1"}})"));
  // A BestEffort pod is BE, so koord-batch: nothing to convert, but no failure either.
  auto best_effort = f.mutate(colocatedPod("{}"));
  CHECK(mainResources(best_effort).empty());
}

TEST_CASE("profiles select by namespace labels and pod labels", "[webhook][mutate]") {
  Fixture f;
  f.profiles = {profile(kBatchProfile)};
  auto pod = colocatedPod(R"({"requests": {"cpu": "1"}})");

  SECTION("a namespace without the label is not selected") {
    pod["metadata"].as_object()["namespace"] = "default";
    auto out2 = f.mutate(pod, "default");
    CHECK(out2 == pod);
  }
  SECTION("metadata.namespace wins over the request's namespace") {
    auto out = f.mutate(pod, "default");
    CHECK(at(out, {"metadata", "labels", "koordinator.sh/qosClass"}) == "BE");
  }
  SECTION("an empty metadata.namespace takes the request's") {
    pod["metadata"].as_object().erase("namespace");
    CHECK(f.mutate(pod, "default") == pod);
    CHECK(f.mutate(pod, "colo") != pod);
  }
  SECTION("a pod without the label is not selected") {
    pod["metadata"].as_object()["labels"] = json::object();
    CHECK(f.mutate(pod) == pod);
  }
  SECTION("a namespace not in the cache matches no namespaceSelector, and refuses nothing") {
    pod["metadata"].as_object()["namespace"] = "ghost";
    auto out = mutatePodOnCreate(pod, "ghost", f.context());
    REQUIRE(out.has_value());
    CHECK(*out == pod);
  }
  SECTION("an empty namespace selector needs no lookup") {
    f.profiles = {profile(R"({"metadata": {"name": "all"},
      "spec": {"namespaceSelector": {}, "selector": {"matchExpressions": [
        {"key": "koordinator.sh/enable-colocation", "operator": "Exists"}]},
        "labels": {"picked": "yes"}}})")};
    f.namespaces.clear();
    auto out = f.mutate(pod, "nowhere");
    CHECK(at(out, {"metadata", "labels", "picked"}) == "yes");
  }
}

TEST_CASE("probability decides with rand(100) > percent", "[webhook][mutate]") {
  Fixture f;
  auto pod = colocatedPod("{}");
  auto with = [&](std::string_view probability) {
    f.profiles = {profile(std::string(R"({"metadata": {"name": "p"}, "spec": {"probability": )") +
                          std::string(probability) + R"(, "labels": {"hit": "1"}}})")};
    auto out = f.mutate(pod);
    return out.at("metadata").at("labels").as_object().contains("hit");
  };
  f.random = 0;
  CHECK_FALSE(with("0"));
  CHECK_FALSE(with("\"0%\""));
  f.random = 99;
  CHECK(with("100"));
  CHECK(with("\"100%\""));
  f.random = 50;
  CHECK(with("\"50%\""));
  CHECK(with("50"));
  f.random = 51;
  CHECK_FALSE(with("\"50%\""));
  f.random = 49;
  CHECK(with("50"));
}

TEST_CASE("a missing PriorityClass fails the admission", "[webhook][mutate]") {
  Fixture f;
  f.classes.clear();
  f.profiles = {profile(kBatchProfile)};
  auto out = mutatePodOnCreate(colocatedPod("{}"), "colo", f.context());
  REQUIRE_FALSE(out.has_value());
  CHECK(out.error().message == "priorityclasses.scheduling.k8s.io \"koord-batch\" not found");
}

TEST_CASE("labels, annotations, mappings and suffixes apply in Koordinator's order",
          "[webhook][mutate]") {
  Fixture f;
  f.profiles = {profile(R"({"metadata": {"name": "keys"}, "spec": {
    "labels": {"tier": "batch"},
    "annotations": {"note": "n"},
    "labelKeysMapping": {"app": "app.kubernetes.io/name", "absent": "copied-absent"},
    "annotationKeysMapping": {"note": "note-copy"},
    "labelSuffixes": {"app": "-colo", "tier": "-x", "nothing": "-y"}}})")};
  auto pod = colocatedPod("{}");
  pod["metadata"].as_object()["labels"].as_object()["app"] = "web";
  auto out = f.mutate(pod);
  CHECK(out.at("metadata").at("labels") == parse(R"({
    "koordinator.sh/enable-colocation": "true", "app": "web-colo",
    "app.kubernetes.io/name": "web", "copied-absent": "", "tier": "batch-x"})"));
  CHECK(out.at("metadata").at("annotations") == parse(R"({"note": "n", "note-copy": "n"})"));
}

TEST_CASE("profiles apply in name order, the last one winning", "[webhook][mutate]") {
  Fixture f;
  f.profiles = {profile(R"({"metadata": {"name": "b"}, "spec": {"labels": {"x": "from-b"}}})"),
                profile(R"({"metadata": {"name": "a"}, "spec": {"labels": {"x": "from-a"},
                  "schedulerName": "from-a"}})")};
  auto out = f.mutate(colocatedPod("{}"));
  CHECK(at(out, {"metadata", "labels", "x"}) == "from-b");
  CHECK(at(out, {"spec", "schedulerName"}) == "from-a");
}

TEST_CASE("skip-update-resources keeps cpu and memory", "[webhook][mutate]") {
  Fixture f;
  auto skipping = parse(kBatchProfile);
  skipping.as_object()["metadata"].as_object()["annotations"] =
      parse(R"({"config.koordinator.sh/skip-update-resources": ""})");
  f.profiles = {profile(json::serialize(skipping))};
  auto out = f.mutate(colocatedPod(R"({"requests": {"cpu": "1"}})"));
  CHECK(at(out, {"metadata", "labels", "koordinator.sh/qosClass"}) == "BE");
  CHECK(mainResources(out) == parseObject(R"({"requests": {"cpu": "1"}})"));

  Fixture gated;
  gated.profiles = {profile(kBatchProfile)};
  auto context = gated.context();
  context.skip_mutating_resources = true;
  auto kept = mutatePodOnCreate(colocatedPod(R"({"requests": {"cpu": "1"}})"), "colo", context);
  REQUIRE(kept.has_value());
  CHECK(mainResources(*kept) == parseObject(R"({"requests": {"cpu": "1"}})"));
}

TEST_CASE("a pod no profile selects keeps its resources", "[webhook][mutate]") {
  Fixture f;
  auto pod = colocatedPod(R"({"requests": {"cpu": "1"}})");
  pod["metadata"].as_object()["labels"].as_object()["koordinator.sh/qosClass"] = "BE";
  CHECK(f.mutate(pod) == pod);
}

TEST_CASE("the profile patch merges containers by name", "[webhook][mutate]") {
  Fixture f;
  f.profiles = {profile(R"({"metadata": {"name": "patch"}, "spec": {"patch": {
    "metadata": {"labels": {"from-patch": "1", "koordinator.sh/enable-colocation": null}},
    "spec": {
      "containers": [{"name": "main", "env": [{"name": "MODE", "value": "batch"}]},
                     {"name": "sidecar", "image": "busybox"}],
      "tolerations": [{"key": "batch", "operator": "Exists"}]}}}})")};
  auto pod = colocatedPod(R"({"requests": {"cpu": "1"}})");
  pod["spec"].as_object()["containers"].as_array()[0].as_object()["env"] =
      parse(R"([{"name": "MODE", "value": "online"}, {"name": "KEEP", "value": "1"}])");
  pod["spec"].as_object()["tolerations"] = parse(R"([{"key": "old", "operator": "Exists"}])");
  auto out = f.mutate(pod);
  CHECK(out.at("metadata").at("labels") == parse(R"({"from-patch": "1"})"));
  const auto& containers = out.at("spec").at("containers").as_array();
  REQUIRE(containers.size() == 2);
  CHECK(containers[0].at("image") == "nginx");
  CHECK(containers[0].at("env") ==
        parse(R"([{"name": "MODE", "value": "batch"}, {"name": "KEEP", "value": "1"}])"));
  CHECK(containers[1] == parse(R"({"name": "sidecar", "image": "busybox"})"));
  CHECK(out.at("spec").at("tolerations") == parse(R"([{"key": "batch", "operator": "Exists"}])"));
}

TEST_CASE("unsupported patch directives fail loudly", "[webhook][mutate]") {
  Fixture f;
  f.profiles = {profile(R"({"metadata": {"name": "d"}, "spec": {"patch": {"spec": {
    "$setElementOrder/containers": [{"name": "main"}]}}}})")};
  auto out = mutatePodOnCreate(colocatedPod("{}"), "colo", f.context());
  REQUIRE_FALSE(out.has_value());
  CHECK(out.error().message ==
        "ClusterColocationProfile d: spec.patch.spec: directive \"$setElementOrder/containers\" "
        "is not supported");

  f.profiles = {profile(R"({"metadata": {"name": "r"}, "spec": {"patch": {"spec": {
    "containers": [{"name": "main", "$patch": "delete"}], "nodeSelector": {"$patch": "replace",
    "pool": "batch"}}}}})")};
  auto pod = colocatedPod("{}");
  pod["spec"].as_object()["nodeSelector"] = parse(R"({"zone": "a"})");
  auto replaced = f.mutate(pod);
  CHECK(replaced.at("spec").at("containers") == json::array());
  CHECK(replaced.at("spec").at("nodeSelector") == parse(R"({"pool": "batch"})"));
}

TEST_CASE("the extended-resource-spec annotation follows the containers", "[webhook][mutate]") {
  auto pod = parseObject(R"({"kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [
    {"name": "b", "resources": {"requests": {"kubernetes.io/batch-cpu": "1000"}}},
    {"name": "a", "resources": {"limits": {"kubernetes.io/batch-memory": "1Gi", "cpu": "1"}}},
    {"name": "c", "resources": {"requests": {"cpu": "1"}}}]}})");
  auto text = extendedResourceSpecFor(pod);
  REQUIRE(text.has_value());
  CHECK(*text == R"({"containers":{"a":{"limits":{"kubernetes.io/batch-memory":"1Gi"}},)"
                 R"("b":{"requests":{"kubernetes.io/batch-cpu":"1k"}}}})");

  auto updated = pod;
  REQUIRE(updateExtendedResourceSpec(updated).has_value());
  CHECK(at(updated, {"metadata", "annotations", "node.koordinator.sh/extended-resource-spec"}) ==
        json::value(*text));

  // An equal annotation, spelled differently, is left as it is.
  auto same = pod;
  same["metadata"].as_object()["annotations"] = parse(
      R"({"node.koordinator.sh/extended-resource-spec": "{\"containers\":{\"b\":{\"requests\":{\"kubernetes.io/batch-cpu\":\"1k\"}},\"a\":{\"limits\":{\"kubernetes.io/batch-memory\":\"1073741824\"}}}}"})");
  auto kept = same;
  REQUIRE(updateExtendedResourceSpec(kept).has_value());
  CHECK(kept == same);

  // A stale one is rewritten; one left on a pod without batch resources becomes "{}".
  auto plain = parseObject(R"({"kind": "Pod", "metadata": {"annotations": {
    "node.koordinator.sh/extended-resource-spec": "{\"containers\":{\"x\":{}}}"}},
    "spec": {"containers": [{"name": "x"}]}})");
  REQUIRE(updateExtendedResourceSpec(plain).has_value());
  CHECK(at(plain, {"metadata", "annotations", "node.koordinator.sh/extended-resource-spec"}) ==
        "{}");

  auto broken = parseObject(R"({"kind": "Pod", "metadata": {"annotations": {
    "node.koordinator.sh/extended-resource-spec": "{not json"}}, "spec": {}})");
  auto r = updateExtendedResourceSpec(broken);
  REQUIRE_FALSE(r.has_value());
  CHECK_THAT(r.error().message,
             Catch::StartsWith("failed to get current extended resource spec, err: "
                               "metadata.annotations[node.koordinator.sh/extended-resource-spec]: "
                               "not JSON"));
}

TEST_CASE("the mutating handler patches CREATE and leaves UPDATE alone", "[webhook][mutate]") {
  Fixture f;
  f.profiles = {profile(kBatchProfile)};
  Handler h = podMutatingHandler(f.context());
  auto pod = colocatedPod(R"({"requests": {"cpu": "500m", "memory": "1Gi"}})");
  std::string pod_text = json::serialize(pod);

  auto created = serve(review("CREATE", pod_text), h);
  REQUIRE(created.http_status == 200);
  CHECK(created.outcome == "patched");
  auto response = parse(created.body).at("response").as_object();
  CHECK(response.at("patchType") == "JSONPatch");
  auto patch = parse(base64Decode(response.at("patch").as_string()));
  auto applied = applyJsonPatch(pod, patch.as_array());
  REQUIRE(applied.has_value());
  CHECK(*applied == json::value(f.mutate(pod)));
  // Keys with '/' travel escaped.
  CHECK(json::serialize(patch).find("koordinator.sh~1qosClass") != std::string::npos);

  auto updated = serve(review("UPDATE", pod_text, "pods", pod_text), h);
  CHECK(updated.outcome == "allowed");
  CHECK_FALSE(parse(updated.body).at("response").as_object().contains("patch"));

  f.classes.clear();
  auto failed = serve(review("CREATE", pod_text), h);
  CHECK(failed.outcome == "error");
  CHECK(parse(failed.body).at("response").at("status") == parse(R"({"code": 500, "message":
                  "priorityclasses.scheduling.k8s.io \"koord-batch\" not found"})"));

  auto malformed = serve(review("CREATE", R"({"kind": "Pod", "metadata": {"labels": [1]}})"), h);
  CHECK(malformed.outcome == "denied");
  CHECK(parse(malformed.body).at("response").at("status").at("code") == 400);

  f.profiles.clear();
  auto untouched = serve(review("CREATE", pod_text), h);
  CHECK(untouched.outcome == "allowed");
}
