// The ElasticQuotaProfile projection: a full profile decodes field by field, a bare one selects
// no node, the resource ratio and resource keys read as Koordinator's profile controller reads
// them, and every bad field is refused by its path.
#include "koord/apis/elastic_quota_profile.h"

#include <boost/json.hpp>

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include <fmt/format.h>

#include "catch_expected.h"
#include "koord/apis/elastic_quota.h"

using namespace koord::apis;
namespace kube = koord::kube;
namespace json = boost::json;

namespace {

kube::Expected<ElasticQuotaProfile> decode(std::string_view text) {
  return decodeElasticQuotaProfile(json::parse(text));
}

ElasticQuotaProfile withRatio(std::string ratio) {
  ElasticQuotaProfile p;
  p.resource_ratio = std::move(ratio);
  return p;
}

ElasticQuotaProfile withKeys(std::string keys) {
  auto p = decodeElasticQuotaProfile(json::object{
      {"metadata", {{"annotations", {{kAnnotationResourceKeys, json::string(keys)}}}}}});
  REQUIRE(p.has_value());
  return *p;
}

const char* const kFullProfile = R"({
  "apiVersion": "quota.koordinator.sh/v1alpha1", "kind": "ElasticQuotaProfile",
  "metadata": {
    "namespace": "kube-system", "name": "gpu-pool", "uid": "p-uid", "resourceVersion": "3",
    "labels": {"quota.scheduling.koordinator.sh/tree-id": "1234"},
    "annotations": {"quota.scheduling.koordinator.sh/resource-keys": "[\"cpu\",\"nvidia.com/gpu\"]"},
    "creationTimestamp": "2024-05-01T10:00:00Z"
  },
  "spec": {
    "quotaName": "gpu-root",
    "quotaLabels": {"quota.scheduling.koordinator.sh/is-parent": "true"},
    "resourceRatio": "0.9",
    "nodeSelector": {"matchLabels": {"pool": "gpu"},
                     "matchExpressions": [{"key": "zone", "operator": "In", "values": ["a", "b"]}]}
  },
  "status": {}
})";

}  // namespace

TEST_CASE("elastic quota profile: a full object decodes every field", "[apis][quotaprofile]") {
  auto p = decode(kFullProfile);
  REQUIRE(p.has_value());
  CHECK(p->namespace_ == "kube-system");
  CHECK(p->name == "gpu-pool");
  CHECK(p->uid == "p-uid");
  CHECK(p->resource_version == "3");
  CHECK(p->treeId() == "1234");
  CHECK(p->quota_name == "gpu-root");
  CHECK(p->quota_labels == kube::Labels{{"quota.scheduling.koordinator.sh/is-parent", "true"}});
  CHECK(p->resource_ratio == "0.9");
  CHECK(p->resourceRatio() == 0.9);
  REQUIRE(p->node_selector.has_value());
  CHECK(p->node_selector->match_labels.at("pool") == "gpu");
  CHECK(p->node_selector_compiled.matches({{"pool", "gpu"}, {"zone", "b"}}));
  CHECK_FALSE(p->node_selector_compiled.matches({{"pool", "gpu"}, {"zone", "c"}}));
  CHECK_FALSE(p->node_selector_compiled.matches({{"zone", "a"}}));
  CHECK(p->resource_keys == std::vector<std::string>{"cpu", "nvidia.com/gpu"});
  CHECK(kQuotaGroup == "quota.koordinator.sh");
  CHECK(kElasticQuotaProfileShortName == "eqp");
}

TEST_CASE("elastic quota profile: a bare object selects no node", "[apis][quotaprofile]") {
  auto p = decode(R"({"metadata": {"namespace": "ns", "name": "p"}})");
  REQUIRE(p.has_value());
  CHECK(p->quota_name.empty());
  CHECK(p->quota_labels.empty());
  CHECK_FALSE(p->resource_ratio.has_value());
  CHECK(p->resourceRatio() == 1.0);
  CHECK_FALSE(p->node_selector.has_value());
  CHECK_FALSE(p->node_selector_compiled.matches({}));
  CHECK_FALSE(p->node_selector_compiled.matches({{"pool", "gpu"}}));
  CHECK(p->resource_keys == std::vector<std::string>{"cpu", "memory"});
  CHECK(p->treeId().empty());

  // An empty selector selects every node.
  auto all = decode(R"({"spec": {"nodeSelector": {}}})");
  REQUIRE(all.has_value());
  CHECK(all->node_selector_compiled.matches({{"any", "node"}}));
}

