// The ElasticQuota webhooks: each rule of the quota tree accepted and refused, the defaults the
// mutating one writes, the pod quota check, and reviews that cannot be read.
#include <boost/json.hpp>

#include <memory>
#include <string>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include "webhook/elastic_quota_mutating.h"
#include "webhook/elastic_quota_validating.h"
#include "webhook/pod_validating.h"
#include "webhook/quota_topology.h"
#include "webhook_test_util.h"

using namespace koord::manager::webhook;
using namespace koord::manager::webhook::testing;
namespace json = boost::json;

namespace {

// An ElasticQuota with optional labels (a JSON object's text) and min/max.
std::string quota(std::string_view name, std::string_view labels, std::string_view min,
                  std::string_view max, std::string_view annotations = "{}") {
  return fmt::format(R"({{"apiVersion":"scheduling.sigs.k8s.io/v1alpha1","kind":"ElasticQuota",)"
                     R"("metadata":{{"name":"{}","namespace":"ns","labels":{},"annotations":{}}},)"
                     R"("spec":{{"min":{},"max":{}}}}})",
                     name, labels, annotations, min, max);
}

koord::apis::ElasticQuota eq(const std::string& text) {
  return koord::apis::decodeElasticQuota(json::parse(text)).value();
}

constexpr std::string_view kParentLabels =
    R"({"quota.scheduling.koordinator.sh/is-parent":"true"})";
std::string childOf(std::string_view parent) {
  return fmt::format(R"({{"quota.scheduling.koordinator.sh/parent":"{}"}})", parent);
}

constexpr std::string_view kTen = R"({"cpu":"10","memory":"10Gi"})";
constexpr std::string_view kFour = R"({"cpu":"4","memory":"4Gi"})";
constexpr std::string_view kSeven = R"({"cpu":"7","memory":"7Gi"})";

// A tree: parent "p" (min 10) with child "a" (min 4), both observed by the informer.
std::shared_ptr<QuotaTopology> tree(QuotaTopologyOptions o = {}) {
  auto t = std::make_shared<QuotaTopology>(std::move(o));
  t->onAdd(eq(quota("p", kParentLabels, kTen, kTen)));
  t->onAdd(eq(quota("a", childOf("p"), kFour, kTen)));
  return t;
}

std::string errorOf(const koord::kube::Expected<void>& r) {
  return r ? std::string() : r.error().message;
}

}  // namespace

