#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "fixtures.h"
#include "framework/node_images.h"

namespace koord::roles::scheduler::upstream {
namespace {

using namespace imagetest;

TEST_CASE("NodeImages: nodes share one interned copy of each name", "[scheduler][imagelocality]") {
  const std::size_t before = internedImageNames();
  {
    const NodeImages a(node403002000(), "a");
    const NodeImages b(node403002000(), "b");
    // gcr.io/40:v1 is reported twice: five distinct names for both nodes together.
    CHECK(internedImageNames() == before + 5);
    REQUIRE(a.names().size() == 5);
    REQUIRE(b.names().size() == 5);
    for (std::size_t i = 0; i < a.names().size(); ++i)
      CHECK(a.names()[i].id == b.names()[i].id);
    CHECK(a.imageCount() == 3);
    const auto* v1 = a.find("gcr.io/40:v1");
    REQUIRE(v1 != nullptr);
    CHECK(imageName(v1->id) == "gcr.io/40:v1");
    CHECK(a.sizeBytes(*v1) == 40 * kMB);
  }
  // The last holder gone, the names go too.
  CHECK(internedImageNames() == before);
}

TEST_CASE("NodeImages: a name listed by two images keeps the first image's size",
          "[scheduler][imagelocality]") {
  const NodeImages images({{{"x:1", "x:1"}, 10}, {{"y:1", "x:1"}, 20}, {{}, 30}});
  CHECK(images.imageCount() == 3);
  CHECK(images.names().size() == 2);
  REQUIRE(images.find("x:1") != nullptr);
  CHECK(images.sizeBytes(*images.find("x:1")) == 10);
  REQUIRE(images.find("y:1") != nullptr);
  CHECK(images.sizeBytes(*images.find("y:1")) == 20);
}

TEST_CASE("NodeImages: find matches the exact name only", "[scheduler][imagelocality]") {
  const NodeImages images({{{"gcr.io/a:1"}, 1}});
  CHECK(images.find("gcr.io/a:1") != nullptr);
  CHECK(images.find("gcr.io/a:") == nullptr);
  CHECK(images.find("gcr.io/a:1 ") == nullptr);
  CHECK(images.find("") == nullptr);
  CHECK(NodeImages().find("gcr.io/a:1") == nullptr);
  CHECK(NodeImages().empty());
}

TEST_CASE("NodeImages: copies keep names alive, moves hand them over",
          "[scheduler][imagelocality]") {
  const std::size_t before = internedImageNames();
  auto original = std::make_unique<NodeImages>(std::vector<ContainerImage>{{{"copy/me:1"}, 7}});
  NodeImages copy(*original);
  NodeImages assigned;
  assigned = copy;
  original.reset();
  CHECK(internedImageNames() == before + 1);
  REQUIRE(copy.find("copy/me:1") != nullptr);
  CHECK(imageName(copy.find("copy/me:1")->id) == "copy/me:1");

  NodeImages moved(std::move(copy));
  CHECK(copy.empty());  // NOLINT(bugprone-use-after-move): moved-from is empty by contract
  CHECK(moved.find("copy/me:1") != nullptr);
  moved = std::move(assigned);
  CHECK(internedImageNames() == before + 1);
  moved = NodeImages();
  CHECK(internedImageNames() == before);
}

TEST_CASE("NodeImages: sameNames compares the names, not the sizes", "[scheduler][imagelocality]") {
  const NodeImages a({{{"s:1", "s@sha256:1"}, 10}});
  CHECK(a.sameNames(NodeImages({{{"s@sha256:1", "s:1"}, 99}})));
  CHECK(a.sameNames(NodeImages({{{"s:1"}, 10}, {{"s@sha256:1"}, 10}})));
  CHECK_FALSE(a.sameNames(NodeImages({{{"s:1"}, 10}})));
  CHECK_FALSE(a.sameNames(NodeImages()));
  CHECK(NodeImages().sameNames(NodeImages()));
}

TEST_CASE("ImageNodeCounts: a published copy never changes", "[scheduler][imagelocality]") {
  const NodeImages images({{{"count/me:1"}, 1}});
  const ImageNameId id = images.names()[0].id;
  ImageNodeCounts counts;
  CHECK(counts.count(id) == 0);
  counts.add(images, +1);
  const auto first = counts.publish();
  counts.add(images, +1);
  const auto second = counts.publish();
  counts.add(images, -1);
  counts.add(images, -1);
  counts.add(images, -1);  // never below zero
  const auto third = counts.publish();
  CHECK(first->count(id) == 1);
  CHECK(second->count(id) == 2);
  CHECK(third->count(id) == 0);
  CHECK(counts.count(id) == 0);
  CHECK(third->count(id + 5000) == 0);
}

TEST_CASE("NodeImages: interning and releasing from many threads at once",
          "[scheduler][imagelocality]") {
  const std::size_t before = internedImageNames();
  std::atomic<int> mismatches{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([t, &mismatches] {
      for (int i = 0; i < 300; ++i) {
        const std::string shared = "shared/" + std::to_string(i % 17) + ":1";
        const std::string own = "own/" + std::to_string(t) + "/" + std::to_string(i) + ":1";
        const NodeImages images({{{shared, own}, i}});
        const NodeImages copy = images;
        for (const std::string& name : {shared, own}) {
          const auto* n = copy.find(name);
          if (n == nullptr || imageName(n->id) != name)
            ++mismatches;
        }
      }
    });
  }
  for (auto& th : threads)
    th.join();
  CHECK(mismatches == 0);
  CHECK(internedImageNames() == before);
}

}  // namespace
}  // namespace koord::roles::scheduler::upstream
