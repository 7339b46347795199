// koord::kube::RestClient against the real apiserver that cluster.sh starts: every verb on a core
// type and on a custom resource, the API server's Status kept in errors, and both ways of
// authenticating (the admin token, and the kubeconfig file).
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <future>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "cluster_api.h"
#include "cluster_env.h"
#include "koord/core/metrics.h"
#include "koord/kube/kubeconfig.h"
#include "koord/kube/rest_client.h"

using namespace std::chrono_literals;
namespace json = boost::json;
using koord::kube::ApiResult;
using koord::kube::PatchType;
using koord::kube::ResourceRef;
using koord::kube::RestClient;
using koord::kube::RestConfig;
using koord::testing::kNamespaces;
using koord::testing::needEnv;
using koord::testing::ok;
using koord::testing::readClusterEnv;
using koord::testing::str;
using koord::testing::TestNamespace;
using koord::testing::tokenConfig;
using koord::testing::uniqueName;

namespace {

RestConfig kubeconfigConfig() {
  auto path = needEnv(readClusterEnv(), "KOORD_KUBECONFIG");
  auto c = koord::kube::loadKubeconfig(path);
  if (!c)
    FAIL(c.error().message);
  return *c;
}

using Api = koord::testing::KubeApi;
using koord::testing::named;
using namespace koord::testing::resources;

json::value configMap(const std::string& name, json::object labels, json::object data) {
  return json::object{{"apiVersion", "v1"},
                      {"kind", "ConfigMap"},
                      {"metadata", {{"name", name}, {"labels", std::move(labels)}}},
                      {"data", std::move(data)}};
}

}  // namespace

