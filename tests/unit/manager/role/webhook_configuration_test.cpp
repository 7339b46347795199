#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include "koord/kube/kubeconfig.h"
#include "webhookserver/webhook_configuration.h"

namespace json = boost::json;
using koord::roles::manager::defaultWebhooks;
using koord::roles::manager::renderWebhooks;
using koord::roles::manager::WebhookConfigurationOptions;

namespace {

WebhookConfigurationOptions options() {
  WebhookConfigurationOptions o;
  o.namespace_ = "koord-ns";
  o.service_name = "koord-svc";
  o.served_paths = {"/mutate-pod", "/validate-pod"};
  return o;
}

}  // namespace

TEST_CASE("default webhooks exempt control-plane namespaces and fail closed", "[webhookconfig]") {
  auto mutating = defaultWebhooks(true);
  REQUIRE(mutating.size() == 3);
  CHECK(mutating[0].at("name") == "mpod-create.koordinator.sh");
  CHECK(mutating[0].at("failurePolicy") == "Fail");
  CHECK(mutating[0].at("sideEffects") == "None");
  CHECK(mutating[0].at("namespaceSelector").at("matchExpressions").as_array()[0].at("operator") ==
        "DoesNotExist");
  auto validating = defaultWebhooks(false);
  REQUIRE(validating.size() == 5);
  CHECK(validating[1].at("clientConfig").at("service").at("path") == "/validate-configmap");
  CHECK(validating[1].at("objectSelector").at("matchExpressions").as_array()[0].at("key") ==
        "koordinator.sh/configmap-type");
  // The koordlets' writes: fails open, since kubelets' node updates go through the same rule.
  CHECK(validating[2].at("clientConfig").at("service").at("path") == "/validate-node-writes");
  CHECK(validating[2].at("failurePolicy") == "Ignore");
  CHECK(validating[2].at("rules").as_array()[1].at("resources") ==
        json::array{"nodemetrics", "nodemetrics/status", "devices", "devices/status"});
  // Reservations, created and updated, in Koordinator's group; their status is the scheduler's.
  CHECK(validating[3].at("name") == "vreservation.koordinator.sh");
  CHECK(validating[3].at("clientConfig").at("service").at("path") == "/validate-reservation");
  CHECK(validating[3].at("failurePolicy") == "Fail");
  CHECK(validating[3].at("rules") ==
        json::array{json::object{{"apiGroups", json::array{"scheduling.koordinator.sh"}},
                                 {"apiVersions", json::array{"v1alpha1"}},
                                 {"operations", json::array{"CREATE", "UPDATE"}},
                                 {"resources", json::array{"reservations"}}}});
  // Koordinator's ElasticQuota webhooks, failing closed as its manifests register them.
  CHECK(mutating[2].at("name") == "melasticquota.koordinator.sh");
  CHECK(mutating[2].at("clientConfig").at("service").at("path") ==
        "/mutate-scheduling-sigs-k8s-io-v1alpha1-elasticquota");
  CHECK(mutating[2].at("failurePolicy") == "Fail");
  CHECK(mutating[2].at("rules").as_array()[0].at("operations") == json::array{"CREATE"});
  CHECK(validating[4].at("name") == "velasticquota.koordinator.sh");
  CHECK(validating[4].at("clientConfig").at("service").at("path") ==
        "/validate-scheduling-sigs-k8s-io-v1alpha1-elasticquota");
  CHECK(validating[4].at("rules") ==
        json::array{json::object{{"apiGroups", json::array{"scheduling.sigs.k8s.io"}},
                                 {"apiVersions", json::array{"v1alpha1"}},
                                 {"operations", json::array{"CREATE", "UPDATE", "DELETE"}},
                                 {"resources", json::array{"elasticquotas"}}}});
}

TEST_CASE("default webhooks give the apiserver 10 s, past the server's own 8 s deadline",
          "[webhookconfig]") {
  for (bool mutating : {true, false}) {
    for (const auto& wh : defaultWebhooks(mutating))
      CHECK(wh.at("timeoutSeconds") == 10);
  }
}

