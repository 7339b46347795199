// The ElasticQuota projection with Koordinator's reading of its labels and annotations, the strict
// annotation readers, and the patch the status writer sends: full and bare objects, each
// default, each bad field refused by its path, and the bounds.
#include "koord/apis/elastic_quota.h"

#include <boost/json.hpp>

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include <fmt/format.h>

#include "catch_expected.h"
#include "koord/apis/input_limits.h"
#include "koord/kube/time.h"

using namespace koord::apis;
namespace kube = koord::kube;
namespace json = boost::json;

namespace {

kube::Expected<ElasticQuota> decode(std::string_view text) {
  return decodeElasticQuota(json::parse(text));
}

kube::Quantity q(std::string_view text) {
  return kube::Quantity::parse(text).value();
}

// A quota named `name` with `labels`, `annotations` and max {cpu: 10, memory: 20Gi}.
kube::Expected<ElasticQuota> quota(std::string_view name, const json::object& labels,
                                   const json::object& annotations) {
  json::object meta{{"namespace", "ns"}, {"name", name}};
  meta["labels"] = labels;
  meta["annotations"] = annotations;
  return decodeElasticQuota(json::object{{"metadata", std::move(meta)},
                                         {"spec", {{"max", {{"cpu", "10"}, {"memory", "20Gi"}}}}}});
}

std::string manyResources(std::size_t n) {
  std::string out = "{";
  for (std::size_t i = 0; i < n; ++i)
    out += fmt::format("{}\"r{}\": 1", i == 0 ? "" : ",", i);
  return out + "}";
}

const char* const kFullQuota = R"({
  "apiVersion": "scheduling.sigs.k8s.io/v1alpha1", "kind": "ElasticQuota",
  "metadata": {
    "namespace": "team-a", "name": "team-a-dev", "uid": "eq-uid", "resourceVersion": "8",
    "labels": {"quota.scheduling.koordinator.sh/parent": "team-a",
               "quota.scheduling.koordinator.sh/is-parent": "false",
               "quota.scheduling.koordinator.sh/allow-lent-resource": "false",
               "quota.scheduling.koordinator.sh/is-root": "true",
               "quota.scheduling.koordinator.sh/tree-id": "8712",
               "quota.scheduling.koordinator.sh/allow-force-update": "true"},
    "annotations": {"quota.scheduling.koordinator.sh/shared-weight": "{\"cpu\":\"4\",\"memory\":\"8Gi\"}",
                    "quota.scheduling.koordinator.sh/namespaces": "[\"dev\",\"test\"]",
                    "quota.scheduling.koordinator.sh/runtime": "{\"cpu\":\"2500m\"}"},
    "creationTimestamp": "2024-05-01T10:00:00Z"
  },
  "spec": {"min": {"cpu": "2", "memory": "4Gi"}, "max": {"cpu": 10, "memory": "20Gi"}},
  "status": {"used": {"cpu": "1500m", "memory": "3Gi"}}
})";

}  // namespace

TEST_CASE("elastic quota: the keys are Koordinator's", "[apis][elasticquota]") {
  CHECK(kLabelQuotaParent == "quota.scheduling.koordinator.sh/parent");
  CHECK(kLabelQuotaIsParent == "quota.scheduling.koordinator.sh/is-parent");
  CHECK(kLabelAllowLentResource == "quota.scheduling.koordinator.sh/allow-lent-resource");
  CHECK(kLabelQuotaIsRoot == "quota.scheduling.koordinator.sh/is-root");
  CHECK(kLabelQuotaTreeID == "quota.scheduling.koordinator.sh/tree-id");
  CHECK(kLabelQuotaName == "quota.scheduling.koordinator.sh/name");
  CHECK(kAnnotationSharedWeight == "quota.scheduling.koordinator.sh/shared-weight");
  CHECK(kAnnotationRuntime == "quota.scheduling.koordinator.sh/runtime");
  CHECK(kAnnotationRequest == "quota.scheduling.koordinator.sh/request");
  CHECK(kAnnotationGuaranteed == "quota.scheduling.koordinator.sh/guaranteed");
  CHECK(kRootQuotaName == "koordinator-root-quota");
  CHECK(kDefaultQuotaName == "koordinator-default-quota");
  CHECK(kSystemQuotaName == "koordinator-system-quota");
}