TEST_CASE("ConfigMap CRUD, paging, patches and preconditions with a bearer token", "[cluster]") {
  Api api(tokenConfig());
  TestNamespace ns(*api, "koord-rest");
  ResourceRef cms = named(kConfigMaps, "", ns.name());
  auto named = [&](const std::string& name) {
    auto r = cms;
    r.name = name;
    return r;
  };

  auto a =
      ok(api->createSync(cms, configMap("a", {{"app", "koord-test"}}, {{"k", "v"}})), "create a");
  CHECK(str(a, {"metadata", "name"}) == "a");
  CHECK_FALSE(str(a, {"metadata", "uid"}).empty());
  ok(api->createSync(cms, configMap("b", {{"app", "koord-test"}}, {})), "create b");
  ok(api->createSync(cms, configMap("c", {{"app", "other"}}, {})), "create c");

  auto dup = api->createSync(cms, configMap("a", {}, {}));
  REQUIRE_FALSE(dup.has_value());
  CHECK(dup.error().code == 409);
  CHECK(dup.error().reason == "AlreadyExists");
  CHECK(koord::kube::isAlreadyExists(dup.error()));

  auto got = ok(api->getSync(named("a")), "get a");
  CHECK(str(got, {"data", "k"}) == "v");

  SECTION("list with a label selector, one item per page") {
    koord::kube::ListOptions opts;
    opts.label_selector = "app=koord-test";
    auto all = ok(api->listSync(cms, opts), "list");
    CHECK(all.at("items").as_array().size() == 2);

    // One item per page; the apiserver may end with an empty page (its "more" counts keys the
    // selector filters out), so follow continue until it is empty.
    opts.limit = 1;
    std::vector<std::string> names;
    for (int page = 0; page < 5; ++page) {
      auto r = ok(api->listSync(cms, opts), "list page");
      const auto& items = r.at("items").as_array();
      CHECK(items.size() <= 1);
      for (const auto& item : items)
        names.push_back(str(item, {"metadata", "name"}));
      opts.continue_ = str(r, {"metadata", "continue"});
      if (page == 0)
        CHECK_FALSE(opts.continue_.empty());
      if (opts.continue_.empty())
        break;
    }
    CHECK(opts.continue_.empty());
    CHECK(names == std::vector<std::string>{"a", "b"});

    opts = {};
    opts.field_selector = "metadata.name=c";
    auto byField = ok(api->listSync(cms, opts), "list by field");
    CHECK(byField.at("items").as_array().size() == 1);
  }

  SECTION("listEach streams the items one by one and reports the list's metadata") {
    koord::kube::ListOptions opts;
    opts.label_selector = "app=koord-test";
    std::vector<std::string> names;  // touched only by the callbacks, which run serially
    std::promise<ApiResult<json::value>> done;
    api->listEach(
        cms, opts,
        [&names](const json::value& item) {
          names.push_back(str(item, {"metadata", "name"}));
          return true;
        },
        [&done](ApiResult<json::value> r) { done.set_value(std::move(r)); });
    auto md = ok(done.get_future().get(), "listEach");
    CHECK(names == std::vector<std::string>{"a", "b"});
    CHECK_FALSE(str(md, {"resourceVersion"}).empty());

    std::promise<ApiResult<json::value>> missing;
    ResourceRef nowhere{"", "v1", "nosuchthings", ns.name(), "", ""};
    api->listEach(
        nowhere, opts, [](const json::value&) { return true; },
        [&missing](ApiResult<json::value> r) { missing.set_value(std::move(r)); });
    auto err = missing.get_future().get();
    REQUIRE_FALSE(err.has_value());
    CHECK(err.error().code == 404);
    CHECK(err.error().reason == "NotFound");
  }

  SECTION("update is a compare-and-swap on resourceVersion") {
    json::value stale = got;
    got.at("data").as_object()["k"] = "v2";
    auto updated = ok(api->updateSync(named("a"), got), "update");
    CHECK(str(updated, {"data", "k"}) == "v2");
    CHECK(str(updated, {"metadata", "resourceVersion"}) !=
          str(stale, {"metadata", "resourceVersion"}));

    stale.at("data").as_object()["k"] = "lost";
    auto conflict = api->updateSync(named("a"), stale);
    REQUIRE_FALSE(conflict.has_value());
    CHECK(conflict.error().code == 409);
    CHECK(conflict.error().reason == "Conflict");
    CHECK(str(conflict.error().status, {"kind"}) == "Status");
  }

  SECTION("merge, strategic merge and JSON patches") {
    auto m = ok(api->patchSync(named("a"), PatchType::kMergePatch,
                               json::object{{"data", {{"merge", "1"}}}}),
                "merge patch");
    CHECK(str(m, {"data", "merge"}) == "1");
    CHECK(str(m, {"data", "k"}) == "v");
    auto s = ok(api->patchSync(named("a"), PatchType::kStrategicMergePatch,
                               json::object{{"metadata", {{"labels", {{"smp", "2"}}}}}}),
                "strategic merge patch");
    CHECK(str(s, {"metadata", "labels", "smp"}) == "2");
    CHECK(str(s, {"metadata", "labels", "app"}) == "koord-test");
    auto j =
        ok(api->patchSync(
               named("a"), PatchType::kJsonPatch,
               json::array{json::object{{"op", "add"}, {"path", "/data/json"}, {"value", "3"}}}),
           "JSON patch");
    CHECK(str(j, {"data", "json"}) == "3");
    CHECK(str(j, {"data", "merge"}) == "1");

    auto bad = api->patchSync(
        named("a"), PatchType::kJsonPatch,
        json::array{json::object{{"op", "test"}, {"path", "/data/k"}, {"value", "not-v"}}});
    REQUIRE_FALSE(bad.has_value());
    CHECK(bad.error().code >= 400);
  }

  SECTION("delete with preconditions") {
    koord::kube::DeleteOptions wrong;
    wrong.uid = "00000000-0000-0000-0000-000000000000";
    auto refused = api->removeSync(named("a"), wrong);
    REQUIRE_FALSE(refused.has_value());
    CHECK(refused.error().code == 409);
    CHECK(refused.error().reason == "Conflict");

    koord::kube::DeleteOptions right;
    right.uid = str(got, {"metadata", "uid"});
    right.propagation_policy = "Background";
    ok(api->removeSync(named("a"), right), "delete a");

    auto gone = api->getSync(named("a"));
    REQUIRE_FALSE(gone.has_value());
    CHECK(gone.error().code == 404);
    CHECK(gone.error().reason == "NotFound");
    CHECK(koord::kube::isNotFound(gone.error()));
  }

  SECTION("an invalid object is refused with 422 Invalid") {
    auto invalid = api->createSync(cms, configMap("Not_A_Valid.Name!", {}, {}));
    REQUIRE_FALSE(invalid.has_value());
    CHECK(invalid.error().code == 422);
    CHECK(invalid.error().reason == "Invalid");
    CHECK_THAT(invalid.error().message, Catch::Contains("Not_A_Valid.Name!"));
  }
}

