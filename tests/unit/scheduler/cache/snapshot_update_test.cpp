#include <memory>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "catch_expected.h"

#include "cache/scheduler_cache.h"
#include "cache_fixtures.h"

using namespace koord::roles::scheduler;
using namespace koord::roles::scheduler::testfx;

namespace {

std::vector<std::string> names(const std::vector<std::shared_ptr<const NodeInfo>>& list) {
  std::vector<std::string> out;
  for (const auto& n : list)
    out.push_back(n->name());
  return out;
}

}  // namespace

TEST_CASE("updateSnapshot replaces only the NodeInfos that changed") {
  SchedulerCache cache;
  for (const char* n : {"n1", "n2", "n3"})
    REQUIRE(cache.addNode(makeNode(n)));
  Snapshot snap;
  cache.updateSnapshot(snap);
  REQUIRE(snap.size() == 3);
  const auto before = snap.nodes();  // shared_ptr copies keep the old NodeInfos alive
  const std::int64_t gen0 = snap.generation;
  CHECK(gen0 > 0);

  REQUIRE(cache.assumePod(makePod("p", "n2", 250)));
  cache.updateSnapshot(snap);
  CHECK(snap.generation > gen0);
  REQUIRE(snap.size() == 3);
  CHECK(names(snap.nodes()) == names(before));
  CHECK(snap.nodes()[0] == before[0]);
  CHECK(snap.nodes()[1] != before[1]);
  CHECK(snap.nodes()[2] == before[2]);
  CHECK(snap.get("n2") == snap.nodes()[1].get());
  CHECK(snap.get("n2")->requested.milli_cpu == 250);
  CHECK(before[1]->pods.empty());  // the earlier snapshot's NodeInfo is untouched
  CHECK(snap.nodes()[1]->generation > before[1]->generation);

  SECTION("nothing changed: nothing replaced, generation kept") {
    const auto now = snap.nodes();
    const std::int64_t gen1 = snap.generation;
    cache.updateSnapshot(snap);
    CHECK(snap.generation == gen1);
    for (std::size_t i = 0; i < now.size(); ++i)
      CHECK(snap.nodes()[i] == now[i]);
  }
  SECTION("a node update without a zone change is swapped in place") {
    auto relabelled = std::make_shared<Node>(*makeNode("n3"));
    relabelled->unschedulable = true;
    REQUIRE(cache.updateNode(relabelled));
    cache.updateSnapshot(snap);
    CHECK(names(snap.nodes()) == names(before));
    CHECK(snap.nodes()[0] == before[0]);
    CHECK(snap.get("n3")->node == relabelled);
  }
}

TEST_CASE("generations are cache-wide and monotonic") {
  SchedulerCache cache;
  REQUIRE(cache.addNode(makeNode("a")));
  REQUIRE(cache.addNode(makeNode("b")));
  std::vector<std::int64_t> seen;
  auto note = [&](const std::string& n) { seen.push_back(cache.nodeInfo(n)->generation); };
  note("a");
  note("b");
  REQUIRE(cache.addPod(makePod("p", "a")));
  note("a");
  REQUIRE(cache.addPod(makePod("q", "b")));
  note("b");
  REQUIRE(cache.removePod(*makePod("p", "a")));
  note("a");
  for (std::size_t i = 1; i < seen.size(); ++i)
    CHECK(seen[i] > seen[i - 1]);
}

TEST_CASE("the snapshot lists nodes round-robin across zones") {
  SchedulerCache cache;
  REQUIRE(cache.addNode(makeNode("a1", "za")));
  REQUIRE(cache.addNode(makeNode("a2", "za")));
  REQUIRE(cache.addNode(makeNode("a3", "za")));
  REQUIRE(cache.addNode(makeNode("b1", "zb")));
  REQUIRE(cache.addNode(makeNode("c1", "zc", "r2")));
  REQUIRE(cache.addNode(makeNode("c2", "zc", "r2")));
  REQUIRE(cache.addNode(makeNode("x1")));  // no zone: a group of its own
  Snapshot snap;
  cache.updateSnapshot(snap);
  CHECK(names(snap.nodes()) == std::vector<std::string>{"a1", "b1", "c1", "x1", "a2", "c2", "a3"});

  SECTION("adding a node rebuilds the order") {
    REQUIRE(cache.addNode(makeNode("b2", "zb")));
    cache.updateSnapshot(snap);
    CHECK(names(snap.nodes()) ==
          std::vector<std::string>{"a1", "b1", "c1", "x1", "a2", "b2", "c2", "a3"});
  }
  SECTION("removing a node rebuilds the order") {
    REQUIRE(cache.removeNode("b1"));
    cache.updateSnapshot(snap);
    CHECK(names(snap.nodes()) == std::vector<std::string>{"a1", "c1", "x1", "a2", "c2", "a3"});
    CHECK(snap.get("b1") == nullptr);
  }
  SECTION("a zone change rebuilds the order") {
    REQUIRE(cache.updateNode(makeNode("a1", "zb")));
    cache.updateSnapshot(snap);
    CHECK(names(snap.nodes()) ==
          std::vector<std::string>{"a2", "b1", "c1", "x1", "a3", "a1", "c2"});
  }
  SECTION("the same name in another region is another zone") {
    REQUIRE(cache.updateNode(makeNode("c1", "zc", "r9")));
    cache.updateSnapshot(snap);
    CHECK(names(snap.nodes()) ==
          std::vector<std::string>{"a1", "b1", "c2", "x1", "c1", "a2", "a3"});
  }
}

