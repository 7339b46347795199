// koord::kube::Store: keyed objects and the indexes kept in step with puts and erases.
#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <vector>

#include "koord/kube/reflector.h"
#include "koord/kube/store.h"

#include <boost/json.hpp>

using koord::kube::Store;

namespace {

struct Pod {
  std::string node;
  std::vector<std::string> labels;
};

std::shared_ptr<const Pod> pod(std::string node, std::vector<std::string> labels = {}) {
  return std::make_shared<const Pod>(Pod{std::move(node), std::move(labels)});
}

std::size_t count(const Store<Pod>& s, const std::string& index, const std::string& value) {
  return s.byIndex(index, value).size();
}

}  // namespace

TEST_CASE("Store put, get, erase answer the previous object", "[kube]") {
  Store<Pod> s;
  CHECK(s.put("ns/a", pod("n1"), "5") == nullptr);
  auto old = s.put("ns/a", pod("n2"), "6");
  REQUIRE(old != nullptr);
  CHECK(old->node == "n1");
  CHECK(s.get("ns/a")->node == "n2");
  CHECK(s.resourceVersion("ns/a") == "6");
  CHECK(s.size() == 1);
  CHECK(s.erase("ns/a")->node == "n2");
  CHECK(s.erase("ns/a") == nullptr);
  CHECK(s.get("ns/a") == nullptr);
  CHECK(s.resourceVersion("ns/a").empty());
}

TEST_CASE("Store indexes follow updates, multi-valued and empty index values", "[kube]") {
  Store<Pod> s;
  s.addIndex("node", [](const Pod& p) {
    return p.node.empty() ? std::vector<std::string>{} : std::vector<std::string>{p.node};
  });
  s.addIndex("label", [](const Pod& p) { return p.labels; });
  s.put("a", pod("n1", {"x", "y"}));
  s.put("b", pod("n1", {"y"}));
  s.put("c", pod("", {}));  // unscheduled: in no node bucket
  CHECK(count(s, "node", "n1") == 2);
  CHECK(count(s, "node", "") == 0);
  CHECK(count(s, "label", "y") == 2);
  CHECK(count(s, "label", "x") == 1);

  s.put("a", pod("n2", {"x"}));  // moves node, drops label y
  CHECK(count(s, "node", "n1") == 1);
  CHECK(count(s, "node", "n2") == 1);
  CHECK(count(s, "label", "y") == 1);
  s.erase("b");
  CHECK(count(s, "node", "n1") == 0);
  CHECK(count(s, "label", "y") == 0);
  CHECK(s.byIndex("node", "n2").front()->labels == std::vector<std::string>{"x"});
  CHECK_THROWS_AS(s.byIndex("nope", "x"), std::out_of_range);
}

TEST_CASE("Store refuses an index added late or twice", "[kube]") {
  Store<Pod> s;
  s.addIndex("node", [](const Pod& p) { return std::vector<std::string>{p.node}; });
  CHECK_THROWS_AS(s.addIndex("node", [](const Pod&) { return std::vector<std::string>{}; }),
                  std::logic_error);
  s.put("a", pod("n1"));
  CHECK_THROWS_AS(s.addIndex("other", [](const Pod&) { return std::vector<std::string>{}; }),
                  std::logic_error);
}

TEST_CASE("readObjectIdentity builds namespace/name keys and refuses nameless objects", "[kube]") {
  using koord::kube::readObjectIdentity;
  auto ns = readObjectIdentity(boost::json::parse(
      R"({"metadata":{"name":"p","namespace":"default","resourceVersion":"42"}})"));
  REQUIRE(ns.has_value());
  CHECK(ns->key == "default/p");
  CHECK(ns->resource_version == "42");
  auto cluster = readObjectIdentity(boost::json::parse(R"({"metadata":{"name":"node-a"}})"));
  REQUIRE(cluster.has_value());
  CHECK(cluster->key == "node-a");
  CHECK_FALSE(
      readObjectIdentity(boost::json::parse(R"({"metadata":{"namespace":"x"}})")).has_value());
  CHECK_FALSE(readObjectIdentity(boost::json::parse(R"({"metadata":{"name":""}})")).has_value());
  CHECK_FALSE(readObjectIdentity(boost::json::parse(R"([1,2])")).has_value());
}