TEST_CASE("elastic quota: a full object decodes every field", "[apis][elasticquota]") {
  auto eq = decode(kFullQuota);
  REQUIRE(eq.has_value());
  CHECK(eq->namespace_ == "team-a");
  CHECK(eq->name == "team-a-dev");
  CHECK(eq->uid == "eq-uid");
  CHECK(eq->resource_version == "8");
  CHECK(eq->creation_timestamp == kube::parseTime("2024-05-01T10:00:00Z").value());
  CHECK_FALSE(eq->terminating);
  CHECK(eq->min == kube::ResourceList{{"cpu", q("2")}, {"memory", q("4Gi")}});
  CHECK(eq->max == kube::ResourceList{{"cpu", q("10")}, {"memory", q("20Gi")}});
  CHECK(eq->used == kube::ResourceList{{"cpu", q("1500m")}, {"memory", q("3Gi")}});

  CHECK(eq->parent_name == "team-a");
  CHECK_FALSE(eq->is_parent);
  CHECK_FALSE(eq->allow_lent_resource);
  CHECK(eq->is_root);
  CHECK(eq->tree_id == "8712");
  CHECK(eq->allow_force_update);
  CHECK(eq->shared_weight == kube::ResourceList{{"cpu", q("4")}, {"memory", q("8Gi")}});
  CHECK(eq->namespaces == std::vector<std::string>{"dev", "test"});

  auto runtime = quotaResourceAnnotation(eq->annotations, kAnnotationRuntime);
  REQUIRE(runtime.has_value());
  CHECK(*runtime == kube::ResourceList{{"cpu", q("2500m")}});
}

TEST_CASE("elastic quota: a bare object takes Koordinator's defaults", "[apis][elasticquota]") {
  auto eq = decode(R"({"metadata": {"namespace": "ns", "name": "q"}})");
  REQUIRE(eq.has_value());
  CHECK(eq->min.empty());
  CHECK(eq->max.empty());
  CHECK(eq->used.empty());
  CHECK(eq->parent_name == kRootQuotaName);
  CHECK_FALSE(eq->is_parent);
  CHECK(eq->allow_lent_resource);
  CHECK_FALSE(eq->is_root);
  CHECK_FALSE(eq->allow_force_update);
  CHECK(eq->tree_id.empty());
  CHECK(eq->shared_weight.empty());
  CHECK(eq->namespaces.empty());

  // The root itself has no parent.
  auto root = decode(R"({"metadata": {"name": "koordinator-root-quota"}})");
  REQUIRE(root.has_value());
  CHECK(root->parent_name.empty());

  // Nulls read as absent.
  auto nulls = decode(R"({"spec": {"min": null, "max": null}, "status": {"used": null}})");
  REQUIRE(nulls.has_value());
  CHECK(nulls->max.empty());
}

TEST_CASE("elastic quota: flags compare the exact text", "[apis][elasticquota]") {
  for (std::string text : {"True", "yes", "1", ""}) {
    auto eq = quota("q",
                    {{kLabelQuotaIsParent, text},
                     {kLabelQuotaIsRoot, text},
                     {kLabelAllowForceUpdate, text},
                     {kLabelAllowLentResource, text}},
                    {});
    REQUIRE(eq.has_value());
    CHECK_FALSE(eq->is_parent);
    CHECK_FALSE(eq->is_root);
    CHECK_FALSE(eq->allow_force_update);
    CHECK(eq->allow_lent_resource);
  }
  auto lent = quota("q", {{kLabelAllowLentResource, "False"}}, {});
  REQUIRE(lent.has_value());
  CHECK(lent->allow_lent_resource);  // only "false" forbids lending
  auto parent = quota("q", {{kLabelQuotaParent, ""}, {kLabelQuotaIsParent, "true"}}, {});
  REQUIRE(parent.has_value());
  CHECK(parent->parent_name == kRootQuotaName);
  CHECK(parent->is_parent);
}