TEST_CASE("updateSnapshot keeps the pod-affinity node lists in step") {
  SchedulerCache cache;
  for (const char* n : {"n1", "n2", "n3"})
    REQUIRE(cache.addNode(makeNode(n)));
  REQUIRE(cache.addPod(makePod("aff1", "n1", 100, 1, true)));
  Snapshot snap;
  cache.updateSnapshot(snap);
  CHECK(names(snap.nodesWithPodAffinity()) == std::vector<std::string>{"n1"});

  // n3 joins the list: it is rebuilt in node order.
  REQUIRE(cache.addPod(makePod("aff3", "n3", 100, 1, true)));
  cache.updateSnapshot(snap);
  CHECK(names(snap.nodesWithPodAffinity()) == std::vector<std::string>{"n1", "n3"});

  // n1 changes but stays: its entry is the new NodeInfo.
  REQUIRE(cache.addPod(makePod("plain", "n1")));
  cache.updateSnapshot(snap);
  REQUIRE(snap.nodesWithPodAffinity().size() == 2);
  CHECK(snap.nodesWithPodAffinity()[0] == snap.nodes()[0]);
  CHECK(snap.nodesWithPodAffinity()[0]->pods.size() == 2);

  // n1 leaves the list.
  REQUIRE(cache.removePod(*makePod("aff1", "n1", 100, 1, true)));
  cache.updateSnapshot(snap);
  CHECK(names(snap.nodesWithPodAffinity()) == std::vector<std::string>{"n3"});
  CHECK(snap.nodesWithRequiredAntiAffinity().empty());
}

TEST_CASE("a snapshot filled elsewhere is rebuilt from the cache") {
  SchedulerCache cache;
  REQUIRE(cache.addNode(makeNode("n1")));
  auto stray = std::make_shared<NodeInfo>();
  stray->node = makeNode("stray");
  Snapshot snap({stray});
  cache.updateSnapshot(snap);
  CHECK(names(snap.nodes()) == std::vector<std::string>{"n1"});
}

TEST_CASE("Snapshot::replace swaps one entry in place and re-keys the index") {
  auto a = std::make_shared<NodeInfo>();
  a->node = makeNode("a");
  auto b = std::make_shared<NodeInfo>();
  b->node = makeNode("b");
  Snapshot snap({a, b});

  auto b2 = std::make_shared<NodeInfo>();
  b2->node = makeNode("b");  // a new Node object: the index must not view the old name
  b2->addPod(makePod("aff", "b", 100, 1, true));
  CHECK(snap.replace(b2));
  b.reset();
  CHECK(names(snap.nodes()) == std::vector<std::string>{"a", "b"});
  CHECK(snap.get("b") == b2.get());
  CHECK(names(snap.nodesWithPodAffinity()) == std::vector<std::string>{"b"});

  auto unknown = std::make_shared<NodeInfo>();
  unknown->node = makeNode("zz");
  CHECK_FALSE(snap.replace(unknown));
  CHECK_FALSE(snap.replace(std::make_shared<NodeInfo>()));  // no Node
  CHECK_FALSE(snap.replace(nullptr));
  CHECK(snap.size() == 2);
}

TEST_CASE("an incremental update copies only NodeInfos newer than the snapshot") {
  SchedulerCache cache;
  REQUIRE(cache.addNode(makeNode("n1")));
  REQUIRE(cache.addNode(makeNode("n2")));
  Snapshot snap;
  cache.updateSnapshot(snap);
  // A marker the cache never published: only a full rebuild or a copy of n1 would drop it.
  auto marker = std::make_shared<NodeInfo>(*snap.nodes()[0]);
  REQUIRE(snap.replace(marker));

  REQUIRE(cache.addPod(makePod("p", "n2")));
  cache.updateSnapshot(snap);
  CHECK(snap.nodes()[0] == marker);
  CHECK(snap.get("n2")->pods.size() == 1);

  REQUIRE(cache.addPod(makePod("q", "n1")));
  cache.updateSnapshot(snap);
  CHECK(snap.nodes()[0] != marker);
  CHECK(snap.get("n1")->pods.size() == 1);
}
