// koord manager end to end against the real apiserver: the apiserver calls its webhooks over TLS
// (pod mutation by a ClusterColocationProfile, refused pods, ConfigMaps and Reservations), its
// controllers turn a NodeMetric into the node's batch allocatable, and a second manager takes
// over the controllers when the leader is killed.
#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <csignal>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "cluster_api.h"
#include "cluster_env.h"
#include "koord/kube/leader_election.h"
#include "koord/kube/quantity.h"
#include "koord/kube/time.h"
#include "loopback_http.h"
#include "manifests.h"
#include "subprocess.h"
#include "tcp_relay.h"

using namespace std::chrono_literals;
namespace json = boost::json;
using koord::kube::ListOptions;
using koord::kube::ResourceRef;
using koord::testing::eventually;
using koord::testing::koordBinary;
using koord::testing::KubeApi;
using koord::testing::named;
using koord::testing::ok;
using koord::testing::str;
using koord::testing::TestNamespace;
using koord::testing::tokenConfig;
using koord::testing::uniqueName;
using namespace koord::testing::resources;

namespace {

std::int64_t quantityValue(const json::value& obj, std::initializer_list<const char*> path) {
  std::string q = str(obj, path);
  if (q.empty())
    return -1;
  return koord::kube::Quantity::parse(q).value().value();
}

// A webhook configuration that only reaches the test's own namespaces, so the Fail policy can
// never touch another test's pods or ConfigMaps, even while a manager is killed.
json::object webhook(const std::string& name, const std::string& path, const char* resource,
                     json::array operations, const std::string& ns_label,
                     const std::string& ns_value) {
  return json::object{
      {"name", name},
      {"admissionReviewVersions", json::array{"v1", "v1beta1"}},
      {"clientConfig",
       json::object{{"service", json::object{{"name", "koordinator-webhook-service"},
                                             {"namespace", "koordinator-system"},
                                             {"path", path}}}}},
      {"failurePolicy", "Fail"},
      {"sideEffects", "None"},
      {"timeoutSeconds", 10},
      {"namespaceSelector", json::object{{"matchLabels", json::object{{ns_label, ns_value}}}}},
      {"rules", json::array{json::object{{"apiGroups", json::array{""}},
                                         {"apiVersions", json::array{"v1"}},
                                         {"operations", std::move(operations)},
                                         {"resources", json::array{resource}}}}}};
}

json::object pod(const std::string& name, const std::string& ns, json::object labels,
                 json::object requests, json::object limits, const std::string& node = "") {
  json::object spec{
      {"containers",
       json::array{json::object{{"name", "main"},
                                {"image", "busybox"},
                                {"resources", json::object{{"requests", std::move(requests)},
                                                           {"limits", std::move(limits)}}}}}}};
  if (!node.empty())
    spec["nodeName"] = node;
  return json::object{
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata", json::object{{"name", name}, {"namespace", ns}, {"labels", std::move(labels)}}},
      {"spec", std::move(spec)}};
}

// One koord manager process with its own ports and cert dir.
struct Manager {
  int health_port = koord::testing::freeLoopbackPort();
  int metrics_port = koord::testing::freeLoopbackPort();
  int webhook_port = koord::testing::freeLoopbackPort();
  std::unique_ptr<koord::testing::Subprocess> process;

  Manager(const std::string& sys_ns, const std::string& id, const std::string& cert_dir,
          bool webhooks, const std::string& kubeconfig = "") {
    auto env = koord::testing::readClusterEnv();
    std::vector<std::string> args{
        koordBinary(),
        "manager",
        "--kubeconfig=" +
            (kubeconfig.empty() ? koord::testing::needEnv(env, "KOORD_KUBECONFIG") : kubeconfig),
        "--leader-election-namespace=" + sys_ns,
        "--config-namespace=" + sys_ns,
        "--metrics-addr=127.0.0.1:" + std::to_string(metrics_port),
        "--health-probe-addr=127.0.0.1:" + std::to_string(health_port),
        webhooks ? "--feature-gates=ConfigMapValidatingWebhook=true,ReservationMutatingWebhook=true"
                 : "--feature-gates=PodMutatingWebhook=false,PodValidatingWebhook=false,"
                   "ElasticMutatingWebhook=false,ElasticValidatingWebhook=false",
        "-v=4"};
    process = std::make_unique<koord::testing::Subprocess>(
        args, std::map<std::string, std::optional<std::string>>{
                  {"WEBHOOK_PORT", std::to_string(webhook_port)},
                  {"WEBHOOK_HOST", "127.0.0.1"},
                  {"WEBHOOK_CERT_DIR", cert_dir},
                  {"POD_NAMESPACE", sys_ns},
                  {"MUTATING_WEBHOOK_NAME", id + "-mutating"},
                  {"VALIDATING_WEBHOOK_NAME", id + "-validating"}});
  }
};

std::string leaseHolder(koord::kube::RestClient& api, const std::string& ns,
                        std::int64_t* transitions = nullptr) {
  auto lease = api.getSync(named(kLeases, "koordinator-manager", ns));
  if (!lease)
    return "";
  if (transitions != nullptr) {
    const auto* spec = lease->as_object().if_contains("spec");
    *transitions = spec ? koord::kube::recordFromLeaseSpec(*spec).lease_transitions : 0;
  }
  return str(*lease, {"spec", "holderIdentity"});
}

}  // namespace

