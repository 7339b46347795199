#include "plugins/elasticquota/group_quota_manager.h"

#include <catch2/catch.hpp>

#include <map>

#include "quota_test_util.h"

using namespace koord::roles::scheduler::elasticquota;
using namespace elasticquota_test;

namespace {

// root (150 cores)
//   A  min 40  max 100            a1 min 10 max 40 | a2 min 20 max 60 | a3 min 10 max 100, no
//   lending B  min 60  max 100            b1 min 30 max 100 weight 1 | b2 min 30 max 100 weight 3
// Requests: a1 30, a2 10, a3 none, b1 80, b2 80.
void buildTree(GroupQuotaManager& m, std::int64_t total_cores = 150) {
  for (const QuotaText& q : {
           QuotaText{.name = "A", .min_cores = 40, .max_cores = 100},
           QuotaText{.name = "B", .min_cores = 60, .max_cores = 100},
           QuotaText{.name = "a1", .parent = "A", .min_cores = 10, .max_cores = 40},
           QuotaText{.name = "a2", .parent = "A", .min_cores = 20, .max_cores = 60},
           QuotaText{
               .name = "a3", .parent = "A", .min_cores = 10, .max_cores = 100, .allow_lent = false},
           QuotaText{
               .name = "b1", .parent = "B", .min_cores = 30, .max_cores = 100, .weight_cores = 1},
           QuotaText{
               .name = "b2", .parent = "B", .min_cores = 30, .max_cores = 100, .weight_cores = 3},
       }) {
    REQUIRE(m.updateQuota(quota(q)).has_value());
  }
  m.setClusterTotalResource({{"cpu", cores(total_cores)}});
  m.onPodAdd("a1", pod("a1-pod", cores(30), false));
  m.onPodAdd("a2", pod("a2-pod", cores(10), false));
  m.onPodAdd("b1", pod("b1-pod", cores(80), false));
  m.onPodAdd("b2", pod("b2-pod", cores(80), false));
}

std::int64_t runtimeCores(GroupQuotaManager& m, std::string_view name) {
  auto s = m.summary(name);
  REQUIRE(s.has_value());
  return valueOf(s->runtime, "cpu") / 1000;
}

std::map<std::string, std::int64_t> runtimes(GroupQuotaManager& m) {
  std::map<std::string, std::int64_t> out;
  for (const char* name : {"A", "B", "a1", "a2", "a3", "b1", "b2"})
    out[name] = runtimeCores(m, name);
  return out;
}

}  // namespace

TEST_CASE("Quota tree: runtime from min, lending and shared weights", "[scheduler][elasticquota]") {
  GroupQuotaManager m{ElasticQuotaArgs{}};
  buildTree(m);
  CHECK(m.treeProblems().empty());
  // Root: A asks 50 (a3 holds its min of 10 without pods), B asks 100 (capped at max). Both get
  // their min (40, 60); the 50 left go half and half (equal weights): A is met at 50 and returns
  // 15, which B takes, reaching its 100.
  // A (50): a2 and a3 get their 10, a1 its min 10 plus the 20 left, meeting its 30.
  // B (100): both get min 30; the 40 left go 1:3 (10 and 30), short of both requests.
  const std::map<std::string, std::int64_t> want = {{"A", 50},  {"B", 100}, {"a1", 30}, {"a2", 10},
                                                    {"a3", 10}, {"b1", 40}, {"b2", 60}};
  CHECK(runtimes(m) == want);

  auto a3 = m.summary("a3");
  REQUIRE(a3.has_value());
  CHECK(valueOf(a3->request, "cpu") == cores(10));
  CHECK(valueOf(a3->child_request, "cpu") == 0);
  auto b = m.summary("B");
  REQUIRE(b.has_value());
  CHECK(b->is_parent);
  CHECK(valueOf(b->child_request, "cpu") == cores(160));
  CHECK(valueOf(b->request, "cpu") == cores(160));
  CHECK(m.refreshRuntime("B") == Resources{{"cpu", cores(100)}});
  CHECK(m.refreshRuntime(koord::apis::kRootQuotaName) == Resources{{"cpu", cores(150)}});
}

TEST_CASE("Quota tree: a change of request recomputes the runtimes", "[scheduler][elasticquota]") {
  GroupQuotaManager m{ElasticQuotaArgs{}};
  buildTree(m);
  // a2 asks 20 more: A asks 70. Root: min 40 and 60, the 50 left go 25 and 25: A 65, B 85.
  // A (65): a1 10, a2 20, a3 10, 25 left by weights 40:60 -> a1 +10, a2 +15 (met at 30, 5 back),
  // then a1 +5: a1 25, a2 30. B (85): 25 left 1:3 -> b1 36.25, b2 48.75.
  m.onPodAdd("a2", pod("a2-more", cores(20), false));
  const std::map<std::string, std::int64_t> want = {{"A", 65},  {"B", 85},  {"a1", 25}, {"a2", 30},
                                                    {"a3", 10}, {"b1", 36}, {"b2", 48}};
  CHECK(runtimes(m) == want);
  CHECK(valueOf(m.summary("b1")->runtime, "cpu") == 36250);
  CHECK(valueOf(m.summary("b2")->runtime, "cpu") == 48750);

  // And back when the pod goes.
  m.onPodDelete("ns", "a2-more");
  CHECK(runtimeCores(m, "A") == 50);
  CHECK(runtimeCores(m, "b1") == 40);
}

