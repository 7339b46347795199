// GpuFastView: what Filter and Score answer from the published view equals what the allocator
// answers from the node's whole state, on random nodes and requests.
#include "plugins/deviceshare/gpu_fast_view.h"

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <random>
#include <string>
#include <thread>
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
  out.read = view.read(out.view, GpuFastView::Part::kCards);
  // Score's read fills the sums (and reads the header alike).
  CHECK(view.read(out.view, GpuFastView::Part::kSums) == out.read);
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
        GpuDemand demand;
        const GpuDemandMemo memo;
        // gpuDemand refuses nothing the requests here ask; the locked path words a refusal.
        REQUIRE(memo.demandOn(view.card_memory, request.of(DeviceType::kGPU), demand));
        const Status fast = checkGpusFast(view, demand);
        ++fast_answers;
        refusals += fast.ok() ? 0 : 1;
        CHECK(fast.code() == slow.code());
        CHECK(fast.message() == slow.message());
        for (const DeviceScorer* scorer : {&spread, &binpack}) {
          std::int64_t slow_score = -1;
          REQUIRE(scoreNode(node, request, *scorer, {}, slow_score).ok());
          CHECK(scoreGpusFast(view, demand, *scorer) == slow_score);
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
  CHECK(view.read(snap, GpuFastView::Part::kCards) == GpuFastView::Read::kUnknown);
  view.publish(node, true);
  const PodDeviceRequests half = podRequests({{"koordinator.sh/gpu-memory-ratio", "60"}});
  GpuDemand demand;
  REQUIRE(
      gpuDemand(*node.gpuCardMemory(), half.of(DeviceType::kGPU), demand.per_device, demand.count)
          .ok());
  REQUIRE(view.read(snap, GpuFastView::Part::kCards) == GpuFastView::Read::kUsable);
  CHECK(checkGpusFast(snap, demand).ok());
  apis::DeviceAllocations got;
  REQUIRE(allocateDevices(node, half, {}, got).ok());
  REQUIRE(node.addPod("ns/a", got));
  view.publish(node, true);
  REQUIRE(view.read(snap, GpuFastView::Part::kCards) == GpuFastView::Read::kUsable);
  CHECK(checkGpusFast(snap, demand).code() == Code::kUnschedulable);
  // The node's accounting dropped (its Node deleted): every pod passes there, as without one.
  view.publish(NodeDeviceState(), false);
  CHECK(view.read(snap, GpuFastView::Part::kCards) == GpuFastView::Read::kAbsent);
}

TEST_CASE("gpu fast view: the demand memo answers for its own card memory only",
          "[scheduler][deviceshare]") {
  const PodDeviceRequests ratio = podRequests({{"koordinator.sh/gpu-memory-ratio", "50"}});
  const GpuDemandMemo memo;
  auto direct = [&](std::int64_t card_memory) {
    GpuDemand d;
    REQUIRE(gpuDemand(card_memory, ratio.of(DeviceType::kGPU), d.per_device, d.count).ok());
    return d;
  };
  const std::int64_t small = 16LL << 30;
  const std::int64_t large = 80LL << 30;
  GpuDemand got;
  // The first card memory is kept; another is computed, not served from the memo.
  for (std::int64_t card : {small, large, small, large}) {
    INFO(card);
    REQUIRE(memo.demandOn(card, ratio.of(DeviceType::kGPU), got));
    CHECK(got.per_device == direct(card).per_device);
    CHECK(got.count == direct(card).count);
  }
  CHECK(got.per_device.get(DeviceResource::kGPUMemory) == large / 2);
  // A refused demand is not kept: gpu-memory on cards that report none.
  const PodDeviceRequests bytes = podRequests({{"koordinator.sh/gpu-memory", "1Gi"}});
  const GpuDemandMemo other;
  CHECK_FALSE(other.demandOn(0, bytes.of(DeviceType::kGPU), got));
  REQUIRE(other.demandOn(small, bytes.of(DeviceType::kGPU), got));
  CHECK(got.per_device.get(DeviceResource::kGPUMemoryRatio) == 6);
}

TEST_CASE("gpu fast view: readers racing a writer see whole publications only",
          "[scheduler][deviceshare][concurrency]") {
  // The writer publishes states in which every card holds the same share; a read that mixed two
  // publications would show cards holding different shares.
  std::vector<NodeDeviceState> states;
  for (int share = 0; share <= 100; share += 10) {
    NodeDeviceState node = gpus(8);
    if (share > 0) {
      for (int card = 0; card < 8; ++card) {
        apis::DeviceAllocations a;
        a["gpu"].push_back(apis::DeviceAllocation{
            .minor = card,
            .resources = resources({{"koordinator.sh/gpu-core", std::to_string(share)},
                                    {"koordinator.sh/gpu-memory-ratio", std::to_string(share)}}),
            .vfs = {},
            .gpu_shared_resource_template = {}});
        REQUIRE(node.addPod(fmt::format("ns/p{}", card), a));
      }
    }
    states.push_back(std::move(node));
  }
  GpuFastView view;
  view.publish(states[0], true);
  std::atomic<bool> done{false};
  std::atomic<int> torn{0};
  std::atomic<long> reads{0};
  std::vector<std::thread> readers;
  for (int r = 0; r < 2; ++r) {
    readers.emplace_back([&] {
      GpuFastView::Snapshot snap;
      while (!done.load(std::memory_order_relaxed)) {
        // Filter's read: every card as one state left it.
        if (view.read(snap, GpuFastView::Part::kCards) != GpuFastView::Read::kUsable)
          continue;
        reads.fetch_add(1, std::memory_order_relaxed);
        for (std::uint32_t i = 1; i < snap.count; ++i) {
          if (snap.free[i].core != snap.free[0].core || snap.free[i].ratio != snap.free[0].ratio)
            torn.fetch_add(1, std::memory_order_relaxed);
        }
        // Score's read: the sums of one state (each card's core and ratio are equal there).
        if (view.read(snap, GpuFastView::Part::kSums) != GpuFastView::Read::kUsable)
          continue;
        const std::int64_t core = snap.free_sum.get(DeviceResource::kGPUCore);
        if (core != snap.free_sum.get(DeviceResource::kGPUMemoryRatio) || core % 8 != 0)
          torn.fetch_add(1, std::memory_order_relaxed);
      }
    });
  }
  // Publish until the readers have read a good many times (they may start late on a loaded
  // machine), within a bound.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  for (std::size_t round = 0; (round < 2000 || reads.load(std::memory_order_relaxed) < 1000) &&
                              std::chrono::steady_clock::now() < deadline;
       ++round)
    view.publish(states[round % states.size()], true);
  done = true;
  for (auto& t : readers)
    t.join();
  CHECK(torn.load() == 0);
  CHECK(reads.load() > 0);
}