TEST_CASE("a CRD's custom objects through the same generic API, via the kubeconfig", "[cluster]") {
  Api api(kubeconfigConfig());
  TestNamespace ns(*api, "koord-rest-crd");

  ResourceRef crds = kCustomResourceDefinitions;
  const std::string crd_name = "widgets.test.koord.sh";
  auto schema = json::parse(R"({
    "type": "object",
    "properties": {
      "spec": {"type": "object", "properties": {
        "size": {"type": "integer", "minimum": 1},
        "color": {"type": "string"}}},
      "status": {"type": "object", "properties": {"ready": {"type": "boolean"}}}
    }})");
  json::value crd = json::object{
      {"apiVersion", "apiextensions.k8s.io/v1"},
      {"kind", "CustomResourceDefinition"},
      {"metadata", {{"name", crd_name}}},
      {"spec",
       {{"group", "test.koord.sh"},
        {"scope", "Namespaced"},
        {"names", {{"plural", "widgets"}, {"singular", "widget"}, {"kind", "Widget"}}},
        {"versions", json::array{json::object{{"name", "v1alpha1"},
                                              {"served", true},
                                              {"storage", true},
                                              {"subresources", {{"status", json::object{}}}},
                                              {"schema", {{"openAPIV3Schema", schema}}}}}}}}};
  auto created = api->createSync(crds, crd);
  if (!created && !koord::kube::isAlreadyExists(created.error()))
    FAIL("create CRD: " << created.error().message);
  auto crd_ref = crds;
  crd_ref.name = crd_name;

  // Custom objects are served only once the CRD is Established.
  bool established = false;
  for (auto deadline = std::chrono::steady_clock::now() + 30s;
       !established && std::chrono::steady_clock::now() < deadline;) {
    auto c = ok(api->getSync(crd_ref), "get CRD");
    const auto* conds = c.at("status").as_object().if_contains("conditions");
    if (conds != nullptr && conds->is_array()) {
      for (const auto& cond : conds->get_array())
        established |= str(cond, {"type"}) == "Established" && str(cond, {"status"}) == "True";
    }
    if (!established)
      std::this_thread::sleep_for(200ms);
  }
  REQUIRE(established);

  ResourceRef widgets{"test.koord.sh", "v1alpha1", "widgets", ns.name(), "", ""};
  json::value w = json::object{{"apiVersion", "test.koord.sh/v1alpha1"},
                               {"kind", "Widget"},
                               {"metadata", {{"name", "w1"}, {"labels", {{"tier", "gold"}}}}},
                               {"spec", {{"size", 3}, {"color", "blue"}}}};
  // Discovery of a new group can lag Established by a moment; retry a NotFound briefly.
  ApiResult<json::value> made = api->createSync(widgets, w);
  for (int i = 0; i < 25 && !made && made.error().code == 404; ++i) {
    std::this_thread::sleep_for(200ms);
    made = api->createSync(widgets, w);
  }
  auto obj = ok(std::move(made), "create widget");
  CHECK(str(obj, {"metadata", "namespace"}) == ns.name());

  auto one = widgets;
  one.name = "w1";
  auto got = ok(api->getSync(one), "get widget");
  CHECK(got.at("spec").at("size").to_number<int>() == 3);

  koord::kube::ListOptions sel;
  sel.label_selector = "tier=gold";
  CHECK(ok(api->listSync(widgets, sel), "list widgets").at("items").as_array().size() == 1);

  got.at("spec").as_object()["color"] = "red";
  auto upd = ok(api->updateSync(one, got), "update widget");
  CHECK(str(upd, {"spec", "color"}) == "red");

  auto patched =
      ok(api->patchSync(one, PatchType::kMergePatch, json::object{{"spec", {{"size", 5}}}}),
         "merge patch widget");
  CHECK(patched.at("spec").at("size").to_number<int>() == 5);

  // The schema's minimum makes this Invalid.
  auto invalid = api->patchSync(one, PatchType::kMergePatch, json::object{{"spec", {{"size", 0}}}});
  REQUIRE_FALSE(invalid.has_value());
  CHECK(invalid.error().code == 422);
  CHECK(invalid.error().reason == "Invalid");

  // The status subresource: the main resource ignores status, /status writes it.
  auto status_ref = one;
  status_ref.subresource = "status";
  auto st = ok(api->patchSync(status_ref, PatchType::kMergePatch,
                              json::object{{"status", {{"ready", true}}}}),
               "patch widget status");
  CHECK(st.at("status").at("ready").as_bool());

  auto del = ok(api->removeSync(one), "delete widget");
  (void)del;
  auto gone = api->getSync(one);
  REQUIRE_FALSE(gone.has_value());
  CHECK(gone.error().reason == "NotFound");

  ok(api->removeSync(crd_ref), "delete CRD");
}

