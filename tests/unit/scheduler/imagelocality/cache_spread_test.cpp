#include <cstdint>
#include <memory>
#include <vector>

#include <catch2/catch.hpp>

#include "cache/scheduler_cache.h"
#include "catch_expected.h"
#include "fixtures.h"

namespace koord::roles::scheduler::upstream {
namespace {

using namespace imagetest;

constexpr const char* kImage = "gcr.io/300:latest";

std::shared_ptr<const Node> with300(std::string name, std::int64_t size = 300 * kMB) {
  return imageNode(std::move(name), {{{kImage, "gcr.io/300:v1"}, size}});
}

ImageNameId idOf(const Node& node) {
  const auto* n = node.images.find(kImage);
  REQUIRE(n != nullptr);
  return n->id;
}

Snapshot snapshotOf(const SchedulerCache& cache) {
  Snapshot s;
  cache.updateSnapshot(s);
  return s;
}

TEST_CASE("ImageLocality: the spread follows nodes added, changed and removed in the cache",
          "[scheduler][imagelocality]") {
  SchedulerCache cache;
  const auto n1 = with300("n1");
  const ImageNameId id = idOf(*n1);
  REQUIRE(cache.addNode(n1));
  REQUIRE(cache.addNode(with300("n2")));
  REQUIRE(cache.addNode(imageNode("n3", {})));
  const PodInfo pod = imagePod({"gcr.io/300"});

  Snapshot s;
  cache.updateSnapshot(s);
  CHECK(s.imageNodeCount(id) == 2);
  // 300 MiB * 2/3 = 200 MiB: 100 * (200 - 23) / (1000 - 23) = 18.
  CHECK(scores(s, pod) == std::vector<std::int64_t>{18, 18, 0});
  const Snapshot before_removal = s;

  REQUIRE(cache.removeNode("n2"));
  cache.updateSnapshot(s);
  CHECK(s.imageNodeCount(id) == 1);
  // 300 MiB * 1/2: 100 * (150 - 23) / 977 = 12.
  CHECK(scores(s, pod) == std::vector<std::int64_t>{12, 0});
  // A snapshot taken earlier keeps the counts of its own nodes.
  CHECK(before_removal.imageNodeCount(id) == 2);

  REQUIRE(cache.updateNode(imageNode("n1", {})));
  REQUIRE(cache.updateNode(with300("n3")));
  cache.updateSnapshot(s);  // no node came or went: the incremental path
  CHECK(s.imageNodeCount(id) == 1);
  CHECK(scores(s, pod) == std::vector<std::int64_t>{0, 12});

  REQUIRE(cache.addNode(with300("n4")));
  cache.updateSnapshot(s);
  CHECK(s.imageNodeCount(id) == 2);
  CHECK(scores(s, pod) == std::vector<std::int64_t>{0, 18, 18});

  // No node reports an image any more: the plugin tells the framework to leave it out.
  testkit::FakeHandle handle(s);
  ImageLocality plugin(handle);
  CHECK(s.anyNodeImages());
  CHECK_FALSE(plugin.scoresEveryNodeAlike(pod));
  CHECK(plugin.scoresEveryNodeAlike(imagePod({})));
  REQUIRE(cache.updateNode(imageNode("n3", {})));
  REQUIRE(cache.removeNode("n4"));
  cache.updateSnapshot(s);
  CHECK_FALSE(s.anyNodeImages());
  testkit::FakeHandle bare_handle(s);
  CHECK(ImageLocality(bare_handle).scoresEveryNodeAlike(pod));
  CHECK(before_removal.anyNodeImages());
}

TEST_CASE("ImageLocality: a heartbeat with the same images counts the node once",
          "[scheduler][imagelocality]") {
  SchedulerCache cache;
  const auto n1 = with300("n1");
  const ImageNameId id = idOf(*n1);
  REQUIRE(cache.addNode(n1));
  REQUIRE(cache.addNode(imageNode("n2", {})));
  REQUIRE(cache.updateNode(with300("n1", 301 * kMB)));
  REQUIRE(cache.updateNode(with300("n1")));
  auto s = snapshotOf(cache);
  CHECK(s.imageNodeCount(id) == 1);
  // Adding a node already known is an update, not a second count.
  REQUIRE(cache.addNode(with300("n1")));
  cache.updateSnapshot(s);
  CHECK(s.imageNodeCount(id) == 1);
}

TEST_CASE("ImageLocality: a removed node whose pods remain is not counted",
          "[scheduler][imagelocality]") {
  SchedulerCache cache;
  const auto n1 = with300("n1");
  const ImageNameId id = idOf(*n1);
  REQUIRE(cache.addNode(n1));
  PodInfo bound = testkit::makePod("bound");
  bound.node_name = "n1";
  REQUIRE(cache.addPod(std::make_shared<const PodInfo>(bound)));
  REQUIRE(cache.removeNode("n1"));
  const auto s = snapshotOf(cache);
  CHECK(s.size() == 0);
  CHECK(s.imageNodeCount(id) == 0);
  // The Node coming back counts again.
  REQUIRE(cache.addNode(with300("n1")));
  CHECK(snapshotOf(cache).imageNodeCount(id) == 1);
}

}  // namespace
}  // namespace koord::roles::scheduler::upstream