TEST_CASE("manager: webhooks over TLS, batch resources, leader handover", "[cluster][manager]") {
  KubeApi api(tokenConfig());
  koord::testing::applyCrds(*api);
  koord::testing::applyPriorityClasses(*api);

  const std::string id = uniqueName("koord-e2e");
  TestNamespace sys(*api, "koord-sys");
  TestNamespace apps(*api, "koord-apps");
  TestNamespace work(*api, "koord-work");
  // Only namespaces carrying the test's label reach its webhooks.
  for (const auto* ns : {&sys, &apps}) {
    ok(api->patchSync(named(kNamespaces, ns->name()), koord::kube::PatchType::kMergePatch,
                      json::object{{"metadata", {{"labels", {{"koord-e2e", id}}}}}}),
       "label namespace");
  }
  auto templates = [&](bool mutating) {
    json::array whs;
    if (mutating) {
      whs.push_back(webhook("mpod-create.koordinator.sh", "/mutate-pod", "pods",
                            json::array{"CREATE"}, "koord-e2e", id));
    } else {
      whs.push_back(webhook("vpod.koordinator.sh", "/validate-pod", "pods",
                            json::array{"CREATE", "UPDATE"}, "koord-e2e", id));
      // Selected by the label, as the manager renders it (webhook_configuration.cpp).
      auto cm = webhook("vconfigmap.koordinator.sh", "/validate-configmap", "configmaps",
                        json::array{"CREATE", "UPDATE"}, "koord-e2e", id);
      cm["objectSelector"] = json::object{
          {"matchExpressions",
           json::array{json::object{{"key", "koordinator.sh/configmap-type"},
                                    {"operator", "In"},
                                    {"values", json::array{"slo-controller-config"}}}}}};
      whs.push_back(std::move(cm));
      // NodeMetrics are cluster-wide: this one sees every test's, and lets through all but this
      // test's koordlet; Ignore, so a killed manager stops nobody.
      auto node_writes = webhook("vnode-writes.koordinator.sh", "/validate-node-writes",
                                 "nodemetrics", json::array{"UPDATE"}, "koord-e2e", id);
      node_writes.erase("namespaceSelector");
      node_writes["failurePolicy"] = "Ignore";
      auto& rule = node_writes["rules"].as_array()[0].as_object();
      rule["apiGroups"] = json::array{"slo.koordinator.sh"};
      rule["apiVersions"] = json::array{"v1alpha1"};
      rule["resources"] = json::array{"nodemetrics", "nodemetrics/status"};
      whs.push_back(std::move(node_writes));
      // Reservations are cluster-wide: only those carrying the test's label are sent.
      auto reservations = webhook("vreservation.koordinator.sh", "/validate-reservation",
                                  "reservations", json::array{"CREATE", "UPDATE"}, "koord-e2e", id);
      reservations.erase("namespaceSelector");
      reservations["objectSelector"] = json::object{{"matchLabels", {{"koord-e2e", id}}}};
      auto& reservation_rule = reservations["rules"].as_array()[0].as_object();
      reservation_rule["apiGroups"] = json::array{"scheduling.koordinator.sh"};
      reservation_rule["apiVersions"] = json::array{"v1alpha1"};
      whs.push_back(std::move(reservations));
    }
    return whs;
  };
  for (bool mutating : {true, false}) {
    auto whs = templates(mutating);
    ok(api->createSync(mutating ? kMutatingWebhooks : kValidatingWebhooks,
                       json::object{{"apiVersion", "admissionregistration.k8s.io/v1"},
                                    {"kind", mutating ? "MutatingWebhookConfiguration"
                                                      : "ValidatingWebhookConfiguration"},
                                    {"metadata",
                                     {{"name", id + (mutating ? "-mutating" : "-validating")},
                                      {"annotations", {{"template", json::serialize(whs)}}}}},
                                    {"webhooks", json::array{}}}),
       "create webhook configuration");
  }
  struct Cleanup {
    KubeApi& api;
    std::string id;
    std::string node;
    ~Cleanup() {
      (void)api->removeSync(named(kMutatingWebhooks, id + "-mutating"));
      (void)api->removeSync(named(kValidatingWebhooks, id + "-validating"));
      (void)api->removeSync(named(kColocationProfiles, id + "-profile"));
      (void)api->removeSync(named(kNodes, node));
      (void)api->removeSync(named(kNodeMetrics, node));
      (void)api->removeSync(named(kNodeSLOs, node));
      (void)api->removeSync(named(kNodes, id + "-other"));
      (void)api->removeSync(named(kClusterRoles, id + "-koordlet"));
      (void)api->removeSync(named(kClusterRoleBindings, id + "-koordlet"));
      (void)api->removeSync(named(kReservations, id + "-reservation"));
    }
  } cleanup{api, id, id + "-node"};

  auto tmp = std::filesystem::temp_directory_path() / id;
  Manager leader(sys.name(), id, (tmp / "a").string(), true);
  // The first replica alone: it must lead.
  REQUIRE(eventually(60s, [&] { return !leaseHolder(*api, sys.name()).empty(); }));
  const std::string first_holder = leaseHolder(*api, sys.name());

  // The manager fills in URL and caBundle; the apiserver then calls it over TLS.
  REQUIRE(eventually(60s, [&] {
    auto m = api->getSync(named(kMutatingWebhooks, id + "-mutating"));
    const auto* whs = m ? m->as_object().if_contains("webhooks") : nullptr;
    return whs && whs->is_array() && whs->get_array().size() == 1 &&
           !str(whs->get_array()[0], {"clientConfig", "caBundle"}).empty();
  }));
  auto webhook_url =
      str(api->getSync(named(kMutatingWebhooks, id + "-mutating"))->at("webhooks").as_array()[0],
          {"clientConfig", "url"});
  CHECK(webhook_url == "https://127.0.0.1:" + std::to_string(leader.webhook_port) + "/mutate-pod");
  // The CA's key stays out of the serving Secret.
  auto serving =
      ok(api->getSync(named(kSecrets, "koordinator-webhook-certs", sys.name())), "serving secret");
  CHECK(serving.at("data").as_object().contains("cert.pem"));
  CHECK_FALSE(serving.at("data").as_object().contains("ca-key.pem"));
  auto ca_secret =
      ok(api->getSync(named(kSecrets, "koordinator-webhook-certs-ca", sys.name())), "CA secret");
  CHECK(ca_secret.at("data").as_object().contains("ca-key.pem"));

  ok(api->createSync(
         kColocationProfiles,
         json::object{
             {"apiVersion", "config.koordinator.sh/v1alpha1"},
             {"kind", "ClusterColocationProfile"},
             {"metadata", {{"name", id + "-profile"}}},
             {"spec",
              {{"namespaceSelector", {{"matchLabels", {{"koord-e2e", id}}}}},
               {"selector", {{"matchLabels", {{"koordinator.sh/enable-colocation", "true"}}}}},
               {"qosClass", "BE"},
               {"priorityClassName", "koord-batch"},
               {"koordinatorPriority", 1111},
               {"schedulerName", "koord-scheduler"},
               {"labels", {{"koordinator.sh/mutated", "true"}}}}}}),
     "create ClusterColocationProfile");

  // The profile reaches the manager's informer shortly after; dry runs go through admission
  // without creating anything.
  auto be_pod = pod("be", apps.name(), {{"koordinator.sh/enable-colocation", "true"}},
                    {{"cpu", "500m"}, {"memory", "256Mi"}}, {{"cpu", "1"}, {"memory", "512Mi"}});
  koord::kube::WriteOptions dry;
  dry.dry_run = true;
  REQUIRE(eventually(30s, [&] {
    auto r = api->createSync(named(kPods, "", apps.name()), be_pod, dry);
    return r && str(*r, {"spec", "schedulerName"}) == "koord-scheduler";
  }));
  auto created = ok(api->createSync(named(kPods, "", apps.name()), be_pod), "create BE pod");
  CHECK(str(created, {"metadata", "labels", "koordinator.sh/qosClass"}) == "BE");
  CHECK(str(created, {"metadata", "labels", "koordinator.sh/priority"}) == "1111");
  CHECK(str(created, {"metadata", "labels", "koordinator.sh/mutated"}) == "true");
  CHECK(str(created, {"spec", "priorityClassName"}) == "koord-batch");
  CHECK(created.at("spec").at("priority").to_number<std::int64_t>() == 5000);
  CHECK(str(created, {"spec", "schedulerName"}) == "koord-scheduler");
  const auto& container = created.at("spec").at("containers").as_array()[0];
  const auto& requests = container.at("resources").at("requests").as_object();
  const auto& limits = container.at("resources").at("limits").as_object();
  CHECK_FALSE(requests.contains("cpu"));
  CHECK_FALSE(requests.contains("memory"));
  CHECK_FALSE(limits.contains("cpu"));
  CHECK(quantityValue(container, {"resources", "requests", "kubernetes.io/batch-cpu"}) == 500);
  CHECK(quantityValue(container, {"resources", "limits", "kubernetes.io/batch-cpu"}) == 1000);
  CHECK(quantityValue(container, {"resources", "requests", "kubernetes.io/batch-memory"}) ==
        256ll << 20);
  CHECK(quantityValue(container, {"resources", "limits", "kubernetes.io/batch-memory"}) ==
        512ll << 20);
  CHECK(str(created, {"metadata", "annotations", "node.koordinator.sh/extended-resource-spec"})
            .find("kubernetes.io/batch-cpu") != std::string::npos);

  // Refused pods name the rule.
  auto lsr = api->createSync(
      named(kPods, "", apps.name()),
      pod("lsr", apps.name(), {{"koordinator.sh/qosClass", "LSR"}},
          {{"cpu", "500m"}, {"memory", "64Mi"}}, {{"cpu", "500m"}, {"memory", "64Mi"}}));
  REQUIRE_FALSE(lsr.has_value());
  CHECK(lsr.error().message.find("must be integer") != std::string::npos);
  auto ls_batch = api->createSync(
      named(kPods, "", apps.name()),
      pod("ls-batch", apps.name(), {{"koordinator.sh/qosClass", "LS"}},
          {{"kubernetes.io/batch-cpu", "500"}}, {{"kubernetes.io/batch-cpu", "500"}}));
  REQUIRE_FALSE(ls_batch.has_value());
  CHECK(ls_batch.error().message.find("must specify koordinator QoS BE") != std::string::npos);

  // An invalid slo-controller-config is refused; a valid one enables co-location.
  auto config_map = [&](const std::string& colocation) {
    return json::object{
        {"apiVersion", "v1"},
        {"kind", "ConfigMap"},
        {"metadata",
         {{"name", "slo-controller-config"},
          {"namespace", sys.name()},
          {"labels", {{"koordinator.sh/configmap-type", "slo-controller-config"}}}}},
        {"data", {{"colocation-config", colocation}}}};
  };
  auto bad = api->createSync(named(kConfigMaps, "", sys.name()),
                             config_map(R"({"cpuReclaimThresholdPercent": -1})"));
  REQUIRE_FALSE(bad.has_value());
  CHECK(bad.error().message.find("cpuReclaimThresholdPercent") != std::string::npos);
  ok(api->createSync(named(kConfigMaps, "", sys.name()), config_map(R"({"enable": true})")),
     "create slo-controller-config");

  // Reservations: the CRD's schema refuses one without owners before any webhook is asked; what
  // the schema cannot say (a selector that does not compile, a scheduled reservation's fixed
  // fields) /validate-reservation refuses, naming the field.
  {
    auto reservation = [&](json::array owners) {
      return json::object{
          {"apiVersion", "scheduling.koordinator.sh/v1alpha1"},
          {"kind", "Reservation"},
          {"metadata", {{"name", id + "-reservation"}, {"labels", {{"koord-e2e", id}}}}},
          {"spec",
           {{"template",
             {{"spec",
               {{"containers", json::array{{{"name", "main"},
                                            {"image", "busybox"},
                                            {"resources", {{"requests", {{"cpu", "100m"}}}}}}}}}}}},
            {"owners", std::move(owners)}}}};
    };
    json::object no_owners = reservation({});
    no_owners["spec"].as_object().erase("owners");
    auto refused = api->createSync(kReservations, no_owners);
    REQUIRE_FALSE(refused.has_value());
    CHECK(refused.error().code == 422);
    CHECK(refused.error().message.find("spec.owners") != std::string::npos);

    auto in_without_values = reservation(
        json::array{{{"labelSelector",
                      {{"matchExpressions", json::array{{{"key", "app"}, {"operator", "In"}}}}}}}});
    std::string why;
    REQUIRE(eventually(30s, [&] {
      auto r = api->createSync(kReservations, in_without_values, dry);
      why = r ? std::string("allowed") : r.error().message;
      return !r && r.error().code == 400;
    }));
    INFO(why);
    CHECK(why.find("vreservation.koordinator.sh") != std::string::npos);
    CHECK(why.find("spec.owners[0].labelSelector") != std::string::npos);

    const auto reservation_ref = named(kReservations, id + "-reservation");
    ok(api->createSync(
           kReservations,
           reservation(json::array{{{"labelSelector", {{"matchLabels", {{"app", "web"}}}}}}})),
       "create Reservation");
    ok(api->patchSync(koord::testing::subresource(kReservations, "status", id + "-reservation"),
                      koord::kube::PatchType::kMergePatch,
                      json::object{{"status", {{"phase", "Available"}, {"nodeName", "node-a"}}}}),
       "schedule the Reservation");
    auto fixed = api->patchSync(reservation_ref, koord::kube::PatchType::kMergePatch,
                                json::object{{"spec", {{"allocatePolicy", "Restricted"}}}});
    REQUIRE_FALSE(fixed.has_value());
    CHECK(fixed.error().message.find("spec.allocatePolicy: Invalid value: \"Restricted\"") !=
          std::string::npos);
    ok(api->patchSync(reservation_ref, koord::kube::PatchType::kMergePatch,
                      json::object{{"spec", {{"ttl", "48h"}}}}),
       "extend the scheduled Reservation's ttl");
  }

  // Batch resources: capacity 8 cpu / 20000Mi, allocatable 7500m / 19000Mi.
  const std::string node = id + "-node";
  ok(api->createSync(
         kNodes,
         json::object{
             {"apiVersion", "v1"},
             {"kind", "Node"},
             {"metadata", {{"name", node}}},
             {"status",
              {{"capacity", {{"cpu", "8"}, {"memory", "20000Mi"}, {"pods", "110"}}},
               {"allocatable", {{"cpu", "7500m"}, {"memory", "19000Mi"}, {"pods", "110"}}}}}}),
     "create node");
  REQUIRE(eventually(30s, [&] {
    auto nm = api->getSync(named(kNodeMetrics, node));
    return nm && nm->at("spec").at("metricCollectPolicy").at("aggregateDurationSeconds") == 300;
  }));
  REQUIRE(eventually(30s, [&] { return api->getSync(named(kNodeSLOs, node)).has_value(); }));

  // Reliability check 17: a configuration that reaches the manager past the webhook (which
  // selects ConfigMaps by their label: one carrying it neither before nor after is not sent)
  // leaves every NodeSLO with the last good values and is reported as an Event.
  {
    auto suppressPercent = [&]() -> std::int64_t {
      auto slo = api->getSync(named(kNodeSLOs, node));
      if (!slo)
        return -1;
      const auto* v = slo->at("spec").as_object().if_contains("resourceUsedThresholdWithBE");
      const auto* p =
          v != nullptr ? v->as_object().if_contains("cpuSuppressThresholdPercent") : nullptr;
      return p != nullptr ? p->to_number<std::int64_t>() : -1;
    };
    auto with_threshold = [&](const std::string& percent, bool labelled) {
      auto cm = config_map(R"({"enable": true})");
      cm["data"].as_object()["resource-threshold-config"] =
          R"({"clusterStrategy": {"enable": true, "cpuSuppressThresholdPercent": )" + percent +
          "}}";
      if (!labelled)
        cm["metadata"].as_object().erase("labels");
      return cm;
    };
    const auto cm_ref = named(kConfigMaps, "slo-controller-config", sys.name());
    ok(api->updateSync(cm_ref, with_threshold("60", true)), "set a suppress threshold");
    REQUIRE(eventually(30s, [&] { return suppressPercent() == 60; }));
    // The same valid content without the label: the webhook still sees this update (the old
    // object carries the label) and allows it...
    ok(api->updateSync(cm_ref, with_threshold("60", false)), "drop the label");
    // ...and the next one, labelled neither before nor after, it never sees.
    ok(api->updateSync(cm_ref, with_threshold("500", false)), "bypass the webhook");
    ListOptions events;
    events.field_selector =
        "involvedObject.kind=ConfigMap,involvedObject.name=slo-controller-config,"
        "reason=InvalidSLOConfig";
    std::string message;
    REQUIRE(eventually(30s, [&] {
      auto list = api->listSync(named(kEvents, "", sys.name()), events);
      if (!list || list->at("items").as_array().empty())
        return false;
      message = str(list->at("items").as_array().front(), {"message"});
      return true;
    }));
    CHECK(message.find("cpuSuppressThresholdPercent") != std::string::npos);
    std::this_thread::sleep_for(3s);
    CHECK(suppressPercent() == 60);
    // Back to the labelled configuration the rest of the test expects.
    ok(api->updateSync(cm_ref, config_map(R"({"enable": true})")), "restore the configuration");
    REQUIRE(eventually(30s, [&] { return suppressPercent() != 60; }));
  }

  // An LS pod with a metric, an LS pod without one (its request counts), a batch pod (ignored).
  ok(api->createSync(named(kPods, "", work.name()),
                     pod("hp", work.name(), {}, {{"cpu", "2"}, {"memory", "4000Mi"}},
                         {{"cpu", "2"}, {"memory", "4000Mi"}}, node)),
     "create hp pod");
  ok(api->createSync(named(kPods, "", work.name()),
                     pod("hp-new", work.name(), {}, {{"cpu", "1"}, {"memory", "1000Mi"}},
                         {{"cpu", "2"}, {"memory", "2000Mi"}}, node)),
     "create hp-new pod");
  ok(api->createSync(
         named(kPods, "", work.name()),
         pod("batch", work.name(), {{"koordinator.sh/priority-class", "koord-batch"}},
             {{"cpu", "1"}, {"memory", "1000Mi"}}, {{"cpu", "1"}, {"memory", "1000Mi"}}, node)),
     "create batch pod");
  auto report = [&](const std::string& hp_cpu, std::chrono::system_clock::time_point at) {
    json::object status{
        {"updateTime", koord::kube::formatTime(at)},
        {"nodeMetric",
         {{"nodeUsage", {{"resources", {{"cpu", "4"}, {"memory", "6000Mi"}}}}},
          {"systemUsage", {{"resources", {{"cpu", "300m"}, {"memory", "500Mi"}}}}}}},
        {"podsMetric",
         json::array{
             json::object{{"namespace", work.name()},
                          {"name", "hp"},
                          {"podUsage", {{"resources", {{"cpu", hp_cpu}, {"memory", "3000Mi"}}}}}},
             json::object{{"namespace", work.name()},
                          {"name", "batch"},
                          {"podUsage", {{"resources", {{"cpu", "900m"}, {"memory", "900Mi"}}}}}}}}};
    ok(api->patchSync(koord::testing::subresource(kNodeMetrics, "status", node),
                      koord::kube::PatchType::kMergePatch, json::object{{"status", status}}),
       "report NodeMetric status");
  };
  auto batch = [&](const char* which, const char* resource) {
    auto n = api->getSync(named(kNodes, node));
    return n ? quantityValue(*n, {"status", which, resource}) : -2;
  };
  report("1500m", std::chrono::system_clock::now());
  // cpu: 8000 - 8000*40% (3200) - max(system 300, reserved 500) - hp usage 1500 - hp-new
  //      request 1000 = 1800 milli; memory: 20000Mi - 7000Mi - max(500Mi, 1000Mi) - 3000Mi -
  //      1000Mi = 8000Mi.
  REQUIRE(eventually(30s, [&] { return batch("allocatable", "kubernetes.io/batch-cpu") == 1800; }));
  CHECK(batch("capacity", "kubernetes.io/batch-cpu") == 1800);
  CHECK(batch("allocatable", "kubernetes.io/batch-memory") == 8000ll << 20);

  // A move under resourceDiffThreshold (1700 vs 1800, 5.6%) is not written...
  report("1600m", std::chrono::system_clock::now());
  std::this_thread::sleep_for(3s);
  CHECK(batch("allocatable", "kubernetes.io/batch-cpu") == 1800);
  // ...one over it is (800 vs 1800).
  report("2500m", std::chrono::system_clock::now());
  REQUIRE(eventually(30s, [&] { return batch("allocatable", "kubernetes.io/batch-cpu") == 800; }));

  // A metric older than degradeTimeMinutes (15) takes the batch resources away.
  report("2500m", std::chrono::system_clock::now() - 20min);
  REQUIRE(eventually(30s, [&] { return batch("allocatable", "kubernetes.io/batch-cpu") == -1; }));
  CHECK(batch("capacity", "kubernetes.io/batch-memory") == -1);

  // A koordlet's token bound to its pod on `node` may write that node's NodeMetric, not another's
  // (koord's own /validate-node-writes; RBAC alone lets it write every node's).
  {
    // Another node, whose NodeMetric the manager creates (and deletes with it).
    const std::string other = id + "-other";
    ok(api->createSync(
           kNodes,
           json::object{{"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", {{"name", other}}}}),
       "create another node");
    REQUIRE(eventually(30s, [&] { return api->getSync(named(kNodeMetrics, other)).has_value(); }));
    ok(api->createSync(named(kServiceAccounts, "", sys.name()),
                       json::object{{"apiVersion", "v1"},
                                    {"kind", "ServiceAccount"},
                                    {"metadata", {{"name", "koordlet"}}}}),
       "create koordlet service account");
    ok(api->createSync(
           kClusterRoles,
           json::object{{"apiVersion", "rbac.authorization.k8s.io/v1"},
                        {"kind", "ClusterRole"},
                        {"metadata", {{"name", id + "-koordlet"}}},
                        {"rules", json::array{json::object{
                                      {"apiGroups", json::array{"slo.koordinator.sh"}},
                                      {"resources", json::array{"nodemetrics/status"}},
                                      {"verbs", json::array{"get", "patch", "update"}}}}}}),
       "create ClusterRole");
    ok(api->createSync(
           kClusterRoleBindings,
           json::object{{"apiVersion", "rbac.authorization.k8s.io/v1"},
                        {"kind", "ClusterRoleBinding"},
                        {"metadata", {{"name", id + "-koordlet"}}},
                        {"roleRef",
                         {{"apiGroup", "rbac.authorization.k8s.io"},
                          {"kind", "ClusterRole"},
                          {"name", id + "-koordlet"}}},
                        {"subjects", json::array{json::object{{"kind", "ServiceAccount"},
                                                              {"name", "koordlet"},
                                                              {"namespace", sys.name()}}}}}),
       "create ClusterRoleBinding");
    // No requests: it must not move the node's batch figures the test checks after this.
    auto koordlet_spec = pod("koordlet-x", sys.name(), {}, {}, {}, node);
    koordlet_spec["spec"].as_object()["serviceAccountName"] = "koordlet";
    // Without the token volume the pod need not wait for the token controller's Secret.
    koordlet_spec["spec"].as_object()["automountServiceAccountToken"] = false;
    auto koordlet_pod = ok(api->createSync(named(kPods, "", sys.name()), koordlet_spec),
                           "create the koordlet's pod");
    auto token =
        ok(api->createSync(
               koord::testing::subresource(kServiceAccounts, "token", "koordlet", sys.name()),
               json::object{{"apiVersion", "authentication.k8s.io/v1"},
                            {"kind", "TokenRequest"},
                            {"spec",
                             {{"expirationSeconds", 600},
                              {"boundObjectRef",
                               {{"apiVersion", "v1"},
                                {"kind", "Pod"},
                                {"name", "koordlet-x"},
                                {"uid", str(koordlet_pod, {"metadata", "uid"})}}}}}}),
           "request a token bound to the koordlet's pod");
    auto config = tokenConfig();
    config.bearer_token = str(token, {"status", "token"});
    config.bearer_token_file.clear();
    KubeApi as_koordlet(config);
    auto patchStatus = [&](const std::string& name) {
      return as_koordlet->patchSync(
          koord::testing::subresource(kNodeMetrics, "status", name),
          koord::kube::PatchType::kMergePatch,
          json::object{
              {"status",
               {{"updateTime", koord::kube::formatTime(std::chrono::system_clock::now())}}}});
    };
    // Denied once the manager's pod informer has the koordlet's pod.
    std::string why;
    const bool denied = eventually(30s, [&] {
      auto r = patchStatus(other);
      why = r ? std::string("allowed") : r.error().message;
      return !r && r.error().code == 403;
    });
    auto log = leader.process->stderrSoFar();
    INFO("leader's log: " << log.substr(log.size() > 3000 ? log.size() - 3000 : 0));
    REQUIRE(denied);
    INFO(why);
    CHECK(why.find("may change only its own node's objects") != std::string::npos);
    auto own = patchStatus(node);
    INFO((own ? std::string() : own.error().message));
    CHECK(own.has_value());
  }

  // Leader handover: a second manager waits; the leader is killed; the second takes the Lease
  // within lease duration + retry period and runs the controllers.
  Manager standby(sys.name(), id, (tmp / "b").string(), false);
  std::this_thread::sleep_for(3s);
  std::int64_t transitions_before = 0;
  CHECK(leaseHolder(*api, sys.name(), &transitions_before) == first_holder);
  auto killed_at = std::chrono::steady_clock::now();
  leader.process->signal(SIGKILL);
  std::string second_holder;
  REQUIRE(eventually(40s, [&] {
    second_holder = leaseHolder(*api, sys.name());
    return !second_holder.empty() && second_holder != first_holder;
  }));
  double handover =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - killed_at).count();
  WARN("handover took " << handover << " s");
  CHECK(handover <= 15 + 2 + 5);  // lease + retry, with slack for a shared 2-core machine
  std::int64_t transitions_after = 0;
  leaseHolder(*api, sys.name(), &transitions_after);
  CHECK(transitions_after == transitions_before + 1);
  report("2500m", std::chrono::system_clock::now());
  REQUIRE(eventually(30s, [&] { return batch("allocatable", "kubernetes.io/batch-cpu") == 800; }));

  standby.process->signal(SIGTERM);
  auto stopped = standby.process->wait(20s);
  CHECK_FALSE(stopped.timed_out);
  INFO("standby's log: " << stopped.err.substr(stopped.err.size() > 4000 ? stopped.err.size() - 4000
                                                                         : 0));
  CHECK(stopped.exit_code == 0);
}

