#include "webhook/pod_validating.h"

#include <boost/json.hpp>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include "webhook/field_errors.h"
#include "webhook_test_util.h"

using namespace koord::manager::webhook;
using namespace koord::manager::webhook::testing;
namespace json = boost::json;

namespace {

// A pod with `labels`, an optional spec.priority and one container's `resources`.
json::object pod(std::string_view labels, std::string_view resources = "{}",
                 std::string_view priority = "") {
  std::string spec =
      std::string(R"({"containers": [{"name": "c", "resources": )") + std::string(resources) + "}]";
  if (!priority.empty())
    spec += ", \"priority\": " + std::string(priority);
  spec += "}";
  return parseObject(std::string(R"({"kind": "Pod", "metadata": {"name": "p", "labels": )") +
                     std::string(labels) + "}, \"spec\": " + spec + "}");
}

std::vector<std::string> errorsOf(const json::object& p, const json::object* old = nullptr,
                                  PodValidatingOptions options = {}) {
  auto r = validatePod(p, old, options);
  INFO((r ? std::string() : r.error().message));
  REQUIRE(r.has_value());
  return *r;
}

using Errors = std::vector<std::string>;

PodValidatingOptions skipValidatingPriority() {
  PodValidatingOptions o;
  o.skip_validating_priority = true;
  return o;
}

constexpr std::string_view kBE = R"({"koordinator.sh/qosClass": "BE"})";
constexpr std::string_view kBatchRequests =
    R"({"requests": {"kubernetes.io/batch-cpu": "1000", "kubernetes.io/batch-memory": "1Gi"}})";

}  // namespace

TEST_CASE("batch resources need the BE QoS label", "[webhook][validate]") {
  CHECK(errorsOf(pod(kBE, kBatchRequests, "5000")).empty());
  CHECK(errorsOf(pod(R"({"koordinator.sh/qosClass": "LS"})", kBatchRequests, "5000")) ==
        Errors{"labels.koordinator.sh/qosClass: Required value: must specify koordinator QoS BE "
               "with koordinator colocation resources"});
  CHECK(errorsOf(pod("{}", R"({"limits": {"kubernetes.io/batch-cpu": "1k"},
                               "requests": {"kubernetes.io/batch-cpu": "1k"}})"))
            .size() == 1);
  // Zero batch requests do not count.
  CHECK(errorsOf(pod("{}", R"({"requests": {"kubernetes.io/batch-cpu": "0"}})")).empty());
}

TEST_CASE("init containers and overhead count in the pod's requests", "[webhook][validate]") {
  auto p = pod("{}");
  p["spec"].as_object()["initContainers"] =
      parse(R"([{"name": "i", "resources": {"requests": {"kubernetes.io/batch-memory": "1Mi"}}}])");
  CHECK(errorsOf(p).size() == 1);
  auto o = pod("{}");
  o["spec"].as_object()["overhead"] = parse(R"({"kubernetes.io/batch-cpu": "10"})");
  CHECK(errorsOf(o).size() == 1);
}

TEST_CASE("QoS and priority classes that do not go together are forbidden", "[webhook][validate]") {
  CHECK(errorsOf(pod(kBE, "{}", "9000")) ==
        Errors{"Pod: Forbidden: koordinator.sh/qosClass=BE and priorityClass=koord-prod cannot be "
               "used in combination"});
  CHECK(errorsOf(pod(kBE)) == Errors{"Pod: Forbidden: koordinator.sh/qosClass=BE and "
                                     "priorityClass= cannot be used in combination"});
  CHECK(errorsOf(pod(kBE, "{}", "7000")).empty());
  CHECK(errorsOf(pod(kBE, "{}", "3000")).empty());
  CHECK(errorsOf(pod(R"({"koordinator.sh/qosClass": "BE",
                         "koordinator.sh/priority-class": "koord-batch"})"))
            .empty());

  constexpr std::string_view kLSR = R"({"koordinator.sh/qosClass": "LSR"})";
  constexpr std::string_view kCPU = R"({"requests": {"cpu": "2"}})";
  CHECK(errorsOf(pod(kLSR, kCPU, "9500")).empty());
  for (auto [priority, name] :
       {std::pair{"", ""}, std::pair{"7000", "koord-mid"}, std::pair{"5999", "koord-batch"},
        std::pair{"3500", "koord-free"}}) {
    INFO(priority);
    CHECK(errorsOf(pod(kLSR, kCPU, priority)) ==
          Errors{fmt::format("Pod: Forbidden: koordinator.sh/qosClass=LSR and priorityClass={} "
                             "cannot be used in combination",
                             name)});
  }
  // LS goes with anything.
  CHECK(errorsOf(pod(R"({"koordinator.sh/qosClass": "LS"})", "{}", "5000")).empty());
  CHECK(errorsOf(pod("{}")).empty());
}

