// Hostile objects through every handler: any value of any type in any place of a pod or
// ConfigMap or Reservation must give an answer (allowed, denied or 400), never a crash or an
// escaping exception.
#include <boost/json.hpp>

#include <random>

#include <catch2/catch.hpp>

#include "koord/apis/colocation_profile.h"
#include "webhook/configmap_validating.h"
#include "webhook/pod_mutating.h"
#include "webhook/pod_validating.h"
#include "webhook/reservation_validating.h"
#include "webhook_test_util.h"

using namespace koord::manager::webhook;
using namespace koord::manager::webhook::testing;
namespace json = boost::json;

namespace {

constexpr std::string_view kPod = R"({"apiVersion": "v1", "kind": "Pod",
  "metadata": {"name": "p", "namespace": "colo",
    "labels": {"koordinator.sh/enable-colocation": "true", "koordinator.sh/qosClass": "LSR",
               "app": "web"},
    "annotations": {"node.koordinator.sh/extended-resource-spec": "{}"}},
  "spec": {"priority": 9000, "schedulerName": "default-scheduler",
    "initContainers": [{"name": "init", "restartPolicy": "Always",
      "resources": {"requests": {"cpu": "100m"}, "limits": {"cpu": "1"}}}],
    "containers": [
      {"name": "main", "env": [{"name": "A", "value": "1"}],
       "resources": {"requests": {"cpu": "1", "memory": "1Gi"},
                     "limits": {"kubernetes.io/batch-cpu": "1k", "memory": "2Gi"}}},
      {"name": "side", "resources": {"limits": {"cpu": "500m"}}}],
    "overhead": {"cpu": "10m"}},
  "status": {"qosClass": "Burstable"}})";

json::value randomValue(std::mt19937& rng, int depth = 0) {
  switch (std::uniform_int_distribution<int>(0, depth > 2 ? 5 : 7)(rng)) {
    case 0:
      return nullptr;
    case 1:
      return std::uniform_int_distribution<int>(0, 1)(rng) == 1;
    case 2:
      return std::uniform_int_distribution<std::int64_t>(INT64_MIN, INT64_MAX)(rng);
    case 3:
      return -1.5e300;
    case 4: {
      static const char* kStrings[] = {"",
                                       "1",
                                       "-1",
                                       "1e999",
                                       "500m",
                                       "1.5Gi",
                                       "x",
                                       "BE",
                                       "koord-batch",
                                       "{",
                                       "{\"containers\":1}",
                                       "Always",
                                       "%"};
      return json::string(kStrings[std::uniform_int_distribution<int>(0, 12)(rng)]);
    }
    case 5:
      return 18446744073709551615ull;
    case 6: {
      json::array a;
      for (int i = std::uniform_int_distribution<int>(0, 3)(rng); i > 0; --i)
        a.push_back(randomValue(rng, depth + 1));
      return a;
    }
    default: {
      json::object o;
      static const char* kKeys[] = {"name",
                                    "cpu",
                                    "memory",
                                    "requests",
                                    "limits",
                                    "labels",
                                    "kubernetes.io/batch-cpu",
                                    "$patch",
                                    "containers"};
      for (int i = std::uniform_int_distribution<int>(0, 3)(rng); i > 0; --i)
        o[kKeys[std::uniform_int_distribution<int>(0, 8)(rng)]] = randomValue(rng, depth + 1);
      return o;
    }
  }
}

// Replaces one randomly chosen value anywhere in `v` with a random one.
void corrupt(json::value& v, std::mt19937& rng) {
  json::value* cur = &v;
  while (true) {
    bool stop = std::uniform_int_distribution<int>(0, 3)(rng) == 0;
    if (json::object* o = cur->if_object(); o != nullptr && !o->empty() && !stop) {
      auto it = o->begin() + std::uniform_int_distribution<std::size_t>(0, o->size() - 1)(rng);
      cur = &it->value();
    } else if (json::array* a = cur->if_array(); a != nullptr && !a->empty() && !stop) {
      cur = &(*a)[std::uniform_int_distribution<std::size_t>(0, a->size() - 1)(rng)];
    } else {
      *cur = randomValue(rng);
      return;
    }
  }
}

// `pristine` with one to three values corrupted, as text.
std::string corrupted(const json::value& pristine, std::mt19937& rng) {
  json::value v = pristine;
  for (int n = std::uniform_int_distribution<int>(1, 3)(rng); n > 0; --n)
    corrupt(v, rng);
  return json::serialize(v);
}

std::shared_ptr<const koord::apis::ClusterColocationProfile> profile(std::string_view text) {
  auto p = koord::apis::decodeClusterColocationProfile(parse(text));
  REQUIRE(p.has_value());
  return std::make_shared<const koord::apis::ClusterColocationProfile>(std::move(*p));
}

}  // namespace

