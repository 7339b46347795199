#include "webhook/configmap_validating.h"

#include <boost/json.hpp>

#include <catch2/catch.hpp>

#include "webhook_test_util.h"

using namespace koord::manager::webhook;
using namespace koord::manager::webhook::testing;
namespace json = boost::json;

namespace {

json::object configMap(json::object data, std::string_view name = "slo-controller-config",
                       std::string_view ns = "koordinator-system") {
  json::object meta;
  meta["name"] = name;
  if (!ns.empty())
    meta["namespace"] = ns;
  json::object cm;
  cm["apiVersion"] = "v1";
  cm["kind"] = "ConfigMap";
  cm["metadata"] = std::move(meta);
  cm["data"] = std::move(data);
  return cm;
}

json::object withColocation(std::string_view colocation_config) {
  json::object data;
  data["colocation-config"] = colocation_config;
  return configMap(std::move(data));
}

constexpr std::string_view kGood = R"({"enable": true, "cpuReclaimThresholdPercent": 60})";
constexpr std::string_view kBroken = R"({"enable": true, "cpuReclaimThresholdPercent": )";

std::string respond(const Handler& h, std::string_view op, const json::object& cm,
                    const json::object* old = nullptr) {
  auto r =
      serve(review(op, json::serialize(cm), "configmaps",
                   old == nullptr ? std::string() : json::serialize(*old), "admission.k8s.io/v1"),
            h);
  REQUIRE(r.http_status == 200);
  return r.outcome;
}

}  // namespace

TEST_CASE("a valid slo-controller-config is allowed", "[webhook][configmap]") {
  ConfigMapValidatingOptions options;
  CHECK_FALSE(validateSloConfigMap(withColocation(kGood), nullptr, options).has_value());
  CHECK_FALSE(validateSloConfigMap(configMap(json::object()), nullptr, options).has_value());
  CHECK(respond(configMapValidatingHandler(), "CREATE", withColocation(kGood)) == "allowed");
}

TEST_CASE("an unparsable key is denied with the parser's message", "[webhook][configmap]") {
  ConfigMapValidatingOptions options;
  auto refused = validateSloConfigMap(withColocation(kBroken), nullptr, options);
  REQUIRE(refused.has_value());
  CHECK_THAT(*refused, Catch::Contains("colocation-config"));

  auto out_of_range = validateSloConfigMap(withColocation(R"({"cpuReclaimThresholdPercent": -5})"),
                                           nullptr, options);
  REQUIRE(out_of_range.has_value());
  CHECK_THAT(*out_of_range, Catch::Contains("cpuReclaimThresholdPercent"));

  Handler h = configMapValidatingHandler();
  auto r = serve(review("CREATE", json::serialize(withColocation(kBroken)), "configmaps"), h);
  CHECK(r.outcome == "denied");
  auto status = parse(r.body).at("response").at("status");
  CHECK(status.at("code") == 400);
  CHECK(status.at("message") == json::value(*refused));
}

TEST_CASE("other ConfigMaps and DELETE are not judged", "[webhook][configmap]") {
  Handler h = configMapValidatingHandler();
  json::object data;
  data["colocation-config"] = kBroken;
  CHECK(respond(h, "CREATE", configMap(data, "other")) == "allowed");
  CHECK(respond(h, "CREATE", configMap(data, "slo-controller-config", "kube-system")) == "allowed");
  // The namespace may only be in the request.
  auto nameless = configMap(data, "slo-controller-config", "");
  auto r = serve(review("CREATE", json::serialize(nameless), "configmaps"), h);
  CHECK(r.outcome == "allowed");  // the review's namespace is "default"
  std::string in_ns = review("CREATE", json::serialize(nameless), "configmaps");
  in_ns.replace(in_ns.find("\"default\""), 9, "\"koordinator-system\"");
  CHECK(serve(in_ns, h).outcome == "denied");

  CHECK(serve(review("DELETE", "", "configmaps", json::serialize(withColocation(kBroken))), h)
            .outcome == "allowed");

  ConfigMapValidatingOptions custom;
  custom.namespace_name = "ops";
  custom.name = "slo";
  Handler hc = configMapValidatingHandler(custom);
  CHECK(respond(hc, "CREATE", withColocation(kBroken)) == "allowed");
  CHECK(respond(hc, "CREATE", configMap(data, "slo", "ops")) == "denied");
}

TEST_CASE("UPDATE checks only the keys that changed", "[webhook][configmap]") {
  Handler h = configMapValidatingHandler();
  json::object old_data;
  old_data["colocation-config"] = kBroken;
  auto old = configMap(old_data);
  json::object new_data = old_data;
  new_data["unrelated"] = "anything";
  CHECK(respond(h, "UPDATE", configMap(new_data), &old) == "allowed");
  new_data["colocation-config"] = std::string(kBroken) + " ";
  CHECK(respond(h, "UPDATE", configMap(new_data), &old) == "denied");
  new_data["colocation-config"] = kGood;
  CHECK(respond(h, "UPDATE", configMap(new_data), &old) == "allowed");
  // Emptying a key is always allowed.
  new_data["colocation-config"] = "";
  CHECK(respond(h, "UPDATE", configMap(new_data), &old) == "allowed");
}

TEST_CASE("two node strategies selecting one node are denied", "[webhook][configmap]") {
  ConfigMapValidatingOptions options;
  options.nodes = [] {
    return std::vector<std::pair<std::string, koord::kube::Labels>>{
        {"n1", {{"pool", "a"}}}, {"n2", {{"pool", "a"}, {"gpu", "true"}}}};
  };
  auto config = withColocation(R"({"enable": true, "nodeConfigs": [
    {"name": "pool-a", "nodeSelector": {"matchLabels": {"pool": "a"}}, "cpuReclaimThresholdPercent": 50},
    {"name": "gpu", "nodeSelector": {"matchLabels": {"gpu": "true"}}, "cpuReclaimThresholdPercent": 40}]})");
  auto refused = validateSloConfigMap(config, nullptr, options);
  REQUIRE(refused.has_value());
  CHECK(*refused ==
        "colocation-config: node \"n2\" is selected by more than one node strategy: "
        "\"pool-a\", \"gpu\"");
  options.nodes = [] {
    return std::vector<std::pair<std::string, koord::kube::Labels>>{{"n1", {{"pool", "a"}}}};
  };
  CHECK_FALSE(validateSloConfigMap(config, nullptr, options).has_value());
}