TEST_CASE("elastic quota: the shared weight is max unless it reads as a non-zero list",
          "[apis][elasticquota]") {
  const kube::ResourceList max{{"cpu", q("10")}, {"memory", q("20Gi")}};
  for (std::string text :
       {"", "null", "{}", R"({"cpu": "0"})", "[1]", "not json", R"({"cpu": "lots"})", "\"4\""}) {
    INFO(text);
    auto eq = quota("q", {}, {{kAnnotationSharedWeight, text}});
    REQUIRE(eq.has_value());
    CHECK(eq->shared_weight == max);
  }
  auto partial = quota("q", {}, {{kAnnotationSharedWeight, R"({"cpu": 3, "memory": "0"})"}});
  REQUIRE(partial.has_value());
  CHECK(partial->shared_weight == kube::ResourceList{{"cpu", q("3")}, {"memory", q("0")}});
  // Over the bound: read as unreadable, not refused.
  auto many = quota("q", {}, {{kAnnotationSharedWeight, manyResources(257)}});
  REQUIRE(many.has_value());
  CHECK(many->shared_weight == max);
}

TEST_CASE("elastic quota: the namespaces annotation", "[apis][elasticquota]") {
  for (std::string text : {"", "null", "[]", "x", "{}", R"(["a", 1])", R"("a")"}) {
    INFO(text);
    auto eq = quota("q", {}, {{kAnnotationQuotaNamespaces, text}});
    REQUIRE(eq.has_value());
    CHECK(eq->namespaces.empty());
  }
  kube::Labels annotations{{std::string(kAnnotationQuotaNamespaces), R"(["a", "b"])"}};
  auto strict = quotaNamespaces(annotations);
  REQUIRE(strict.has_value());
  CHECK(*strict == std::vector<std::string>{"a", "b"});

  struct Case {
    std::string value;
    std::string error;
  };
  const std::string key(kAnnotationQuotaNamespaces);
  std::string too_many = "[";
  for (std::size_t i = 0; i <= kMaxElasticQuotaNamespaces; ++i)
    too_many += fmt::format("{}\"n{}\"", i == 0 ? "" : ",", i);
  too_many += "]";
  for (const Case& c : {
           Case{"x", key + ": not JSON"},
           Case{"{}", key + ": not a JSON array of namespaces"},
           Case{R"(["a", 1])", key + ": not a JSON array of namespaces"},
           Case{fmt::format(R"(["{}"])", std::string(64, 'n')), key + "[0]: 64 bytes"},
           Case{too_many, key + ": 4097 items, more than the 4096 allowed"},
       }) {
    INFO(c.value.substr(0, 40));
    auto r = quotaNamespaces({{key, c.value}});
    REQUIRE_FALSE(r.has_value());
    CHECK_THAT(r.error().message, Catch::StartsWith(c.error));
  }
}

TEST_CASE("elastic quota: resource-list annotations read as GetRuntime reads them",
          "[apis][elasticquota]") {
  const std::string key(kAnnotationRequest);
  for (const kube::Labels& empty :
       {kube::Labels{}, kube::Labels{{key, ""}}, kube::Labels{{key, "null"}}}) {
    auto r = quotaResourceAnnotation(empty, kAnnotationRequest);
    REQUIRE(r.has_value());
    CHECK(r->empty());
  }
  auto ok =
      quotaResourceAnnotation({{key, R"({"cpu": 1.5, "memory": "1Gi"})"}}, kAnnotationRequest);
  REQUIRE(ok.has_value());
  CHECK(*ok == kube::ResourceList{{"cpu", q("1500m")}, {"memory", q("1Gi")}});

  struct Case {
    std::string value;
    std::string error;
  };
  for (const Case& c : {
           Case{"{", key + ": not JSON"},
           Case{"[]", key + ": expected object, got array"},
           Case{R"({"cpu": "lots"})", key + "[cpu]: "},
           Case{R"({"cpu": true})", key + "[cpu]: expected quantity"},
           Case{manyResources(257), key + ": 257 resources, more than the 256 allowed"},
           Case{std::string(kMaxAnnotationValueBytes + 1, ' '), key + ": 262145 bytes"},
       }) {
    INFO(c.value.substr(0, 40));
    auto r = quotaResourceAnnotation({{key, c.value}}, kAnnotationRequest);
    REQUIRE_FALSE(r.has_value());
    CHECK_THAT(r.error().message, Catch::StartsWith(c.error));
  }
}