TEST_CASE("quota tree: max must cover min, and nothing negative", "[elasticquota]") {
  auto t = tree();
  CHECK(errorOf(t->validateAdd(eq(quota("b", "{}", kFour, kTen)), false)).empty());
  CHECK_THAT(errorOf(t->validateAdd(eq(quota("b", "{}", kTen, kFour)), false)),
             Catch::Contains("spec.min") && Catch::Contains("exceeds spec.max"));
  CHECK_THAT(errorOf(t->validateAdd(eq(quota("b", "{}", R"({"gpu":"1"})", kTen)), false)),
             Catch::Contains("exceeds spec.max") && Catch::EndsWith("in gpu"));
  CHECK_THAT(errorOf(t->validateAdd(eq(quota("b", "{}", "{}", R"({"cpu":"-1"})")), false)),
             Catch::Contains("spec.max is negative in cpu"));
  CHECK_THAT(
      errorOf(t->validateAdd(
          eq(quota("b", "{}", "{}", kTen,
                   R"({"quota.scheduling.koordinator.sh/shared-weight":"{\"cpu\":\"-2\"}"})")),
          false)),
      Catch::Contains("is negative in cpu"));
}

TEST_CASE("quota tree: the parent must exist and be a parent", "[elasticquota]") {
  auto t = tree();
  CHECK(errorOf(t->validateAdd(eq(quota("b", childOf("p"), kFour, kTen)), false)).empty());
  CHECK_THAT(errorOf(t->validateAdd(eq(quota("b", childOf("nope"), kFour, kTen)), false)),
             Catch::Contains("parent quota nope does not exist"));
  CHECK_THAT(errorOf(t->validateAdd(eq(quota("b", childOf("a"), kFour, kTen)), false)),
             Catch::Contains("is not labelled quota.scheduling.koordinator.sh/is-parent=true"));
}

TEST_CASE("quota tree: the children's min fits the parent's min", "[elasticquota]") {
  auto t = tree();
  // 4 + 7 > 10.
  CHECK_THAT(errorOf(t->validateAdd(eq(quota("b", childOf("p"), kSeven, kTen)), false)),
             Catch::Contains("more than its min"));
  // allow-force-update skips the sum.
  auto forced = fmt::format(
      R"({{"quota.scheduling.koordinator.sh/parent":"p","quota.scheduling.koordinator.sh/allow-force-update":"true"}})");
  CHECK(errorOf(t->validateAdd(eq(quota("b", forced, kSeven, kTen)), false)).empty());
  // A parent cannot shrink below its children.
  auto old_p = eq(quota("p", kParentLabels, kTen, kTen));
  CHECK_THAT(
      errorOf(t->validateUpdate(
          old_p, eq(quota("p", kParentLabels, R"({"cpu":"3","memory":"3Gi"})", kTen)), false)),
      Catch::Contains("its children ask for min"));
  // The child's own update replaces its old min in the sum.
  CHECK(errorOf(t->validateUpdate(eq(quota("a", childOf("p"), kFour, kTen)),
                                  eq(quota("a", childOf("p"), kTen, kTen)), false))
            .empty());
}

TEST_CASE("quota tree: max names the parent's resources", "[elasticquota]") {
  auto t = tree();
  CHECK_THAT(errorOf(t->validateAdd(
                 eq(quota("b", childOf("p"), R"({"cpu":"1"})", R"({"cpu":"10"})")), false)),
             Catch::Contains("names other resources than parent p"));
}

TEST_CASE("quota tree: no cycles", "[elasticquota]") {
  auto t = tree();
  t->onAdd(eq(quota("q",
                    fmt::format(R"({{"quota.scheduling.koordinator.sh/parent":"p",)"
                                R"("quota.scheduling.koordinator.sh/is-parent":"true"}})"),
                    "{}", kTen)));
  auto old_p = eq(quota("p", kParentLabels, kTen, kTen));
  auto looped = fmt::format(R"({{"quota.scheduling.koordinator.sh/parent":"q",)"
                            R"("quota.scheduling.koordinator.sh/is-parent":"true"}})");
  CHECK_THAT(errorOf(t->validateUpdate(old_p, eq(quota("p", looped, kTen, kTen)), false)),
             Catch::Contains("cycle"));
  auto self = fmt::format(R"({{"quota.scheduling.koordinator.sh/parent":"b"}})");
  CHECK_THAT(errorOf(t->validateAdd(eq(quota("b", self, "{}", kTen)), false)),
             Catch::Contains("cycle"));
}

TEST_CASE("quota tree: tree ids follow the parent and never change", "[elasticquota]") {
  auto t = std::make_shared<QuotaTopology>();
  auto root_labels = R"({"quota.scheduling.koordinator.sh/is-parent":"true",)"
                     R"("quota.scheduling.koordinator.sh/is-root":"true",)"
                     R"("quota.scheduling.koordinator.sh/tree-id":"t1"})";
  t->onAdd(eq(quota("r", root_labels, kTen, kTen)));
  auto same =
      R"({"quota.scheduling.koordinator.sh/parent":"r","quota.scheduling.koordinator.sh/tree-id":"t1"})";
  auto other =
      R"({"quota.scheduling.koordinator.sh/parent":"r","quota.scheduling.koordinator.sh/tree-id":"t2"})";
  CHECK(errorOf(t->validateAdd(eq(quota("c", same, kFour, kTen)), true)).empty());
  CHECK_THAT(errorOf(t->validateAdd(eq(quota("d", other, kFour, kTen)), false)),
             Catch::Contains("differs from parent r's"));
  CHECK_THAT(errorOf(t->validateUpdate(eq(quota("c", same, kFour, kTen)),
                                       eq(quota("c", other, kFour, kTen)), false)),
             Catch::Contains("tree-id cannot change"));
}

TEST_CASE("quota tree: deletes and is-parent changes", "[elasticquota]") {
  bool labelled = false;
  QuotaTopologyOptions o;
  o.has_labelled_pods = [&labelled](std::string_view) { return labelled; };
  auto t = tree(o);
  CHECK_THAT(errorOf(t->validateDelete(eq(quota("p", kParentLabels, kTen, kTen)), false)),
             Catch::Contains("still has child quotas (a)"));
  CHECK_THAT(
      errorOf(t->validateDelete(eq(quota("koordinator-root-quota", "{}", "{}", "{}")), false)),
      Catch::Contains("cannot be deleted"));
  CHECK_THAT(errorOf(t->validateUpdate(eq(quota("p", kParentLabels, kTen, kTen)),
                                       eq(quota("p", "{}", kTen, kTen)), false)),
             Catch::Contains("has child quotas"));
  labelled = true;
  CHECK_THAT(errorOf(t->validateDelete(eq(quota("a", childOf("p"), kFour, kTen)), false)),
             Catch::Contains("still has pods"));
  auto to_parent =
      R"({"quota.scheduling.koordinator.sh/parent":"p","quota.scheduling.koordinator.sh/is-parent":"true"})";
  CHECK_THAT(errorOf(t->validateUpdate(eq(quota("a", childOf("p"), kFour, kTen)),
                                       eq(quota("a", to_parent, kFour, kTen)), false)),
             Catch::Contains("has pods"));
  labelled = false;
  CHECK(errorOf(t->validateDelete(eq(quota("a", childOf("p"), kFour, kTen)), true)).empty());
  CHECK(t->size() == 1);
  CHECK(errorOf(t->validateDelete(eq(quota("p", kParentLabels, kTen, kTen)), true)).empty());
  CHECK(t->size() == 0);
}

TEST_CASE("quota tree: admitted changes are judged against each other", "[elasticquota]") {
  auto t = tree();
  CHECK(errorOf(t->validateAdd(eq(quota("b", childOf("p"), R"({"cpu":"3","memory":"3Gi"})", kTen)),
                               true))
            .empty());
  // 4 + 3 + 4 > 10, although the informer has not seen b yet.
  CHECK_THAT(errorOf(t->validateAdd(eq(quota("c", childOf("p"), kFour, kTen)), true)),
             Catch::Contains("more than its min"));
  // An admitted create the API server refused does not block its retry; an observed one does.
  CHECK(errorOf(t->validateAdd(eq(quota("b", childOf("p"), R"({"cpu":"3","memory":"3Gi"})", kTen)),
                               false))
            .empty());
  CHECK_THAT(errorOf(t->validateAdd(eq(quota("a", childOf("p"), kFour, kTen)), false)),
             Catch::Contains("already exists"));
}

TEST_CASE("quota tree: namespaces bind to one quota", "[elasticquota]") {
  auto t = tree();
  auto ns = R"({"quota.scheduling.koordinator.sh/namespaces":"[\"team\"]"})";
  CHECK(errorOf(t->validateAdd(eq(quota("b", "{}", "{}", kTen, ns)), true)).empty());
  CHECK_THAT(errorOf(t->validateAdd(eq(quota("c", "{}", "{}", kTen, ns)), false)),
             Catch::Contains("namespace team is already bound to quota b"));
  auto bad = R"({"quota.scheduling.koordinator.sh/namespaces":"team"})";
  CHECK_THAT(errorOf(t->validateAdd(eq(quota("c", "{}", "{}", kTen, bad)), false)),
             Catch::Contains("quota.scheduling.koordinator.sh/namespaces"));
}

