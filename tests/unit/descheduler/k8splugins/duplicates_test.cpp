// RemoveDuplicates: its args, what makes a duplicate, the upper average over feasible nodes.
#include "plugins/removeduplicates/duplicates.h"

#include <boost/json.hpp>

#include <catch2/catch.hpp>

#include <string>

#include "args_checks.h"
#include "fake_handle.h"

namespace koord::roles::descheduler::removeduplicates {
namespace {

using testkit::FakeHandle;
using testkit::makeNode;
using testkit::makePod;

const auto decode = testkit::textDecoder(decodeRemoveDuplicatesArgs);

TEST_CASE("RemoveDuplicatesArgs: members and refusals", "[descheduler]") {
  auto a = decode(R"({"excludeOwnerKinds": ["Job"], "namespaces": {"include": ["a"]}})");
  REQUIRE(a.has_value());
  CHECK(a->exclude_owner_kinds == std::vector<std::string>{"Job"});
  REQUIRE(a->namespaces);
  CHECK(a->namespaces->include == std::vector<std::string>{"a"});
  for (const char* bad : {R"({"labelSelector": {}})", R"({"excludeOwnerKinds": "Job"})",
                          R"({"namespaces": {"include": ["a"], "exclude": ["b"]}})"}) {
    INFO(bad);
    CHECK_FALSE(decode(bad).has_value());
  }
}

struct Cluster {
  FakeHandle h;
  explicit Cluster(int nodes) {
    for (int i = 0; i < nodes; ++i)
      h.snap.addNode(makeNode("n" + std::to_string(i)));
  }
  std::shared_ptr<Pod> add(std::string name, int node, std::string rs = "rs",
                           std::string image = "web:1") {
    auto p = makePod(std::move(name), "n" + std::to_string(node), 100, 1, std::move(rs));
    p->container_images = {std::move(image)};
    h.snap.addPod(p);
    return p;
  }
  std::vector<std::string> run(std::string_view args_json = "{}") {
    auto args = decode(args_json);
    REQUIRE(args.has_value());
    auto plugin = makeRemoveDuplicates(std::make_shared<RemoveDuplicatesArgs>(*args), h);
    REQUIRE(plugin.has_value());
    REQUIRE(dynamic_cast<BalancePlugin&>(**plugin).balance(h.nodes()).has_value());
    return h.evicted;
  }
};

TEST_CASE("RemoveDuplicates: extras above the upper average are evicted", "[descheduler]") {
  struct Case {
    const char* name;
    int nodes;
    int on_first;
    int on_second;
    std::size_t want;
  };
  const Case cases[] = {
      {"3 on one of 2 nodes: average 2", 2, 3, 0, 1},
      {"4 on one of 2 nodes: average 2", 2, 4, 0, 2},
      {"4 on one of 4 nodes: average 1", 4, 4, 0, 3},
      {"2 and 2 on 2 nodes: even", 2, 2, 2, 0},
      {"2 on one node only", 1, 2, 0, 0},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    Cluster k(c.nodes);
    for (int i = 0; i < c.on_first; ++i)
      k.add("a" + std::to_string(i), 0);
    for (int i = 0; i < c.on_second; ++i)
      k.add("b" + std::to_string(i), 1);
    auto evicted = k.run();
    CHECK(evicted.size() == c.want);
    for (const auto& e : evicted)
      CHECK(e != "default/a0");  // the first of a kind is not a duplicate
  }
}

TEST_CASE("RemoveDuplicates: what is not a duplicate", "[descheduler]") {
  Cluster images(2);
  images.add("a0", 0);
  images.add("a1", 0, "rs", "web:2");
  CHECK(images.run().empty());

  Cluster owners(2);
  owners.add("a0", 0, "rs1");
  owners.add("a1", 0, "rs2");
  CHECK(owners.run().empty());

  Cluster bare(2);
  bare.add("a0", 0, "");
  bare.add("a1", 0, "");
  CHECK(bare.run().empty());

  Cluster excluded(2);
  excluded.add("a0", 0);
  excluded.add("a1", 0);
  excluded.add("a2", 0);
  CHECK(excluded.run(R"({"excludeOwnerKinds": ["ReplicaSet"]})").empty());
  CHECK(excluded.run(R"({"namespaces": {"exclude": ["default"]}})").empty());
  excluded.h.filter_fn = [](const Pod&) { return false; };
  CHECK(excluded.run().empty());
}

TEST_CASE("RemoveDuplicates: feasible nodes count taints and node selectors", "[descheduler]") {
  Cluster tainted(2);
  auto n1 = std::const_pointer_cast<Node>(tainted.h.snap.nodes[1]);
  n1->taints = {{"dedicated", "x", kube::TaintEffect::kNoSchedule}};
  for (int i = 0; i < 3; ++i)
    tainted.add("a" + std::to_string(i), 0);
  CHECK(tainted.run().empty());  // one feasible node: nowhere to spread to

  Cluster three(3);
  std::vector<const Pod*> pods;
  for (int i = 0; i < 2; ++i) {
    auto p = three.add("a" + std::to_string(i), 0);
    pods.push_back(p.get());
  }
  CHECK(feasibleNodeCount(pods, three.h.nodes()) == 3);
  auto picky = makePod("picky", "n0");
  picky->node_selector = {{"disk", "ssd"}};
  CHECK(feasibleNodeCount({picky.get()}, three.h.nodes()) == 0);
}

TEST_CASE("RemoveDuplicates: the per-node cap stops a node", "[descheduler]") {
  Cluster k(4);
  for (int i = 0; i < 4; ++i)
    k.add("a" + std::to_string(i), 0);
  k.h.max_per_node = 1;
  CHECK(k.run() == std::vector<std::string>{"default/a1"});
  CHECK(k.h.options.at(0).plugin_name == kRemoveDuplicatesName);
}

}  // namespace
}  // namespace koord::roles::descheduler::removeduplicates