TEST_CASE("Quota tree: a quota that lends its unused min", "[scheduler][elasticquota]") {
  GroupQuotaManager m{ElasticQuotaArgs{}};
  buildTree(m);
  // a3 may lend now: it asks nothing, so A asks 40 (its min) and B gets the other 110, of which
  // it can use 100.
  REQUIRE(m.updateQuota(quota({.name = "a3", .parent = "A", .min_cores = 10, .max_cores = 100}))
              .has_value());
  CHECK(runtimeCores(m, "a3") == 0);
  CHECK(runtimeCores(m, "A") == 40);
  CHECK(runtimeCores(m, "B") == 100);
  CHECK(runtimeCores(m, "a1") == 30);
}

TEST_CASE("Quota tree: children's mins are scaled into a smaller parent",
          "[scheduler][elasticquota]") {
  SECTION("scaled") {
    GroupQuotaManager m{ElasticQuotaArgs{}};
    buildTree(m, 50);
    // Root 50 < 40 + 60: A's min becomes 20, B's 30; nothing is left over.
    // A (20) < 40 of mins: a1 5, a2 10, a3 5.
    const std::map<std::string, std::int64_t> want = {{"A", 20}, {"B", 30},  {"a1", 5}, {"a2", 10},
                                                      {"a3", 5}, {"b1", 15}, {"b2", 15}};
    CHECK(runtimes(m) == want);
    CHECK(valueOf(m.summary("A")->auto_scale_min, "cpu") == cores(20));
    CHECK(valueOf(m.summary("A")->min, "cpu") == cores(40));
    // Back to the cluster's full size, the mins are whole again.
    m.setClusterTotalResource({{"cpu", cores(150)}});
    CHECK(valueOf(m.summary("A")->auto_scale_min, "cpu") == cores(40));
    CHECK(runtimeCores(m, "B") == 100);
  }
  SECTION("not scaled") {
    GroupQuotaManager m{ElasticQuotaArgs{}, false};
    buildTree(m, 50);
    // Mins are honoured as they are, beyond what the cluster has.
    CHECK(runtimeCores(m, "A") == 40);
    CHECK(runtimeCores(m, "B") == 60);
  }
}

TEST_CASE("Quota tree: system and default quotas' usage comes off the root",
          "[scheduler][elasticquota]") {
  GroupQuotaManager m{ElasticQuotaArgs{}};
  buildTree(m);
  m.onPodAdd(koord::apis::kDefaultQuotaName, pod("stray", cores(30), true));
  CHECK(m.refreshRuntime(koord::apis::kRootQuotaName) == Resources{{"cpu", cores(120)}});
  // Root 120: min 40 and 60, the 20 left half and half: A 50 (just met), B 70.
  CHECK(runtimeCores(m, "A") == 50);
  CHECK(runtimeCores(m, "B") == 70);
  auto def = m.summary(koord::apis::kDefaultQuotaName);
  REQUIRE(def.has_value());
  CHECK(def->runtime == def->max);
  auto root = m.summary(koord::apis::kRootQuotaName);
  REQUIRE(root.has_value());
  CHECK(valueOf(root->used, "cpu") == cores(30));
}

TEST_CASE("Quota tree: used goes up to every ancestor once assigned", "[scheduler][elasticquota]") {
  GroupQuotaManager m{ElasticQuotaArgs{}};
  buildTree(m);
  CHECK(valueOf(m.summary("A")->used, "cpu") == 0);
  m.reservePod("a1", pod("a1-pod", cores(30), false));
  CHECK(valueOf(m.summary("a1")->used, "cpu") == cores(30));
  CHECK(valueOf(m.summary("A")->used, "cpu") == cores(30));
  CHECK(valueOf(m.summary(koord::apis::kRootQuotaName)->used, "cpu") == cores(30));
  // An update without a node keeps the reservation.
  m.onPodUpdate("a1", pod("a1-pod", cores(30), false));
  CHECK(valueOf(m.summary("A")->used, "cpu") == cores(30));
  m.unreservePod("ns", "a1-pod");
  CHECK(valueOf(m.summary("A")->used, "cpu") == 0);
  CHECK(valueOf(m.summary("A")->request, "cpu") == cores(50));
  // Moving the pod to a2 moves its request.
  m.onPodUpdate("a2", pod("a1-pod", cores(30), true));
  CHECK(valueOf(m.summary("a1")->self_request, "cpu") == 0);
  CHECK(valueOf(m.summary("a2")->self_request, "cpu") == cores(40));
  CHECK(valueOf(m.summary("a2")->used, "cpu") == cores(30));
}

