#include <memory>
#include <string>

#include <catch2/catch.hpp>

#include "framework/snapshot.h"

using namespace koord::roles::scheduler;

namespace {

std::shared_ptr<NodeInfo> nodeInfo(const std::string& name) {
  auto info = std::make_shared<NodeInfo>();
  auto node = std::make_shared<Node>();
  node->name = name;
  info->node = node;
  return info;
}

std::shared_ptr<const PodInfo> podWith(bool affinity, bool required_anti_affinity) {
  auto p = std::make_shared<PodInfo>();
  // Moved in, not assigned from the literal: GCC 12 at -O2 with ASan reports a false
  // -Wrestrict overlap in basic_string::_M_replace here (GCC bug 105329).
  p->uid = std::string(1, 'p');
  if (affinity)
    p->pod_affinity.required.push_back(PodAffinityTerm{});
  if (required_anti_affinity)
    p->pod_anti_affinity.required.push_back(PodAffinityTerm{});
  return p;
}

}  // namespace

TEST_CASE("Snapshot indexes nodes and the lists InterPodAffinity walks") {
  auto plain = nodeInfo("plain");
  auto with_affinity = nodeInfo("affinity");
  with_affinity->addPod(podWith(true, false));
  auto with_anti = nodeInfo("anti");
  with_anti->addPod(podWith(false, true));
  auto pods_only = std::make_shared<NodeInfo>();  // a pod bound before its Node arrived
  pods_only->addPod(podWith(true, true));

  Snapshot snapshot({plain, with_affinity, nullptr, pods_only, with_anti});
  CHECK(snapshot.size() == 3);
  REQUIRE(snapshot.nodes().size() == 3);
  CHECK(snapshot.nodes()[0]->name() == "plain");  // order kept
  CHECK(snapshot.nodes()[2]->name() == "anti");
  CHECK(snapshot.get("plain") == plain.get());
  CHECK(snapshot.get("anti") == with_anti.get());
  CHECK(snapshot.get("missing") == nullptr);
  CHECK(snapshot.get("") == nullptr);

  REQUIRE(snapshot.nodesWithPodAffinity().size() == 2);
  CHECK(snapshot.nodesWithPodAffinity()[0]->name() == "affinity");
  CHECK(snapshot.nodesWithPodAffinity()[1]->name() == "anti");  // anti-affinity counts too
  REQUIRE(snapshot.nodesWithRequiredAntiAffinity().size() == 1);
  CHECK(snapshot.nodesWithRequiredAntiAffinity()[0]->name() == "anti");
}

TEST_CASE("Snapshot::reindex follows replaced entries") {
  Snapshot snapshot({nodeInfo("a"), nodeInfo("b")});
  CHECK(snapshot.nodesWithPodAffinity().empty());

  auto b2 = nodeInfo("b");
  b2->addPod(podWith(true, false));
  snapshot.mutableNodes()[1] = b2;
  snapshot.mutableNodes().push_back(nodeInfo("c"));
  snapshot.reindex();
  CHECK(snapshot.size() == 3);
  CHECK(snapshot.get("b") == b2.get());
  CHECK(snapshot.get("c") != nullptr);
  REQUIRE(snapshot.nodesWithPodAffinity().size() == 1);
  CHECK(snapshot.nodesWithPodAffinity()[0]->name() == "b");

  snapshot.mutableNodes().erase(snapshot.mutableNodes().begin());
  snapshot.reindex();
  CHECK(snapshot.get("a") == nullptr);
  CHECK(snapshot.get("b") == b2.get());
}

TEST_CASE("an empty Snapshot") {
  Snapshot snapshot;
  CHECK(snapshot.size() == 0);
  CHECK(snapshot.get("a") == nullptr);
  CHECK(snapshot.nodes().empty());
}