namespace {

// When the apiserver received each write made as `username`, from its audit log (cluster.sh
// records every write once answered).
std::vector<std::chrono::system_clock::time_point> writesBy(const std::string& username) {
  const std::string path =
      koord::testing::needEnv(koord::testing::readClusterEnv(), "KOORD_AUDIT_LOG");
  std::ifstream in(path);
  if (!in)
    FAIL("cannot read the apiserver's audit log " << path);
  std::vector<std::chrono::system_clock::time_point> out;
  std::string line;
  while (std::getline(in, line)) {
    boost::system::error_code ec;
    auto v = json::parse(line, ec);
    if (ec || !v.is_object() || str(v, {"stage"}) != "ResponseComplete" ||
        str(v, {"user", "username"}) != username)
      continue;
    if (auto at = koord::kube::parseTime(str(v, {"requestReceivedTimestamp"})))
      out.push_back(*at);
  }
  return out;
}

double secondsBetween(std::chrono::system_clock::time_point a,
                      std::chrono::system_clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

}  // namespace

// The cut-off leader reaches the apiserver through a TCP relay, as its own ServiceAccount, so the
// audit log tells its writes from its successor's.
TEST_CASE("manager: a leader cut off from the apiserver exits within the renew deadline",
          "[manager-cutoff]") {
  // koord manager's lease timings (Koordinator's, fixed): 15 s lease, 10 s renew deadline, 2 s
  // retry period.
  constexpr auto kLease = 15s;
  constexpr auto kRenew = 10s;
  constexpr auto kRetry = 2s;
  constexpr auto kSlack = 3s;  // a shared 2-core machine and ASan
  KubeApi api(tokenConfig());
  koord::testing::applyCrds(*api);
  const std::string id = uniqueName("koord-cut");
  TestNamespace sys(*api, "koord-cut");
  const std::string node = id + "-node";
  struct Cleanup {
    KubeApi& api;
    std::string id;
    std::string node;
    ~Cleanup() {
      (void)api->removeSync(named(kClusterRoleBindings, id + "-leader"));
      (void)api->removeSync(named(kNodes, node));
      (void)api->removeSync(named(kNodeMetrics, node));
      (void)api->removeSync(named(kNodeSLOs, node));
    }
  } cleanup{api, id, node};

  ok(api->createSync(named(kServiceAccounts, "", sys.name()),
                     json::object{{"apiVersion", "v1"},
                                  {"kind", "ServiceAccount"},
                                  {"metadata", {{"name", "cut-leader"}}}}),
     "create ServiceAccount");
  ok(api->createSync(
         kClusterRoleBindings,
         json::object{{"apiVersion", "rbac.authorization.k8s.io/v1"},
                      {"kind", "ClusterRoleBinding"},
                      {"metadata", {{"name", id + "-leader"}}},
                      {"roleRef",
                       {{"apiGroup", "rbac.authorization.k8s.io"},
                        {"kind", "ClusterRole"},
                        {"name", "cluster-admin"}}},
                      {"subjects", json::array{json::object{{"kind", "ServiceAccount"},
                                                            {"name", "cut-leader"},
                                                            {"namespace", sys.name()}}}}}),
     "create ClusterRoleBinding");
  auto token = ok(api->createSync(koord::testing::subresource(kServiceAccounts, "token",
                                                              "cut-leader", sys.name()),
                                  json::object{{"apiVersion", "authentication.k8s.io/v1"},
                                               {"kind", "TokenRequest"},
                                               {"spec", {{"expirationSeconds", 3600}}}}),
                  "request the leader's token");
  const std::string username = "system:serviceaccount:" + sys.name() + ":cut-leader";

  auto env = koord::testing::readClusterEnv();
  const auto host = koord::testing::needEnv(env, "KOORD_APISERVER");
  koord::testing::TcpRelay relay("127.0.0.1", std::stoi(host.substr(host.rfind(':') + 1)));
  auto tmp = std::filesystem::temp_directory_path() / id;
  std::filesystem::create_directories(tmp);
  const auto kubeconfig = (tmp / "kubeconfig").string();
  std::ofstream(kubeconfig)
      << "apiVersion: v1\nkind: Config\nclusters:\n- name: relay\n  cluster:\n"
      << "    server: https://127.0.0.1:" << relay.port() << "\n"
      << "    certificate-authority: " << koord::testing::needEnv(env, "KOORD_CA_FILE") << "\n"
      << "users:\n- name: cut-leader\n  user:\n    token: " << str(token, {"status", "token"})
      << "\n"
      << "contexts:\n- name: relay\n  context:\n    cluster: relay\n"
      << "    user: cut-leader\ncurrent-context: relay\n";
  // A node for the controllers to write objects of.
  ok(api->createSync(
         kNodes,
         json::object{{"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", {{"name", node}}}}),
     "create node");

  Manager leader(sys.name(), id, (tmp / "a").string(), false, kubeconfig);
  REQUIRE(eventually(60s, [&] { return !leaseHolder(*api, sys.name()).empty(); }));
  const std::string first_holder = leaseHolder(*api, sys.name());
  // Its controllers run and write through the relay.
  REQUIRE(eventually(60s, [&] { return api->getSync(named(kNodeMetrics, node)).has_value(); }));
  Manager standby(sys.name(), id, (tmp / "b").string(), false);
  REQUIRE(eventually(30s, [&] {
    return standby.process->stderrSoFar().find("the leader is " + first_holder) !=
           std::string::npos;
  }));
  std::this_thread::sleep_for(kRetry + 1s);  // a renew or two more
  REQUIRE(leader.process->running());
  REQUIRE_FALSE(writesBy(username).empty());

  const auto cut = std::chrono::steady_clock::now();
  const auto cut_wall = std::chrono::system_clock::now();
  relay.cut();
  auto exited = leader.process->wait(kRenew + kSlack + 5s);
  const auto took = std::chrono::steady_clock::now() - cut;
  const auto exit_wall = std::chrono::system_clock::now();
  INFO("the leader exited " << std::chrono::duration<double>(took).count()
                            << " s after the cut; its log: "
                            << exited.err.substr(exited.err.size() > 3000 ? exited.err.size() - 3000
                                                                          : 0));
  REQUIRE_FALSE(exited.timed_out);
  CHECK(exited.signal == 0);
  CHECK(exited.exit_code == 1);
  CHECK(exited.err.find("leader election lost, exiting") != std::string::npos);
  // Within the renew deadline of its last renew, which came at most a retry period before the
  // cut; not at the first failed renew.
  CHECK(took <= kRenew + kSlack);
  CHECK(took >= kRenew - kRetry - 1s);
  // Before anyone could take the lease: its last renewal, as the lease records it, is still
  // there, and a lease duration from it has not passed.
  auto lease = ok(api->getSync(named(kLeases, "koordinator-manager", sys.name())), "get lease");
  const auto last = koord::kube::recordFromLeaseSpec(lease.at("spec"));
  CHECK(last.holder_identity == first_holder);
  REQUIRE(last.renew_time.has_value());
  INFO("it exited " << secondsBetween(exit_wall, *last.renew_time + kLease)
                    << " s before its lease expired");
  CHECK(exit_wall < *last.renew_time + kLease);

  // The standby takes over once the lease has expired, after the old leader stopped.
  std::string second_holder;
  REQUIRE(eventually(kLease + 2 * kRetry + kSlack, [&] {
    second_holder = leaseHolder(*api, sys.name());
    return !second_holder.empty() && second_holder != first_holder;
  }));
  lease = ok(api->getSync(named(kLeases, "koordinator-manager", sys.name())), "get lease");
  const auto taken = koord::kube::recordFromLeaseSpec(lease.at("spec"));
  REQUIRE(taken.acquire_time.has_value());
  INFO("the successor acquired the lease " << secondsBetween(exit_wall, *taken.acquire_time)
                                           << " s after the old leader exited");
  CHECK(*taken.acquire_time > exit_wall);
  CHECK(taken.lease_transitions == last.lease_transitions + 1);
  WARN("the cut-off leader exited "
       << std::chrono::duration<double>(took).count() << " s after the cut, "
       << secondsBetween(exit_wall, *last.renew_time + kLease)
       << " s before its lease expired; the successor acquired it "
       << secondsBetween(exit_wall, *taken.acquire_time) << " s after the exit");

  // Nothing the old leader wrote reached the apiserver after the cut, let alone after its
  // successor's acquireTime. The path comes back; it is gone and stays silent.
  relay.restore();
  std::this_thread::sleep_for(1s);
  const auto writes = writesBy(username);
  REQUIRE_FALSE(writes.empty());
  for (const auto& at : writes) {
    CHECK(at <= cut_wall + 100ms);
    CHECK(at < *taken.acquire_time);
  }

  standby.process->signal(SIGTERM);
  auto stopped = standby.process->wait(20s);
  CHECK_FALSE(stopped.timed_out);
  CHECK(stopped.exit_code == 0);
  std::filesystem::remove_all(tmp);
}

TEST_CASE("manager: ready once its caches sync when no webhook server runs", "[manager]") {
  // With every admission gate off nothing else marks it ready: readiness used to be rechecked
  // only when a webhook server began serving, so this manager stayed unready for good.
  KubeApi api(tokenConfig());
  koord::testing::applyCrds(*api);
  const std::string id = uniqueName("koord-ready");
  TestNamespace sys(*api, "koord-ready");
  auto tmp = std::filesystem::temp_directory_path() / id;
  Manager manager(sys.name(), id, tmp.string(), false);
  const bool ready = eventually(
      60s, [&] { return koord::testing::loopbackGet(manager.health_port, "/readyz") == "ok"; });
  INFO("its log: " << manager.process->stderrSoFar().substr(0, 4000));
  CHECK(ready);
  CHECK(manager.process->running());
  std::filesystem::remove_all(tmp);
}
