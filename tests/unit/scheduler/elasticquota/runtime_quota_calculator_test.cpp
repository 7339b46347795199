#include "plugins/elasticquota/runtime_quota_calculator.h"

#include <catch2/catch.hpp>

#include <vector>

using namespace koord::roles::scheduler::elasticquota;

namespace {

struct Child {
  std::int64_t weight, request, min;
  bool lend;
};

std::vector<std::int64_t> share(std::int64_t total, const std::vector<Child>& children) {
  std::vector<QuotaNode> nodes;
  for (const Child& c : children) {
    nodes.push_back(QuotaNode{.shared_weight = c.weight,
                              .request = c.request,
                              .min = c.min,
                              .guarantee = 0,
                              .allow_lent_resource = c.lend});
  }
  redistribute(nodes, total);
  std::vector<std::int64_t> out;
  for (const QuotaNode& n : nodes)
    out.push_back(n.runtime);
  return out;
}

}  // namespace

TEST_CASE("Runtime quota: water-filling among siblings", "[scheduler][elasticquota]") {
  struct Case {
    const char* what;
    std::int64_t total;
    std::vector<Child> children;
    std::vector<std::int64_t> want;
  };
  const std::vector<Case> cases = {
      {"requests within min get what they ask",
       100,
       {{1, 10, 20, true}, {1, 30, 40, true}},
       {10, 30}},
      {"a quota that does not lend keeps its whole min",
       100,
       {{1, 10, 20, false}, {1, 200, 40, true}},
       {20, 80}},
      {"what is left goes by weight", 100, {{1, 100, 0, true}, {3, 100, 0, true}}, {25, 75}},
      {"a met request hands its excess to the others",
       100,
       {{1, 10, 0, true}, {1, 100, 0, true}, {2, 100, 0, true}},
       {10, 30, 60}},
      {"excess goes round again",
       90,
       {{1, 20, 0, true}, {1, 100, 0, true}, {1, 100, 0, true}},
       {20, 35, 35}},
      {"min comes first even past the total",
       50,
       {{1, 100, 40, true}, {1, 100, 30, true}},
       {40, 30}},
      {"zero weight gets nothing beyond min",
       100,
       {{0, 100, 10, true}, {1, 100, 0, true}},
       {10, 90}},
      {"shares round to the nearest unit", 10, {{1, 100, 0, true}, {2, 100, 0, true}}, {3, 7}},
      {"nothing to share", 0, {{1, 100, 0, true}}, {0}},
  };
  for (const Case& c : cases) {
    INFO(c.what);
    CHECK(share(c.total, c.children) == c.want);
  }
}

TEST_CASE("Runtime quota: across resources, keys the total lacks share nothing",
          "[scheduler][elasticquota]") {
  const std::vector<ChildQuota> children = {
      {.shared_weight = {{"cpu", 1}, {"memory", 1}},
       .limited_request = {{"cpu", 100}, {"memory", 5}},
       .min = {},
       .guaranteed = {},
       .allow_lent_resource = true},
      {.shared_weight = {{"cpu", 1}},
       .limited_request = {{"cpu", 100}, {"nvidia.com/gpu", 2}},
       .min = {{"nvidia.com/gpu", 1}},
       .guaranteed = {},
       .allow_lent_resource = true},
  };
  const std::vector<std::string> keys = {"cpu", "memory", "nvidia.com/gpu"};
  auto runtime = calculateRuntime(children, {{"cpu", 60}, {"memory", 10}}, keys);
  REQUIRE(runtime.size() == 2);
  CHECK(runtime[0] == Resources{{"cpu", 30}, {"memory", 5}, {"nvidia.com/gpu", 0}});
  CHECK(runtime[1] == Resources{{"cpu", 30}, {"memory", 0}, {"nvidia.com/gpu", 1}});
}

TEST_CASE("Min quota scaling when the children's mins overflow the parent",
          "[scheduler][elasticquota]") {
  const Resources sum = {{"cpu", 100}, {"memory", 10}};
  // Fits: unchanged.
  CHECK(scaledMinQuota({{"cpu", 100}, {"memory", 10}}, sum, {{"cpu", 40}, {"memory", 4}}) ==
        Resources{{"cpu", 40}, {"memory", 4}});
  // cpu overflows: cut in proportion, rounded down; memory fits.
  CHECK(scaledMinQuota({{"cpu", 50}, {"memory", 20}}, sum, {{"cpu", 30}, {"memory", 4}}) ==
        Resources{{"cpu", 15}, {"memory", 4}});
  CHECK(scaledMinQuota({{"cpu", 10}}, sum, {{"cpu", 33}}) == Resources{{"cpu", 3}});
  // Nothing left: zero.
  CHECK(scaledMinQuota({{"cpu", -5}}, sum, {{"cpu", 30}}) == Resources{{"cpu", 0}});
  // Only the resources the total names are looked at.
  CHECK(scaledMinQuota({{"memory", 5}}, sum, {{"cpu", 30}, {"memory", 5}}) ==
        Resources{{"cpu", 30}, {"memory", 2}});
}