TEST_CASE("elastic quota: pods' labels", "[apis][elasticquota]") {
  CHECK(podQuotaName({}).empty());
  CHECK(podQuotaName({{std::string(kLabelQuotaName), "team-a"}}) == "team-a");
  CHECK_FALSE(isPodNonPreemptible({}));
  CHECK_FALSE(isPodNonPreemptible({{std::string(kLabelPreemptible), "true"}}));
  CHECK(isPodNonPreemptible({{std::string(kLabelPreemptible), "false"}}));
}

TEST_CASE("elastic quota: bad objects are refused with the field's path", "[apis][elasticquota]") {
  struct Case {
    std::string name;
    std::string object;
    std::string error;
  };
  const Case cases[] = {
      {"not an object", R"("q")", "ElasticQuota: expected object"},
      {"namespace not a string", R"({"metadata": {"namespace": []}})", "metadata.namespace"},
      {"labels not a map", R"({"metadata": {"labels": 1}})", "metadata.labels"},
      {"spec not an object", R"({"spec": []})", "spec: expected object"},
      {"min not a map", R"({"spec": {"min": "1"}})", "spec.min: expected object"},
      {"bad max quantity", R"({"spec": {"max": {"memory": "1 GB"}}})", "spec.max[memory]: "},
      {"too many max names", R"({"spec": {"max": )" + manyResources(257) + "}}",
       "spec.max: 257 resources, more than the 256 allowed"},
      {"status not an object", R"({"status": 1})", "status: expected object"},
      {"bad used quantity", R"({"status": {"used": {"cpu": {}}}})", "status.used[cpu]: "},
  };
  for (const Case& c : cases) {
    SECTION(c.name) {
      auto r = decode(c.object);
      REQUIRE_FALSE(r.has_value());
      CHECK_THAT(r.error().message, Catch::StartsWith(c.error));
    }
  }
  // At the bound, accepted.
  auto most = decode(R"({"spec": {"max": )" + manyResources(256) + "}}");
  REQUIRE(most.has_value());
  CHECK(most->max.size() == 256);
}

TEST_CASE("elastic quota: the status patch carries the annotations and used",
          "[apis][elasticquota]") {
  auto current = decode(kFullQuota);
  REQUIRE(current.has_value());
  CHECK(quotaResourceAnnotationValue({}) == "{}");
  CHECK(quotaResourceAnnotationValue({{"memory", q("1.5Gi")}, {"cpu", q("0.5")}}) ==
        R"({"cpu":"500m","memory":"1536Mi"})");

  ElasticQuotaStatusUpdate update;
  update.used = kube::ResourceList{{"cpu", q("2")}};
  update.runtime = kube::ResourceList{{"cpu", q("3")}, {"memory", q("4Gi")}};
  update.guaranteed = kube::ResourceList{};
  json::value patch = elasticQuotaStatusPatch(*current, update, "8");
  CHECK(patch == json::parse(R"({
    "metadata": {"annotations": {
        "quota.scheduling.koordinator.sh/runtime": "{\"cpu\":\"3\",\"memory\":\"4Gi\"}",
        "quota.scheduling.koordinator.sh/guaranteed": "{}"},
      "resourceVersion": "8"},
    "status": {"used": {"cpu": "2", "memory": null}}})"));

  // Nothing to write, nothing sent.
  CHECK(elasticQuotaStatusPatch(*current, {}) == json::object{});

  // Every figure, by its own annotation.
  ElasticQuotaStatusUpdate all;
  const kube::ResourceList one{{"cpu", q("1")}};
  all.request = all.child_request = all.allocated = all.non_preemptible_request =
      all.non_preemptible_used = one;
  json::value figures = elasticQuotaStatusPatch(*current, all);
  const json::object& annotations = figures.at("metadata").at("annotations").as_object();
  CHECK(annotations.size() == 5);
  for (std::string_view key : {kAnnotationRequest, kAnnotationChildRequest, kAnnotationAllocated,
                               kAnnotationNonPreemptibleRequest, kAnnotationNonPreemptibleUsed}) {
    INFO(key);
    REQUIRE(annotations.contains(key));
    CHECK(annotations.at(key) == R"({"cpu":"1"})");
  }
  CHECK_FALSE(figures.as_object().contains("status"));
}