TEST_CASE("transport failures are code 0 with the cause in the message", "[cluster]") {
  auto config = tokenConfig();
  config.host = "https://127.0.0.1:1";
  config.timeout = 5s;
  Api api(config);
  auto r = api->getSync(kNamespaces);
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().code == 0);
  CHECK_FALSE(r.error().message.empty());
  CHECK(r.error().reason.empty());
}

TEST_CASE("rest_client_* series count requests by code, method and host", "[cluster]") {
  auto config = tokenConfig();
  const std::string host = config.host.substr(config.host.find("://") + 3);
  const auto count = [&](const std::string& series) {
    // The value after the series' labels in the registry's text, 0 when absent.
    const std::string text = koord::metrics::Registry::global().render();
    const auto at = text.find(series + " ");
    return at == std::string::npos ? 0.0 : std::stod(text.substr(at + series.size() + 1));
  };
  const std::string ok_series =
      "rest_client_requests_total{code=\"200\",method=\"GET\",host=\"" + host + "\"}";
  const std::string missing_series =
      "rest_client_requests_total{code=\"404\",method=\"GET\",host=\"" + host + "\"}";
  const std::string latency_series =
      "rest_client_request_duration_seconds_count{verb=\"GET\",host=\"" + host + "\"}";
  const std::string limiter_series =
      "rest_client_rate_limiter_duration_seconds_count{verb=\"GET\",host=\"" + host + "\"}";
  const double ok_before = count(ok_series);
  const double missing_before = count(missing_series);
  const double latency_before = count(latency_series);
  const double limiter_before = count(limiter_series);
  Api api(config);
  REQUIRE(api->getSync(kNamespaces).has_value());
  REQUIRE(api->getSync(named(kNamespaces, "default")).has_value());
  auto missing = api->getSync(named(kNamespaces, uniqueName("no-such")));
  REQUIRE_FALSE(missing.has_value());
  INFO(koord::metrics::Registry::global().render());
  CHECK(count(ok_series) - ok_before == 2);
  CHECK(count(missing_series) - missing_before == 1);
  CHECK(count(latency_series) - latency_before == 3);
  CHECK(count(limiter_series) - limiter_before == 3);

  // A request that reaches no server is counted under client-go's "<error>".
  config.host = "https://127.0.0.1:1";
  config.timeout = 5s;
  const std::string error_series =
      "rest_client_requests_total{code=\"<error>\",method=\"GET\",host=\"127.0.0.1:1\"}";
  const double errors_before = count(error_series);
  Api unreachable(config);
  REQUIRE_FALSE(unreachable->getSync(kNamespaces).has_value());
  CHECK(count(error_series) - errors_before == 1);
}

TEST_CASE("async calls run their callbacks on the io_context", "[cluster]") {
  Api api(tokenConfig());
  std::promise<ApiResult<json::value>> p;
  auto f = p.get_future();
  api->raw("GET", "/version", "", "",
           [&p](ApiResult<json::value> r) { p.set_value(std::move(r)); });
  REQUIRE(f.wait_for(15s) == std::future_status::ready);
  auto v = ok(f.get(), "GET /version");
  CHECK(str(v, {"gitVersion"}) == "v1.20.2");
}