TEST_CASE("Quota tree: deleting a quota moves its pods to the default quota",
          "[scheduler][elasticquota]") {
  GroupQuotaManager m{ElasticQuotaArgs{}};
  buildTree(m);
  REQUIRE(m.deleteQuota("b2").has_value());
  CHECK_FALSE(m.hasQuota("b2"));
  CHECK(valueOf(m.summary(koord::apis::kDefaultQuotaName)->request, "cpu") == cores(80));
  CHECK(runtimeCores(m, "b1") == 80);
  CHECK_FALSE(m.deleteQuota(koord::apis::kDefaultQuotaName).has_value());
  CHECK_FALSE(m.deleteQuota("nope").has_value());
}

TEST_CASE("Quota tree: missing parents, loops and depth are reported, not followed",
          "[scheduler][elasticquota]") {
  GroupQuotaManager m{ElasticQuotaArgs{}};
  REQUIRE(m.updateQuota(quota({.name = "x", .parent = "y", .max_cores = 10})).has_value());
  REQUIRE(m.updateQuota(quota({.name = "y", .parent = "x", .max_cores = 10})).has_value());
  REQUIRE(m.updateQuota(quota({.name = "orphan", .parent = "gone", .max_cores = 10})).has_value());
  REQUIRE(
      m.updateQuota(
           quota({.name = "under-default", .parent = "koordinator-default-quota", .max_cores = 10}))
          .has_value());
  std::string parent = "";
  for (std::size_t depth = 1; depth <= kMaxQuotaTreeDepth + 1; ++depth) {
    const std::string name = fmt::format("level-{}", depth);
    REQUIRE(m.updateQuota(quota({.name = name, .parent = parent, .max_cores = 10})).has_value());
    parent = name;
  }
  m.setClusterTotalResource({{"cpu", cores(10)}});
  const std::vector<std::string> problems = m.treeProblems();
  REQUIRE(problems.size() == 5);
  CHECK(problems[0] == fmt::format("quota level-{}: deeper than {} levels below the root",
                                   kMaxQuotaTreeDepth + 1, kMaxQuotaTreeDepth));
  CHECK(problems[1] == "quota orphan: parent gone not found");
  CHECK(problems[2] ==
        "quota under-default: parent koordinator-default-quota cannot have child quotas");
  CHECK(problems[3] == "quota x: its parents loop through x");
  CHECK(problems[4] == "quota y: its parents loop through y");
  CHECK(m.summary("x")->detached);
  CHECK(m.summary("x")->runtime.empty());
  CHECK_FALSE(m.summary(fmt::format("level-{}", kMaxQuotaTreeDepth))->detached);
  // Fixing the loop attaches both.
  REQUIRE(m.updateQuota(quota({.name = "y", .max_cores = 10})).has_value());
  CHECK_FALSE(m.summary("x")->detached);
  CHECK(m.treeProblems().size() == 3);
}

TEST_CASE("Quota of a pod: label, namespace, namespaces annotation, default",
          "[scheduler][elasticquota]") {
  GroupQuotaManager m{ElasticQuotaArgs{}};
  REQUIRE(m.updateQuota(quota({.name = "team-a", .max_cores = 10, .namespace_ = "team-a"}))
              .has_value());
  REQUIRE(m.updateQuota(quota({.name = "team-b", .max_cores = 10, .namespace_ = "elsewhere"}))
              .has_value());
  REQUIRE(m.updateQuota(quota({.name = "shared",
                               .max_cores = 10,
                               .namespaces_annotation = R"([\"ns-1\",\"ns-2\"])"}))
              .has_value());
  const koord::kube::Labels none;
  const koord::kube::Labels labelled = {{"quota.scheduling.koordinator.sh/name", "team-b"}};
  const koord::kube::Labels unknown = {{"quota.scheduling.koordinator.sh/name", "nope"}};
  CHECK(m.podQuotaName("team-a", labelled) == "team-b");
  CHECK(m.podQuotaName("team-a", none) == "team-a");
  // A quota named after the namespace but living elsewhere does not claim it.
  CHECK(m.podQuotaName("team-b", none) == "koordinator-default-quota");
  CHECK(m.podQuotaName("ns-2", none) == "shared");
  CHECK(m.podQuotaName("other", none) == "koordinator-default-quota");
  CHECK(m.podQuotaName("team-a", unknown) == "koordinator-default-quota");
}