TEST_CASE("elastic quota profile: the resource ratio as DecorateResourceByResourceRatio reads it",
          "[apis][quotaprofile]") {
  struct Case {
    std::string text;
    double ratio;
  };
  for (const Case& c : {
           Case{"0.5", 0.5},
           Case{"1", 1.0},
           Case{".25", 0.25},
           Case{"+0.75", 0.75},
           Case{"5e-1", 0.5},
           Case{"0x1p-2", 0.25},
           // Outside (0, 1], or no float at all: 1.
           Case{"0", 1.0},
           Case{"-0.5", 1.0},
           Case{"1.5", 1.0},
           Case{"", 1.0},
           Case{"90%", 1.0},
           Case{" 0.5", 1.0},
           Case{"0.5 ", 1.0},
           Case{"NaN", 1.0},
           Case{"inf", 1.0},
           Case{"0x.8", 1.0},
           Case{"+-0.5", 1.0},
           Case{"1e400", 1.0},
       }) {
    INFO(c.text);
    CHECK(withRatio(c.text).resourceRatio() == c.ratio);
  }
}

TEST_CASE("elastic quota profile: the resource keys as the profile controller reads them",
          "[apis][quotaprofile]") {
  const std::vector<std::string> defaults{"cpu", "memory"};
  for (std::string text : {"", "x", "{}", "\"cpu\"", "7"}) {
    INFO(text);
    CHECK(withKeys(text).resource_keys == defaults);
  }
  CHECK(withKeys("null").resource_keys.empty());
  CHECK(withKeys("[]").resource_keys.empty());
  CHECK(withKeys(R"(["gpu", 1, "cpu"])").resource_keys ==
        std::vector<std::string>{"gpu", "", "cpu"});
  // Over the bound: read as unreadable.
  std::string many = "[";
  for (std::size_t i = 0; i <= kMaxElasticQuotaProfileListItems; ++i)
    many += fmt::format("{}\"r{}\"", i == 0 ? "" : ",", i);
  many += "]";
  CHECK(withKeys(many).resource_keys == defaults);
}

TEST_CASE("elastic quota profile: bad objects are refused with the field's path",
          "[apis][quotaprofile]") {
  std::string many = "{";
  for (std::size_t i = 0; i <= kMaxElasticQuotaProfileListItems; ++i)
    many += fmt::format("{}\"k{}\": \"v\"", i == 0 ? "" : ",", i);
  many += "}";
  struct Case {
    std::string name;
    std::string object;
    std::string error;
  };
  const Case cases[] = {
      {"not an object", R"(1)", "ElasticQuotaProfile: expected object"},
      {"annotations not a map", R"({"metadata": {"annotations": "x"}})", "metadata.annotations"},
      {"spec not an object", R"({"spec": []})", "spec: expected object"},
      {"quotaName not a string", R"({"spec": {"quotaName": 1}})",
       "spec.quotaName: expected string"},
      {"quotaLabels not a map", R"({"spec": {"quotaLabels": []}})", "spec.quotaLabels"},
      {"quotaLabels value not a string", R"({"spec": {"quotaLabels": {"a": 1}}})",
       "spec.quotaLabels"},
      {"too many quotaLabels", R"({"spec": {"quotaLabels": )" + many + "}}",
       "spec.quotaLabels: 257 labels, more than the 256 allowed"},
      {"resourceRatio not a string", R"({"spec": {"resourceRatio": 0.9}})",
       "spec.resourceRatio: expected string, got number"},
      {"nodeSelector not an object", R"({"spec": {"nodeSelector": "pool=gpu"}})",
       "spec.nodeSelector"},
      {"bad selector operator",
       R"({"spec": {"nodeSelector": {"matchExpressions": [{"key": "a", "operator": "Near"}]}}})",
       "spec.nodeSelector.matchExpressions[0].operator: unsupported value \"Near\""},
      {"bad selector key", R"({"spec": {"nodeSelector": {"matchLabels": {"a b": "c"}}}})",
       "spec.nodeSelector: "},
  };
  for (const Case& c : cases) {
    SECTION(c.name) {
      auto r = decode(c.object);
      REQUIRE_FALSE(r.has_value());
      CHECK_THAT(r.error().message, Catch::StartsWith(c.error));
    }
  }
}