TEST_CASE("an eviction a PodDisruptionBudget forbids is 429 TooManyRequests", "[cluster]") {
  Api api(tokenConfig());
  TestNamespace ns(*api, "koord-rest-evict");
  ResourceRef pods = named(kPods, "", ns.name());
  json::value pod = json::object{
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata", {{"name", "guarded"}, {"labels", {{"app", "guarded"}}}}},
      {"spec",
       {{"automountServiceAccountToken", false},
        {"containers", json::array{{{"name", "c"}, {"image", "koord.local/busybox:local"}}}}}}};
  // A new namespace's default ServiceAccount appears a moment after it; admission waits for it.
  ApiResult<json::value> created = api->createSync(pods, pod);
  for (int i = 0; i < 50 && !created && created.error().code == 403; ++i) {
    std::this_thread::sleep_for(200ms);
    created = api->createSync(pods, pod);
  }
  ok(std::move(created), "create pod");
  // The apiserver evicts Pending pods whatever the budget says; one that runs (as far as its
  // status tells) but is never Ready leaves minAvailable 1 with no disruption to allow.
  auto status = pods;
  status.name = "guarded";
  status.subresource = "status";
  ok(api->patchSync(status, PatchType::kMergePatch,
                    json::object{{"status", {{"phase", "Running"}}}}),
     "mark the pod Running");
  ResourceRef pdbs = named(kPodDisruptionBudgetsV1beta1, "", ns.name());
  ok(api->createSync(pdbs, json::object{{"apiVersion", "policy/v1beta1"},
                                        {"kind", "PodDisruptionBudget"},
                                        {"metadata", {{"name", "guard"}}},
                                        {"spec",
                                         {{"minAvailable", 1},
                                          {"selector", {{"matchLabels", {{"app", "guarded"}}}}}}}}),
     "create PodDisruptionBudget");

  auto eviction = pods;
  eviction.name = "guarded";
  eviction.subresource = "eviction";
  auto r = api->createSync(eviction, json::object{{"apiVersion", "policy/v1beta1"},
                                                  {"kind", "Eviction"},
                                                  {"metadata", {{"name", "guarded"}}}});
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().code == 429);
  CHECK(r.error().reason == "TooManyRequests");
  CHECK(isTooManyRequests(r.error()));
  CHECK_THAT(r.error().message, Catch::Contains("disruption budget"));
  // Kubernetes 1.20 sends no Retry-After for a budget (retryAfterSeconds 0), only its
  // flow-control rejections do; a hint we did not get must not be invented.
  CHECK_FALSE(r.error().retry_after.has_value());
  // The pod is still there: the refusal changed nothing.
  auto still = pods;
  still.name = "guarded";
  CHECK(api->getSync(still).has_value());
}

TEST_CASE("pods/binding assigns a node once; pods/eviction deletes an unguarded pod", "[cluster]") {
  Api api(tokenConfig());
  TestNamespace ns(*api, "koord-rest-bind");
  ResourceRef pods = named(kPods, "", ns.name());
  auto pod = [](const std::string& name) {
    return json::value(json::object{
        {"apiVersion", "v1"},
        {"kind", "Pod"},
        {"metadata", {{"name", name}}},
        {"spec",
         {{"automountServiceAccountToken", false},
          {"schedulerName", "koord-scheduler"},
          {"containers", json::array{{{"name", "c"}, {"image", "koord.local/busybox:local"}}}}}}});
  };
  ApiResult<json::value> created = api->createSync(pods, pod("bound"));
  for (int i = 0; i < 50 && !created && created.error().code == 403; ++i) {
    std::this_thread::sleep_for(200ms);
    created = api->createSync(pods, pod("bound"));
  }
  ok(std::move(created), "create pod");
  ok(api->createSync(pods, pod("evicted")), "create pod");

  auto binding = pods;
  binding.name = "bound";
  binding.subresource = "binding";
  auto target = [](const std::string& node) {
    return json::value(json::object{{"apiVersion", "v1"},
                                    {"kind", "Binding"},
                                    {"metadata", {{"name", "bound"}}},
                                    {"target", {{"kind", "Node"}, {"name", node}}}});
  };
  ok(api->createSync(binding, target("node-x")), "bind");
  auto bound = pods;
  bound.name = "bound";
  CHECK(str(ok(api->getSync(bound), "get bound pod"), {"spec", "nodeName"}) == "node-x");
  // A pod is bound once: the second binding is a conflict, as a scheduler racing another sees.
  auto again = api->createSync(binding, target("node-y"));
  REQUIRE_FALSE(again.has_value());
  CHECK(again.error().code == 409);
  CHECK(isConflict(again.error()));

  auto eviction = pods;
  eviction.name = "evicted";
  eviction.subresource = "eviction";
  ok(api->createSync(eviction, json::object{{"apiVersion", "policy/v1beta1"},
                                            {"kind", "Eviction"},
                                            {"metadata", {{"name", "evicted"}}}}),
     "evict");
  auto gone = pods;
  gone.name = "evicted";
  // Never bound to a node, the pod goes at once rather than after a grace period.
  auto r = api->getSync(gone);
  REQUIRE_FALSE(r.has_value());
  CHECK(isNotFound(r.error()));
}