TEST_CASE("LSR and LSE pods need whole CPUs", "[webhook][validate]") {
  for (std::string_view qos : {"LSR", "LSE"}) {
    std::string labels = fmt::format(R"({{"koordinator.sh/qosClass": "{}"}})", qos);
    CHECK(errorsOf(pod(labels, R"({"requests": {"cpu": "2"}})", "9000")).empty());
    CHECK(errorsOf(pod(labels, R"({"requests": {"cpu": "2000m"}})", "9000")).empty());
    CHECK(errorsOf(pod(labels, R"({"requests": {"cpu": "1500m"}})", "9000")) ==
          Errors{"pod.spec.containers[*].resources.requests: Invalid value: \"1500m\": the "
                 "requested CPUs of LSR Pod must be integer"});
    CHECK(errorsOf(pod(labels, R"({"requests": {"cpu": "1.0001"}})", "9000")).size() == 1);
    CHECK(errorsOf(pod(labels, R"({"requests": {"memory": "1Gi"}})", "9000")) ==
          Errors{"pod.spec.containers[*].resources.requests: Required value: LSR Pod must "
                 "declare the requested CPUs"});
  }
}

TEST_CASE("QoS, priority class and koordinator.sh/priority are immutable", "[webhook][validate]") {
  auto old =
      pod(R"({"koordinator.sh/qosClass": "BE", "koordinator.sh/priority": "5"})", "{}", "5000");
  CHECK(errorsOf(old, &old).empty());
  CHECK(errorsOf(pod(R"({"koordinator.sh/qosClass": "LS", "koordinator.sh/priority": "5"})", "{}",
                     "5000"),
                 &old) ==
        Errors{"labels.koordinator.sh/qosClass: Invalid value: \"LS\": field is immutable"});
  CHECK(
      errorsOf(
          pod(R"({"koordinator.sh/qosClass": "BE", "koordinator.sh/priority": "5"})", "{}", "7000"),
          &old) == Errors{"spec.priority: Invalid value: \"koord-mid\": field is immutable"});
  auto relabelled =
      pod(R"({"koordinator.sh/qosClass": "BE", "koordinator.sh/priority": "6"})", "{}", "5000");
  CHECK(errorsOf(relabelled, &old) ==
        Errors{"labels.koordinator.sh/priority: Invalid value: \"6\": field is immutable"});
  CHECK(errorsOf(relabelled, &old, skipValidatingPriority()).empty());
  // Removing the QoS label is a change too (to none), and is reported with the empty value.
  CHECK(errorsOf(pod(R"({"koordinator.sh/priority": "5"})", "{}", "5000"), &old) ==
        Errors{"labels.koordinator.sh/qosClass: Invalid value: \"\": field is immutable"});
}

TEST_CASE("several violations are joined as field.ErrorList's aggregate", "[webhook][validate]") {
  CHECK(aggregateMessages({"a"}) == "a");
  CHECK(aggregateMessages({"a", "b", "a"}) == "[a, b]");
  auto errors = errorsOf(pod(R"({"koordinator.sh/qosClass": "LSR"})",
                             R"({"requests": {"kubernetes.io/batch-cpu": "1"}})"));
  CHECK(aggregateMessages(errors) ==
        "[labels.koordinator.sh/qosClass: Required value: must specify koordinator QoS BE with "
        "koordinator colocation resources, Pod: Forbidden: koordinator.sh/qosClass=LSR and "
        "priorityClass= cannot be used in combination, pod.spec.containers[*].resources.requests: "
        "Required value: LSR Pod must declare the requested CPUs]");
}

