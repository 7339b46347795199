#include <boost/json.hpp>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "catch_expected.h"
#include "fixtures.h"
#include "framework/plugin_registry.h"
#include "plugins/upstream/imagelocality/register.h"

namespace koord::roles::scheduler::upstream {
namespace {

using namespace imagetest;

struct Case {
  const char* name;
  std::vector<std::string> pod;
  std::vector<std::vector<ContainerImage>> nodes;
  std::vector<std::int64_t> want;
};

// kube-scheduler's TestImageLocalityPriority, its expectations derived from the formula:
// score = 100 * (sum - 23 MiB) / (1000 MiB * containers - 23 MiB), sum clamped to that range,
// each image's size scaled by (nodes with it / all nodes). Init containers are left out, as
// 1.20 does.
TEST_CASE("ImageLocality: kube-scheduler's table", "[scheduler][imagelocality]") {
  const std::vector<Case> cases = {
      // node1: 40 MiB * 1/2 < 23 MiB; node2: 100 * (250/2 - 23) / (2000 - 23) = 5.
      {"two images spread on two nodes, prefer the larger image one",
       {"gcr.io/40", "gcr.io/250"},
       {node403002000(), node25010()},
       {0, 5}},
      // node1: 100 * ((40 + 300)/2 - 23) / (2000 - 23) = 7.
      {"two images on one node, prefer this node",
       {"gcr.io/40", "gcr.io/300"},
       {node403002000(), node25010()},
       {7, 0}},
      // node1: 4000/2 >= 2000, the maximum.
      {"if exceed limit, use limit",
       {"gcr.io/10", "gcr.io/4000"},
       {node400030(), node25010()},
       {100, 0}},
      // node1: 100 * (4000/3 - 23) / (2000 - 23) = 66.
      {"if exceed limit, use limit (with node which has no images present)",
       {"gcr.io/10", "gcr.io/4000"},
       {node400030(), node25010(), {}},
       {66, 0, 0}},
      // node1: 100 * (600*2/3 + 900*2/3 - 23) / (3000 - 23) = 32;
      // node2: 100 * (300/3 + 600*2/3 + 900*2/3 - 23) / (3000 - 23) = 36.
      {"pod with multiple large images, node2 is preferred",
       {"gcr.io/300", "gcr.io/600", "gcr.io/900"},
       {node60040900(), node300600900(), {}},
       {32, 36, 0}},
      // node1: 100 * (30 + 40/2 - 23) / (2000 - 23) = 1; node2: 100 * (30 - 23) / 1977 = 0.
      {"pod with multiple small images",
       {"gcr.io/30", "gcr.io/40"},
       {node203040(), node400030()},
       {1, 0}},
      // 1.20's own fixture: 100 * (2000/2 - 23) / (2000 - 23) = 49.
      {"a 2000 MiB image on one of two nodes",
       {"gcr.io/10", "gcr.io/2000"},
       {node403002000(), node25010()},
       {49, 0}},
  };
  for (const Case& c : cases) {
    SECTION(c.name) {
      std::vector<std::shared_ptr<const Node>> nodes;
      for (std::size_t i = 0; i < c.nodes.size(); ++i)
        nodes.push_back(imageNode("node" + std::to_string(i + 1), c.nodes[i]));
      CHECK(scores(testkit::snapshotOf(nodes), imagePod(c.pod)) == c.want);
    }
  }
}

TEST_CASE("ImageLocality: a pod without containers or a node without images scores 0",
          "[scheduler][imagelocality]") {
  const auto snapshot = testkit::snapshotOf(
      {imageNode("big", {{{"gcr.io/big:latest"}, 4000 * kMB}}), imageNode("bare", {})});
  CHECK(scores(snapshot, imagePod({})) == std::vector<std::int64_t>{0, 0});
  CHECK(scores(snapshot, imagePod({"gcr.io/big"})) == std::vector<std::int64_t>{100, 0});
}

TEST_CASE("ImageLocality: every container counts, two of one image twice",
          "[scheduler][imagelocality]") {
  const auto snapshot = testkit::snapshotOf({imageNode("n", {{{"gcr.io/300:latest"}, 300 * kMB}})});
  // 100 * (300 - 23) / (1000 - 23) = 28; 100 * (600 - 23) / (2000 - 23) = 29.
  CHECK(scores(snapshot, imagePod({"gcr.io/300"})) == std::vector<std::int64_t>{28});
  CHECK(scores(snapshot, imagePod({"gcr.io/300", "gcr.io/300"})) == std::vector<std::int64_t>{29});
  // A container whose image the node lacks still raises the maximum: 100 * 277 / 1977 = 14.
  CHECK(scores(snapshot, imagePod({"gcr.io/300", "gcr.io/none"})) == std::vector<std::int64_t>{14});
}

TEST_CASE("ImageLocality: normalizedImageName appends :latest only without a tag",
          "[scheduler][imagelocality]") {
  const std::string digest =
      "sha256:4813494d137e1631bba301d5acab6e7bb7aa74ce1185d456565ef51d737677b2";
  CHECK(normalizedImageName("root") == "root:latest");
  CHECK(normalizedImageName("gcr.io:5000/root") == "gcr.io:5000/root:latest");
  CHECK(normalizedImageName("library/nginx") == "library/nginx:latest");
  CHECK(normalizedImageName("root:tag") == "root:tag");
  CHECK(normalizedImageName("gcr.io:5000/root:tag") == "gcr.io:5000/root:tag");
  CHECK(normalizedImageName("root@" + digest) == "root@" + digest);
  CHECK(normalizedImageName("") == ":latest");
}

TEST_CASE("ImageLocality: the pod's name is normalised, the node's is matched as reported",
          "[scheduler][imagelocality]") {
  const std::string digest =
      "docker.io/library/nginx@"
      "sha256:4813494d137e1631bba301d5acab6e7bb7aa74ce1185d456565ef51d737677b2";
  const auto snapshot = testkit::snapshotOf({imageNode(
      "n", {{{"docker.io/library/nginx:1.19", digest}, 1000 * kMB}, {{"busybox"}, 1000 * kMB}})});
  CHECK(scores(snapshot, imagePod({digest})) == std::vector<std::int64_t>{100});
  CHECK(scores(snapshot, imagePod({"docker.io/library/nginx:1.19"})) ==
        std::vector<std::int64_t>{100});
  // "docker.io/library/nginx" is looked up as ":latest", which the node does not report.
  CHECK(scores(snapshot, imagePod({"docker.io/library/nginx"})) == std::vector<std::int64_t>{0});
  // Neither is a node's untagged name completed (upstream keys nodes by the names reported).
  CHECK(scores(snapshot, imagePod({"busybox"})) == std::vector<std::int64_t>{0});
}

TEST_CASE("ImageLocality: names longer than the inline buffer still match",
          "[scheduler][imagelocality]") {
  const std::string name = "registry.example.com/" + std::string(700, 'a');
  const auto snapshot = testkit::snapshotOf({imageNode("n", {{{name + ":latest"}, 1000 * kMB}})});
  CHECK(scores(snapshot, imagePod({name})) == std::vector<std::int64_t>{100});
  CHECK(scores(snapshot, imagePod({name + "b"})) == std::vector<std::int64_t>{0});
}

TEST_CASE("ImageLocality: the formula at its edges", "[scheduler][imagelocality]") {
  constexpr auto kMax = std::numeric_limits<std::int64_t>::max();
  CHECK(calculatePriority(0, 0) == 0);
  CHECK(calculatePriority(0, 1) == 0);
  CHECK(calculatePriority(kImageMinThreshold, 1) == 0);
  CHECK(calculatePriority(kImageMinThreshold + 1, 1) == 0);
  CHECK(calculatePriority(kImageMaxContainerThreshold, 1) == 100);
  CHECK(calculatePriority(kImageMaxContainerThreshold - 1, 1) == 99);
  CHECK(calculatePriority(kMax, 1) == 100);
  CHECK(calculatePriority(kImageMaxContainerThreshold, 2) == 49);
  CHECK(scaledImageScore(300 * kMB, 1, 2) == 150 * kMB);
  CHECK(scaledImageScore(300 * kMB, 2, 2) == 300 * kMB);
  CHECK(scaledImageScore(300 * kMB, 0, 2) == 0);
  CHECK(scaledImageScore(300 * kMB, 1, 0) == 0);
  // A bogus size saturates rather than overflowing.
  CHECK(scaledImageScore(kMax, 1, 1) == kMax);
  const auto snapshot =
      testkit::snapshotOf({imageNode("n", {{{"a:latest"}, kMax}, {{"b:latest"}, kMax}})});
  CHECK(scores(snapshot, imagePod({"a", "b"})) == std::vector<std::int64_t>{100});
}

TEST_CASE("ImageLocality: registered by upstream's name, Score only, no args",
          "[scheduler][imagelocality]") {
  PluginRegistry registry;
  registerImageLocality(registry);
  const PluginFactory* factory = registry.find("ImageLocality");
  REQUIRE(factory != nullptr);

  auto none = factory->decode_args(nullptr, "kubescheduler.config.k8s.io/v1beta1");
  REQUIRE(none);
  testkit::FakeHandle handle;
  auto plugin = factory->create(*none, handle);
  REQUIRE(plugin);
  CHECK((*plugin)->name() == "ImageLocality");
  CHECK(dynamic_cast<const ScorePlugin*>(plugin->get()) != nullptr);
  CHECK(dynamic_cast<const PreScorePlugin*>(plugin->get()) == nullptr);
  CHECK(dynamic_cast<const FilterPlugin*>(plugin->get()) == nullptr);
  CHECK_FALSE(dynamic_cast<const ScorePlugin*>(plugin->get())->hasNormalizeScore());

  const boost::json::value args = boost::json::parse(R"({"threshold": 1})");
  auto refused = factory->decode_args(&args, "kubescheduler.config.k8s.io/v1beta2");
  REQUIRE_FALSE(refused);
  CHECK(refused.error().message == "threshold: unknown field (plugin ImageLocality takes no args)");
}

}  // namespace
}  // namespace koord::roles::scheduler::upstream
