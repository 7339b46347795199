// Nodes with images and pods with container images for ImageLocality's tests, shaped like
// kube-scheduler's image_locality_test.go fixtures, and a scorer over a snapshot.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "framework/cycle_state.h"
#include "framework/node_info.h"
#include "framework/pod_info.h"
#include "framework/snapshot.h"
#include "plugins/upstream/imagelocality/image_locality.h"
#include "scheduler/builders.h"
#include "scheduler/fake_handle.h"

namespace koord::roles::scheduler::upstream::imagetest {

inline constexpr std::int64_t kMB = 1024 * 1024;

inline std::shared_ptr<const Node> imageNode(std::string name,
                                             const std::vector<ContainerImage>& images) {
  auto n = std::make_shared<Node>();
  n->name = std::move(name);
  n->uid = n->name;
  n->images = NodeImages(images, n->name);
  return n;
}

inline PodInfo imagePod(std::vector<std::string> images) {
  PodInfo p = testkit::makePod("pod");
  p.container_images = std::move(images);
  return p;
}

/// Each node's ImageLocality score for `pod`, in the snapshot's order.
inline std::vector<std::int64_t> scores(const Snapshot& snapshot, const PodInfo& pod) {
  testkit::FakeHandle handle(snapshot);
  ImageLocality plugin(handle);
  CycleState state;
  std::vector<std::int64_t> out;
  for (const NodeInfo* node : handle.nodes()) {
    std::int64_t s = -1;
    const Status status = plugin.score(state, pod, *node, s);
    REQUIRE(status.ok());
    out.push_back(s);
    // The framework leaves the plugin out when it says every node scores alike: they must.
    if (plugin.scoresEveryNodeAlike(pod))
      CHECK(s == out.front());
  }
  return out;
}

// kube-scheduler's fixtures (image_locality_test.go), sizes in MiB.
inline std::vector<ContainerImage> node403002000() {
  return {{{"gcr.io/40:latest", "gcr.io/40:v1", "gcr.io/40:v1"}, 40 * kMB},
          {{"gcr.io/300:latest", "gcr.io/300:v1"}, 300 * kMB},
          {{"gcr.io/2000:latest"}, 2000 * kMB}};
}
inline std::vector<ContainerImage> node25010() {
  return {{{"gcr.io/250:latest"}, 250 * kMB}, {{"gcr.io/10:latest", "gcr.io/10:v1"}, 10 * kMB}};
}
inline std::vector<ContainerImage> node60040900() {
  return {{{"gcr.io/600:latest"}, 600 * kMB},
          {{"gcr.io/40:latest"}, 40 * kMB},
          {{"gcr.io/900:latest"}, 900 * kMB}};
}
inline std::vector<ContainerImage> node300600900() {
  return {{{"gcr.io/300:latest"}, 300 * kMB},
          {{"gcr.io/600:latest"}, 600 * kMB},
          {{"gcr.io/900:latest"}, 900 * kMB}};
}
inline std::vector<ContainerImage> node400030() {
  return {{{"gcr.io/4000:latest"}, 4000 * kMB}, {{"gcr.io/30:latest"}, 30 * kMB}};
}
inline std::vector<ContainerImage> node203040() {
  return {{{"gcr.io/20:latest"}, 20 * kMB},
          {{"gcr.io/30:latest"}, 30 * kMB},
          {{"gcr.io/40:latest"}, 40 * kMB}};
}

}  // namespace koord::roles::scheduler::upstream::imagetest
