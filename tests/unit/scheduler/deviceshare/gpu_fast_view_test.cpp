// GpuFastView: what Filter and Score answer from the published view equals what the allocator
// answers from the node's whole state, on random nodes and requests.
#include "plugins/deviceshare/gpu_fast_view.h"

#include <catch2/catch.hpp>

#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "device_fixtures.h"
#include "plugins/deviceshare/allocator.h"

using namespace koord;
using namespace koord::roles::scheduler;
using namespace koord::roles::scheduler::deviceshare;
using namespace koord::roles::scheduler::deviceshare::testing;

namespace {

struct Published {
  GpuFastView::Read read = GpuFastView::Read::kUnknown;
  bool usable = false;
  GpuFastView::Snapshot view;
};

Published snapshotOf(const NodeDeviceState& node) {
  GpuFastView view;
  view.publish(node, true);
  Published out;
  out.read = view.read(out.view, true);
  out.usable = out.read == GpuFastView::Read::kUsable;
  return out;
}

// One of the request shapes Koordinator admits for GPUs, with random amounts.
PodDeviceRequests randomGpuRequest(std::mt19937& rng) {
  std::uniform_int_distribution<int> shape(0, 5);
  std::uniform_int_distribution<int> percent(1, 100);
  std::uniform_int_distribution<int> cards(1, 3);
  std::uniform_int_distribution<int> gib(1, 40);
  switch (shape(rng)) {
    case 0:
      return podRequests({{"koordinator.sh/gpu-core", std::to_string(percent(rng))},
                          {"koordinator.sh/gpu-memory-ratio", std::to_string(percent(rng))}});
    case 1:
      return podRequests({{"koordinator.sh/gpu-memory-ratio", std::to_string(percent(rng))}});
    case 2:
      return podRequests({{"koordinator.sh/gpu-memory", fmt::format("{}Gi", gib(rng))}});
    case 3:
      return podRequests({{"koordinator.sh/gpu-core", std::to_string(percent(rng))},
                          {"koordinator.sh/gpu-memory", fmt::format("{}Gi", gib(rng))}});
    case 4:
      return podRequests({{"nvidia.com/gpu", std::to_string(cards(rng))}});
    default:
      return podRequests({{"koordinator.sh/gpu", std::to_string(100 * cards(rng))}});
  }
}

}  // namespace

TEST_CASE("gpu fast view: Filter and Score agree with the whole state",
          "[scheduler][deviceshare]") {
  std::mt19937 rng(20261129);
  const DeviceScorer spread = DeviceScorer::defaults();
  DeviceScorer binpack_spec = DeviceScorer::defaults();
  binpack_spec.type = ScoringStrategyType::kMostAllocated;
  binpack_spec.weights[static_cast<std::size_t>(DeviceResource::kGPUCore)] = 2;
  const DeviceScorer binpack = binpack_spec;
  int fast_answers = 0;
  int refusals = 0;
  for (int round = 0; round < 200; ++round) {
    std::uniform_int_distribution<int> count(1, 17);
    const int n = count(rng);
    std::vector<std::string> devices;
    for (int i = 0; i < n; ++i) {
      devices.push_back(gpuJson({.minor = i,
                                 .health = rng() % 8 != 0,
                                 .numa = static_cast<int>(rng() % 2),
                                 .memory = round % 2 == 0 ? "16Gi" : "80Gi"}));
    }
    NodeDeviceState node = nodeWith(devices);
    // Pods placed by the allocator itself, so that what they hold is what Reserve would write.
    const int pods = static_cast<int>(rng() % 24);
    for (int p = 0; p < pods; ++p) {
      apis::DeviceAllocations got;
      if (allocateDevices(node, randomGpuRequest(rng), {.scorer = &spread}, got).ok())
        node.addPod(fmt::format("ns/p{}", p), got);
    }
    const Published published = snapshotOf(node);
    const GpuFastView::Snapshot& view = published.view;
    CHECK(published.usable ==
          (n <= static_cast<int>(GpuFastView::kMaxGpus) && node.gpuCardMemory().has_value()));
    for (int q = 0; q < 20; ++q) {
      const PodDeviceRequests request = randomGpuRequest(rng);
      INFO("round " << round << ", request " << q << ", " << n << " cards");
      const Status slow = checkDevices(node, request, {});
      if (published.usable) {
        const auto fast = checkGpusFast(view, request.of(DeviceType::kGPU));
        REQUIRE(fast.has_value());
        ++fast_answers;
        refusals += fast->ok() ? 0 : 1;
        CHECK(fast->code() == slow.code());
        CHECK(fast->message() == slow.message());
        for (const DeviceScorer* scorer : {&spread, &binpack}) {
          std::int64_t slow_score = -1;
          REQUIRE(scoreNode(node, request, *scorer, {}, slow_score).ok());
          const auto fast_score = scoreGpusFast(view, request.of(DeviceType::kGPU), *scorer);
          REQUIRE(fast_score.has_value());
          CHECK(*fast_score == slow_score);
        }
      }
    }
  }
  // Both answers were exercised, not only the easy one.
  CHECK(fast_answers > 1000);
  CHECK(refusals > 100);
  CHECK(refusals < fast_answers - 100);
}

TEST_CASE("gpu fast view: not usable without cards that offer anything",
          "[scheduler][deviceshare]") {
  NodeDeviceState node = gpus(2);
  CHECK(snapshotOf(node).usable);
  node.markAllUnhealthy();
  // The whole state words the refusal ("no healthy GPU Devices").
  CHECK_FALSE(snapshotOf(node).usable);
  CHECK_FALSE(snapshotOf(NodeDeviceState()).usable);
}

TEST_CASE("gpu fast view: a published change is what the next read sees",
          "[scheduler][deviceshare]") {
  NodeDeviceState node = gpus(1);
  GpuFastView view;
  GpuFastView::Snapshot snap;
  // Nothing published yet: the reader goes to the node's whole state.
  CHECK(view.read(snap, false) == GpuFastView::Read::kUnknown);
  view.publish(node, true);
  const PodDeviceRequests half = podRequests({{"koordinator.sh/gpu-memory-ratio", "60"}});
  REQUIRE(view.read(snap, false) == GpuFastView::Read::kUsable);
  CHECK(checkGpusFast(snap, half.of(DeviceType::kGPU))->ok());
  apis::DeviceAllocations got;
  REQUIRE(allocateDevices(node, half, {}, got).ok());
  REQUIRE(node.addPod("ns/a", got));
  view.publish(node, true);
  REQUIRE(view.read(snap, false) == GpuFastView::Read::kUsable);
  CHECK(checkGpusFast(snap, half.of(DeviceType::kGPU))->code() == Code::kUnschedulable);
  // The node's accounting dropped (its Node deleted): every pod passes there, as without one.
  view.publish(NodeDeviceState(), false);
  CHECK(view.read(snap, false) == GpuFastView::Read::kAbsent);
}
