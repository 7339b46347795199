#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "cache/node_tree.h"

using namespace koord::roles::scheduler;

namespace {

Node labelled(std::vector<std::pair<std::string, std::string>> labels) {
  Node n;
  // Moved in, not assigned from the literal: GCC 12 at -O2 with ASan reports a false
  // -Wrestrict overlap in basic_string::_M_replace here (GCC bug 105329).
  n.name = std::string(1, 'n');
  for (auto& [k, v] : labels)
    n.labels[k] = v;
  return n;
}

}  // namespace

TEST_CASE("zoneKey prefers the GA topology labels and falls back to failure-domain") {
  struct Case {
    const char* what;
    std::vector<std::pair<std::string, std::string>> labels;
    std::string want;
  };
  const std::string sep = std::string(":") + '\0' + ":";
  const std::vector<Case> cases = {
      {"no labels", {}, ""},
      {"GA zone", {{"topology.kubernetes.io/zone", "z1"}}, sep + "z1"},
      {"beta zone", {{"failure-domain.beta.kubernetes.io/zone", "z2"}}, sep + "z2"},
      {"GA wins over beta",
       {{"topology.kubernetes.io/zone", "z1"}, {"failure-domain.beta.kubernetes.io/zone", "z2"}},
       sep + "z1"},
      {"region and zone",
       {{"topology.kubernetes.io/region", "r"}, {"topology.kubernetes.io/zone", "z"}},
       "r" + sep + "z"},
      {"beta region only", {{"failure-domain.beta.kubernetes.io/region", "r"}}, "r" + sep},
  };
  for (const auto& c : cases) {
    INFO(c.what);
    CHECK(zoneKey(labelled(c.labels)) == c.want);
  }
}

TEST_CASE("NodeTree lists nodes round-robin across zones in first-seen order") {
  NodeTree t;
  CHECK(t.add("a1", "A"));
  CHECK(t.add("a2", "A"));
  CHECK(t.add("a3", "A"));
  CHECK(t.add("b1", "B"));
  CHECK(t.add("c1", "C"));
  CHECK(t.add("c2", "C"));
  CHECK(t.numNodes() == 6);
  CHECK(t.list() == std::vector<std::string>{"a1", "b1", "c1", "a2", "c2", "a3"});

  SECTION("adding again in the same zone changes nothing") {
    CHECK_FALSE(t.add("a2", "A"));
    CHECK(t.numNodes() == 6);
  }
  SECTION("a zone change moves the node to the end of its new zone") {
    CHECK(t.add("a1", "B"));
    CHECK(t.list() == std::vector<std::string>{"a2", "b1", "c1", "a3", "a1", "c2"});
  }
  SECTION("removing a zone's last node drops the zone") {
    CHECK(t.remove("b1"));
    CHECK_FALSE(t.remove("b1"));
    CHECK(t.list() == std::vector<std::string>{"a1", "c1", "a2", "c2", "a3"});
    CHECK(t.add("b2", "B"));  // B comes back as the last zone
    CHECK(t.list() == std::vector<std::string>{"a1", "c1", "b2", "a2", "c2", "a3"});
  }
}
