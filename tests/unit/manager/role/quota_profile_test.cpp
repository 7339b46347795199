// The quotaprofile controller's quota from a table of nodes: the selector, the ratio, the
// unschedulable share, the resource keys, and the labels and annotations it writes.
#include "controller/quota_profile.h"

#include <boost/json.hpp>

#include <catch2/catch.hpp>

#include "koord/apis/elastic_quota_profile.h"

using namespace koord::roles::manager;
namespace json = boost::json;

namespace {

koord::apis::ElasticQuotaProfile profile(std::string_view ratio,
                                         std::string_view annotations = "{}") {
  std::string text = R"({"apiVersion":"quota.koordinator.sh/v1alpha1","kind":"ElasticQuotaProfile",
    "metadata":{"name":"prof","namespace":"team","annotations":)" +
                     std::string(annotations) + R"(},
    "spec":{"quotaName":"team-root","quotaLabels":{"tier":"gold"},)" +
                     std::string(ratio) + R"("nodeSelector":{"matchLabels":{"pool":"a"}}}})";
  return koord::apis::decodeElasticQuotaProfile(json::parse(text)).value();
}

koord::kube::ResourceList res(std::string_view cpu, std::string_view memory) {
  return {{"cpu", koord::kube::Quantity::parse(cpu).value()},
          {"memory", koord::kube::Quantity::parse(memory).value()},
          {"pods", koord::kube::Quantity::parse("110").value()}};
}

std::vector<ProfileNode> nodes() {
  return {
      {{{"pool", "a"}}, res("4", "16Gi"), false, true},
      {{{"pool", "a"}}, res("8", "32Gi"), true, true},   // cordoned
      {{{"pool", "a"}}, res("2", "8Gi"), false, false},  // not ready
      {{{"pool", "b"}}, res("64", "256Gi"), false, true},
  };
}

}  // namespace

TEST_CASE("quotaprofile: totals of the selected nodes", "[quotaprofile]") {
  auto totals = profileTotals(profile(""), nodes());
  CHECK(totals.total.at("cpu").toString() == "14");
  CHECK(totals.total.at("memory").toString() == "56Gi");
  CHECK(totals.total.at("pods").toString() == "330");
  CHECK(totals.unschedulable.at("cpu").toString() == "10");
  CHECK(totals.unschedulable.at("memory").toString() == "40Gi");
}

TEST_CASE("quotaprofile: resourceRatio scales and truncates", "[quotaprofile]") {
  auto totals = profileTotals(profile(R"("resourceRatio":"0.5",)"), nodes());
  CHECK(totals.total.at("cpu").toString() == "7");
  CHECK(totals.total.at("memory").toString() == "28Gi");
  CHECK(totals.total.at("pods").toString() == "165");
  auto third = profileTotals(profile(R"("resourceRatio":"0.3",)"), nodes());
  CHECK(third.total.at("cpu").toString() == "4200m");
  CHECK(third.total.at("pods").toString() == "99");
  // Out of (0, 1]: taken as 1.
  auto over = profileTotals(profile(R"("resourceRatio":"1.5",)"), nodes());
  CHECK(over.total.at("cpu").toString() == "14");
}

TEST_CASE("quotaprofile: the quota it writes", "[quotaprofile]") {
  auto p = profile("");
  auto totals = profileTotals(p, nodes());
  auto q = desiredProfileQuota(json::object{}, p, totals, profileTreeId("team", "prof"));
  CHECK(q["metadata"].at("name") == "team-root");
  CHECK(q["metadata"].at("namespace") == "team");
  CHECK(q["spec"].at("min") == json::parse(R"({"cpu":"14","memory":"56Gi"})"));
  CHECK(q["spec"].at("max") ==
        json::parse(R"({"cpu":"4611686018427387","memory":"4611686018427387"})"));
  auto& labels = q["metadata"].at("labels").as_object();
  CHECK(labels.at("quota.scheduling.koordinator.sh/profile") == "prof");
  CHECK(labels.at("quota.scheduling.koordinator.sh/is-root") == "true");
  CHECK(labels.at("tier") == "gold");
  CHECK(labels.at("quota.scheduling.koordinator.sh/tree-id") ==
        json::value(profileTreeId("team", "prof")));
  auto& ann = q["metadata"].at("annotations").as_object();
  CHECK(ann.at("quota.scheduling.koordinator.sh/total-resource") ==
        R"({"cpu":"14","memory":"56Gi","pods":"330"})");
  CHECK(ann.at("quota.scheduling.koordinator.sh/unschedulable-resource") ==
        R"({"cpu":"10","memory":"40Gi","pods":"220"})");
  // Stable: the same inputs give the same object, so nothing is rewritten.
  CHECK(desiredProfileQuota(q, p, totals, profileTreeId("team", "prof")) == q);
}

TEST_CASE("quotaprofile: resource keys and the tree id", "[quotaprofile]") {
  auto p = profile("", R"({"quota.scheduling.koordinator.sh/resource-keys":"[\"cpu\",\"gpu\"]"})");
  auto q = desiredProfileQuota(json::object{}, p, profileTotals(p, nodes()), "1");
  CHECK(q["spec"].at("min") == json::parse(R"({"cpu":"14","gpu":"0"})"));
  // FNV-1a 64 of "team/prof", as Go's hash/fnv writes it in decimal.
  CHECK(profileTreeId("", "") != profileTreeId("team", "prof"));
  CHECK(profileTreeId("a", "b") == "16582468340193742689");
}