TEST_CASE("elasticquota validating handler answers reviews", "[elasticquota]") {
  auto t = tree();
  auto h = elasticQuotaValidatingHandler(t);
  auto create = serve(review("CREATE", quota("b", childOf("p"), kSeven, kTen), "elasticquotas"), h);
  CHECK(create.outcome == "denied");
  CHECK_THAT(create.body, Catch::Contains("more than its min") && Catch::Contains("400"));
  auto ok = serve(review("CREATE", quota("b", childOf("p"), kFour, kTen), "elasticquotas"), h);
  CHECK(ok.outcome == "allowed");
  CHECK(t->node("b").has_value());
  // Malformed: a label that is not a string, a quantity that is not one.
  auto bad_label = serve(
      review("CREATE", quota("x", R"({"quota.scheduling.koordinator.sh/parent":1})", "{}", kTen),
             "elasticquotas"),
      h);
  CHECK(bad_label.outcome == "denied");
  auto bad_quantity =
      serve(review("CREATE", quota("x", "{}", "{}", R"({"cpu":"lots"})"), "elasticquotas"), h);
  CHECK(bad_quantity.outcome == "denied");
  CHECK_THAT(bad_quantity.body, Catch::Contains("spec.max"));
  CHECK_FALSE(t->node("x").has_value());
  // Huge: more resource names than any quota has.
  std::string many = "{";
  for (int i = 0; i < 300; ++i)
    many += fmt::format(R"({}"r{}":"1")", i ? "," : "", i);
  many += "}";
  auto huge = serve(review("CREATE", quota("x", "{}", "{}", many), "elasticquotas"), h);
  CHECK(huge.outcome == "denied");
  CHECK_FALSE(t->node("x").has_value());
  auto del = serve(review("DELETE", "", "elasticquotas", quota("p", kParentLabels, kTen, kTen)), h);
  CHECK(del.outcome == "denied");
  CHECK_THAT(del.body, Catch::Contains("child quotas"));
}