TEST_CASE("corrupted pods always get an answer", "[webhook][hostile]") {
  PodMutatingContext context;
  auto profiles = std::vector{profile(R"({"metadata": {"name": "a"}, "spec": {"qosClass": "BE",
        "priorityClassName": "koord-batch", "labelKeysMapping": {"app": "x"},
        "labelSuffixes": {"app": "-s"}, "selector": {"matchLabels": {"app": "web"}},
        "patch": {"metadata": {"labels": {"p": "1"}}, "spec": {"containers": [
          {"name": "main", "env": [{"name": "B", "value": "2"}]}]}}}})"),
                              profile(R"({"metadata": {"name": "b"}, "spec": {"probability": "50%",
        "priorityClassName": "koord-mid", "namespaceSelector": {"matchLabels": {"c": "1"}}}})")};
  context.profiles = [&] { return profiles; };
  context.namespace_labels = [](std::string_view) {
    return std::optional<koord::kube::Labels>(koord::kube::Labels{{"c", "1"}});
  };
  context.priority_class = [](std::string_view name) {
    return std::optional<PriorityClassInfo>(
        PriorityClassInfo{name == "koord-mid" ? 7000 : 5000, ""});
  };
  std::mt19937 rng(20240601);
  context.random_percent = [&rng] { return std::uniform_int_distribution<int>(0, 99)(rng); };
  Handler mutating = podMutatingHandler(context);
  Handler validating = podValidatingHandler();

  const json::value pristine = parse(kPod);
  int answered = 0;
  for (int i = 0; i < 3000; ++i) {
    std::string text = corrupted(pristine, rng);
    for (std::string_view op : {"CREATE", "UPDATE"}) {
      std::string body = review(op, text, "pods", op == "UPDATE" ? kPod : "");
      for (const Handler* h : {&mutating, &validating}) {
        WebhookResult r = serve(body, *h);
        INFO(body);
        REQUIRE((r.http_status == 200 || r.http_status == 400));
        REQUIRE(r.outcome != "error");
        ++answered;
      }
    }
  }
  CHECK(answered == 12000);
}

TEST_CASE("corrupted ConfigMaps always get an answer", "[webhook][hostile]") {
  Handler h = configMapValidatingHandler();
  std::mt19937 rng(7);
  const json::value pristine = parse(R"({"apiVersion": "v1", "kind": "ConfigMap",
    "metadata": {"name": "slo-controller-config", "namespace": "koordinator-system"},
    "data": {"colocation-config": "{\"enable\": true}", "resource-threshold-config": "{}"}})");
  for (int i = 0; i < 1000; ++i) {
    json::value cm = pristine;
    corrupt(cm, rng);
    WebhookResult r = serve(review("CREATE", json::serialize(cm), "configmaps"), h);
    INFO(json::serialize(cm));
    REQUIRE((r.http_status == 200 || r.http_status == 400));
    REQUIRE(r.outcome != "error");
  }
}

TEST_CASE("corrupted Reservations always get an answer", "[webhook][hostile]") {
  Handler h = reservationValidatingHandler();
  std::mt19937 rng(11);
  const std::string old = R"({"apiVersion": "scheduling.koordinator.sh/v1alpha1",
    "kind": "Reservation", "metadata": {"name": "r"},
    "spec": {"template": {"spec": {"containers": [{"name": "c",
        "resources": {"requests": {"cpu": "1"}}}]}},
      "owners": [{"object": {"name": "p", "namespace": "d"}},
                 {"controller": {"apiVersion": "v1", "kind": "Job", "name": "j", "uid": "u"}},
                 {"labelSelector": {"matchLabels": {"a": "b"},
                   "matchExpressions": [{"key": "k", "operator": "In", "values": ["v"]}]}}],
      "ttl": "1h", "expires": "2030-01-01T00:00:00Z", "allocateOnce": true,
      "allocatePolicy": "Aligned", "taints": [{"key": "t", "effect": "NoSchedule"}]},
    "status": {"phase": "Available", "nodeName": "n", "allocatable": {"cpu": "1"},
      "currentOwners": [{"name": "p"}], "conditions": [{"type": "Ready", "status": "True",
        "lastTransitionTime": "2024-01-01T00:00:00Z"}]}})";
  const json::value pristine = parse(old);
  for (int i = 0; i < 2000; ++i) {
    std::string text = corrupted(pristine, rng);
    for (std::string_view op : {"CREATE", "UPDATE"}) {
      WebhookResult out = serve(review(op, text, "reservations", op == "UPDATE" ? old : ""), h);
      INFO(text);
      REQUIRE((out.http_status == 200 || out.http_status == 400));
      REQUIRE(out.outcome != "error");
    }
  }
}