TEST_CASE("the validating handler denies with 400 and allows DELETE", "[webhook][validate]") {
  Handler h = podValidatingHandler();
  std::string bad = json::serialize(pod(kBE, "{}", "9000"));
  auto denied = serve(review("CREATE", bad), h);
  CHECK(denied.outcome == "denied");
  auto status = parse(denied.body).at("response").at("status");
  CHECK(status.at("code") == 400);
  CHECK(status.at("message") ==
        "Pod: Forbidden: koordinator.sh/qosClass=BE and "
        "priorityClass=koord-prod cannot be used in combination");

  std::string good = json::serialize(pod(kBE, "{}", "5000"));
  CHECK(serve(review("CREATE", good), h).outcome == "allowed");
  CHECK(serve(review("UPDATE", bad, "pods", good), h).outcome == "denied");
  CHECK(serve(review("DELETE", "", "pods", bad), h).outcome == "allowed");

  auto malformed = serve(review("CREATE", R"({"kind": "Pod", "spec": {"priority": "high"}})"), h);
  CHECK(malformed.outcome == "denied");
  CHECK(parse(malformed.body).at("response").at("status").at("message") ==
        "spec.priority: expected int32");
}

TEST_CASE("scheduler-owned annotations are the scheduler's alone", "[webhook][validate]") {
  // Before: any user could bring a resource-status cpuset, which the koordlet pins.
  constexpr std::string_view kScheduler =
      "system:serviceaccount:koordinator-system:koord-scheduler";
  PodValidatingOptions options;
  options.scheduler_usernames = {std::string(kScheduler)};
  Handler h = podValidatingHandler(options);
  auto withAnnotations = [](std::string_view annotations) {
    auto p = pod(R"({"koordinator.sh/qosClass": "LSR"})", R"({"requests": {"cpu": "2"}})", "9000");
    p["metadata"].as_object()["annotations"] = parse(annotations);
    return json::serialize(p);
  };
  const std::string plain = withAnnotations(R"({"team": "a"})");
  const std::string pinned =
      withAnnotations(R"({"team": "a", "scheduling.koordinator.sh/resource-status":)"
                      R"( "{\"cpuset\":\"0-1\"}"})");
  const std::string repinned =
      withAnnotations(R"({"team": "b", "scheduling.koordinator.sh/resource-status":)"
                      R"( "{\"cpuset\":\"2-3\"}"})");
  const std::string user = "alice";

  auto created = serve(review("CREATE", pinned, "pods", "", "admission.k8s.io/v1", user), h);
  CHECK(created.outcome == "denied");
  auto status = parse(created.body).at("response").at("status");
  CHECK(status.at("code") == 403);
  CHECK(status.at("message") ==
        "metadata.annotations[scheduling.koordinator.sh/resource-status]: Forbidden: set by the "
        "scheduler only (system:serviceaccount:koordinator-system:koord-scheduler), not by alice");
  // Each owned key is refused, as is a review that names nobody.
  for (std::string_view key : {"scheduling.koordinator.sh/device-allocated",
                               "scheduling.koordinator.sh/reservation-allocated"}) {
    auto p = withAnnotations(fmt::format(R"({{"{}": "{{}}"}})", key));
    CHECK(serve(review("CREATE", p, "pods", "", "admission.k8s.io/v1", user), h).outcome ==
          "denied");
  }
  CHECK(serve(review("CREATE", pinned), h).outcome == "denied");
  CHECK(serve(review("CREATE", plain, "pods", "", "admission.k8s.io/v1", user), h).outcome ==
        "allowed");

  // UPDATE: adding, changing or removing one is the scheduler's; keeping it is anyone's.
  CHECK(serve(review("UPDATE", pinned, "pods", plain, "admission.k8s.io/v1", user), h).outcome ==
        "denied");
  CHECK(serve(review("UPDATE", repinned, "pods", pinned, "admission.k8s.io/v1", user), h).outcome ==
        "denied");
  CHECK(serve(review("UPDATE", plain, "pods", pinned, "admission.k8s.io/v1", user), h).outcome ==
        "denied");
  auto relabelled = withAnnotations(R"({"team": "c", "scheduling.koordinator.sh/resource-status":)"
                                    R"( "{\"cpuset\":\"0-1\"}"})");
  CHECK(
      serve(review("UPDATE", relabelled, "pods", pinned, "admission.k8s.io/v1", user), h).outcome ==
      "allowed");
  CHECK(serve(review("UPDATE", pinned, "pods", plain, "admission.k8s.io/v1", kScheduler), h)
            .outcome == "allowed");
  CHECK(serve(review("CREATE", pinned, "pods", "", "admission.k8s.io/v1", kScheduler), h).outcome ==
        "allowed");
}