TEST_CASE("elasticquota mutating handler fills Koordinator's defaults", "[elasticquota]") {
  auto t = std::make_shared<QuotaTopology>();
  t->onAdd(eq(quota("r",
                    R"({"quota.scheduling.koordinator.sh/is-parent":"true",)"
                    R"("quota.scheduling.koordinator.sh/tree-id":"t1"})",
                    kTen, kTen)));
  auto out = defaultElasticQuota(parseObject(quota("c", "{}", kFour, kTen)), *t).value();
  auto& meta = out["metadata"].as_object();
  CHECK(meta["labels"].as_object()["quota.scheduling.koordinator.sh/parent"] ==
        "koordinator-root-quota");
  CHECK_FALSE(meta["labels"].as_object().contains("quota.scheduling.koordinator.sh/tree-id"));
  CHECK(meta["annotations"].as_object()["quota.scheduling.koordinator.sh/shared-weight"] ==
        R"({"cpu":"10","memory":"10Gi"})");

  auto child = defaultElasticQuota(parseObject(quota("c", childOf("r"), kFour, kTen)), *t).value();
  CHECK(child["metadata"]
            .as_object()["labels"]
            .as_object()["quota.scheduling.koordinator.sh/tree-id"] == "t1");
  // A shared weight already set stays.
  auto weighted =
      defaultElasticQuota(
          parseObject(
              quota("c", "{}", kFour, kTen,
                    R"({"quota.scheduling.koordinator.sh/shared-weight":"{\"cpu\":\"1\"}"})")),
          *t)
          .value();
  CHECK(weighted["metadata"]
            .as_object()["annotations"]
            .as_object()["quota.scheduling.koordinator.sh/shared-weight"] == R"({"cpu":"1"})");
  CHECK_THAT(defaultElasticQuota(parseObject(quota("c", childOf("nope"), kFour, kTen)), *t)
                 .error()
                 .message,
             Catch::Contains("parent quota nope does not exist"));
  // The root quota is left alone.
  auto root = parseObject(quota("koordinator-root-quota", "{}", "{}", "{}"));
  CHECK(defaultElasticQuota(root, *t).value() == root);

  auto h = elasticQuotaMutatingHandler(t);
  auto r = serve(review("CREATE", quota("c", "{}", kFour, kTen), "elasticquotas"), h);
  CHECK(r.outcome == "patched");
  auto upd = serve(review("UPDATE", quota("c", "{}", kFour, kTen), "elasticquotas",
                          quota("c", "{}", kFour, kTen)),
                   h);
  CHECK(upd.outcome == "allowed");
  auto bad = serve(review("CREATE", quota("c", "{}", "{}", R"({"cpu":[]})"), "elasticquotas"), h);
  CHECK(bad.outcome == "denied");
}

TEST_CASE("pod quota check: no pods on parent quotas, preemptible fixed", "[elasticquota]") {
  QuotaTopologyOptions o;
  auto t = tree(o);
  auto pod = [](std::string_view labels) {
    return parseObject(fmt::format(
        R"({{"apiVersion":"v1","kind":"Pod","metadata":{{"name":"x","namespace":"ns","labels":{}}},)"
        R"("spec":{{"containers":[]}}}})",
        labels));
  };
  auto on_parent = pod(R"({"quota.scheduling.koordinator.sh/name":"p"})");
  auto on_leaf = pod(R"({"quota.scheduling.koordinator.sh/name":"a"})");
  CHECK_THAT(errorOf(validatePodQuota(on_parent, nullptr, "ns", *t)),
             Catch::Contains("parent quota p"));
  CHECK(errorOf(validatePodQuota(on_leaf, nullptr, "ns", *t)).empty());
  CHECK(errorOf(validatePodQuota(pod("{}"), nullptr, "ns", *t)).empty());
  auto preempt = pod(R"({"quota.scheduling.koordinator.sh/name":"a",)"
                     R"("quota.scheduling.koordinator.sh/preemptible":"false"})");
  CHECK_THAT(errorOf(validatePodQuota(preempt, &on_leaf, "ns", *t)),
             Catch::Contains("preemptible"));
  // A quota named after the namespace takes its unlabelled pods.
  t->onAdd(eq(
      R"({"metadata":{"name":"ns","namespace":"ns","labels":{"quota.scheduling.koordinator.sh/is-parent":"true"}},"spec":{}})"));
  CHECK_THAT(errorOf(validatePodQuota(pod("{}"), nullptr, "ns", *t)),
             Catch::Contains("parent quota ns"));
  QuotaTopologyOptions allow;
  allow.parent_quota_submit_pod = true;
  auto t2 = tree(allow);
  CHECK(errorOf(validatePodQuota(on_parent, nullptr, "ns", *t2)).empty());

  PodValidatingOptions vo;
  vo.quota_topology = t;
  auto h = podValidatingHandler(vo);
  auto r = serve(review("CREATE", json::serialize(on_parent)), h);
  CHECK(r.outcome == "denied");
}