TEST_CASE("render points service webhooks at our service with the CA bundle", "[webhookconfig]") {
  auto rendered = renderWebhooks(defaultWebhooks(false), options(), "CA-PEM");
  REQUIRE(rendered.has_value());
  // /validate-configmap is not served here (its gate is off), so it is left out.
  REQUIRE(rendered->size() == 1);
  const auto& cc = (*rendered)[0].at("clientConfig").as_object();
  CHECK(cc.at("service").at("namespace") == "koord-ns");
  CHECK(cc.at("service").at("name") == "koord-svc");
  CHECK(cc.at("service").at("path") == "/validate-pod");
  CHECK(koord::kube::decodeBase64(cc.at("caBundle").as_string()).value() == "CA-PEM");
  // Everything else of the template is kept as written.
  CHECK((*rendered)[0].at("rules") == defaultWebhooks(false)[0].at("rules"));
}

TEST_CASE("render with WEBHOOK_HOST turns services into URLs", "[webhookconfig]") {
  auto o = options();
  o.host = "127.0.0.1";
  o.port = 19876;
  auto rendered = renderWebhooks(defaultWebhooks(true), o, "CA");
  REQUIRE(rendered.has_value());
  REQUIRE(rendered->size() == 2);
  const auto& cc = (*rendered)[1].at("clientConfig").as_object();
  CHECK_FALSE(cc.contains("service"));
  CHECK(cc.at("url") == "https://127.0.0.1:19876/mutate-pod");
  o.host = "::1";
  rendered = renderWebhooks(defaultWebhooks(true), o, "CA");
  REQUIRE(rendered.has_value());
  CHECK((*rendered)[0].at("clientConfig").at("url") == "https://[::1]:19876/mutate-pod");
}

TEST_CASE("render keeps an operator's URL webhook and reads its path", "[webhookconfig]") {
  json::array templates{
      json::object{{"name", "x.example.com"},
                   {"clientConfig", {{"url", "https://webhook.example.com:8443/validate-pod"}}}}};
  auto rendered = renderWebhooks(templates, options(), "CA");
  REQUIRE(rendered.has_value());
  REQUIRE(rendered->size() == 1);
  CHECK((*rendered)[0].at("clientConfig").at("url") ==
        "https://webhook.example.com:8443/validate-pod");
}

TEST_CASE("render refuses a webhook without a usable clientConfig", "[webhookconfig]") {
  json::array no_cc{json::object{{"name", "a"}}};
  auto r = renderWebhooks(no_cc, options(), "CA");
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().message == "webhooks[0]: no clientConfig");
  json::array no_path{json::object{{"name", "a"}, {"clientConfig", json::object{}}}};
  r = renderWebhooks(no_path, options(), "CA");
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().message == "webhooks[0].clientConfig: neither service.path nor url");
  json::array not_object{json::value(5)};
  CHECK_FALSE(renderWebhooks(not_object, options(), "CA").has_value());
}

TEST_CASE("render with WEBHOOK_CONFIGURATION_FAILURE_POLICY_PODS sets the pod webhooks' policy",
          "[webhookconfig]") {
  auto o = options();
  o.served_paths.insert("/validate-configmap");
  o.served_paths.insert("/validate-reservation");
  o.failure_policy_pods = "Ignore";
  auto mutating = renderWebhooks(defaultWebhooks(true), o, "CA");
  REQUIRE(mutating.has_value());
  REQUIRE(mutating->size() == 2);
  CHECK((*mutating)[0].at("failurePolicy") == "Ignore");
  CHECK((*mutating)[1].at("failurePolicy") == "Ignore");
  auto validating = renderWebhooks(defaultWebhooks(false), o, "CA");
  REQUIRE(validating.has_value());
  REQUIRE(validating->size() == 3);
  CHECK((*validating)[0].at("failurePolicy") == "Ignore");  // vpod
  // The ConfigMap and Reservation webhooks keep their templates' policy.
  CHECK((*validating)[1].at("failurePolicy") == "Fail");
  CHECK((*validating)[2].at("name") == "vreservation.koordinator.sh");
  CHECK((*validating)[2].at("failurePolicy") == "Fail");
}
