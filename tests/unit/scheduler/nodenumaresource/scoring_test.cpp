// LeastAllocated and MostAllocated: the per-resource formulas and the weighted mean over the
// resources that take part.
#include <string>
#include <vector>

#include "fixture.h"
#include "plugins/nodenumaresource/scoring.h"

using koord::roles::scheduler::Resource;
using nnr::ScoringStrategyType;

TEST_CASE("per-resource scores", "[nodenumaresource]") {
  struct Case {
    std::int64_t requested, capacity, least, most;
  };
  const std::vector<Case> cases = {
      {0, 100, 100, 0},   {25, 100, 75, 25}, {100, 100, 0, 100},
      {150, 100, 0, 100}, {1, 3, 66, 33},    {5, 0, 0, 0},
  };
  for (const Case& c : cases) {
    INFO(c.requested << "/" << c.capacity);
    CHECK(nnr::leastRequestedScore(c.requested, c.capacity) == c.least);
    CHECK(nnr::mostRequestedScore(c.requested, c.capacity) == c.most);
  }
}

TEST_CASE("weighted node scores", "[nodenumaresource]") {
  auto res = [](std::int64_t milli, std::int64_t memory) {
    Resource r;
    r.milli_cpu = milli;
    r.memory = memory;
    return r;
  };
  const Resource allocatable = res(16000, 32000);
  struct Case {
    std::string name;
    ScoringStrategyType type;
    std::vector<koord::roles::scheduler::upstream::ResourceSpec> weights;
    Resource requested, pod;
    std::int64_t want;
  };
  const std::vector<Case> cases = {
      // cpu (16000-4000-4000)/16000 = 50, memory (32000-8000-8000)/32000 = 50.
      {"least, equal weights",
       ScoringStrategyType::kLeastAllocated,
       {{"cpu", 1}, {"memory", 1}},
       res(4000, 8000),
       res(4000, 8000),
       50},
      // cpu 25, memory 75; (25*3 + 75*1) / 4 = 37.
      {"least, cpu weighs 3",
       ScoringStrategyType::kLeastAllocated,
       {{"cpu", 3}, {"memory", 1}},
       res(8000, 0),
       res(4000, 8000),
       37},
      // cpu 75, memory 25; (75 + 25) / 2 = 50.
      {"most",
       ScoringStrategyType::kMostAllocated,
       {{"cpu", 1}, {"memory", 1}},
       res(8000, 0),
       res(4000, 8000),
       50},
      {"no weights", ScoringStrategyType::kMostAllocated, {}, res(8000, 0), res(4000, 8000), 0},
      // a scalar the pod does not request takes no part: cpu alone, 100 - 50 = 50.
      {"unrequested scalar left out",
       ScoringStrategyType::kLeastAllocated,
       {{"cpu", 1}, {"nvidia.com/gpu", 5}},
       res(4000, 0),
       res(4000, 0),
       50},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    const nnr::ResourceAllocationScorer scorer(c.type, c.weights);
    Resource alloc = allocatable;
    alloc.setScalar("nvidia.com/gpu", 8);
    CHECK(scorer.score(c.requested, alloc, c.pod) == c.want);
  }
}

TEST_CASE("NUMA scores read NUMA resources", "[nodenumaresource]") {
  nnr::NumaResources total, used, pod;
  total.set(nnr::NumaResource::kCpu, 52000);
  total.set(nnr::NumaResource::kMemory, 100);
  used.set(nnr::NumaResource::kCpu, 13000);
  used.set(nnr::NumaResource::kMemory, 50);
  pod.set(nnr::NumaResource::kCpu, 13000);
  const nnr::ResourceAllocationScorer most(ScoringStrategyType::kMostAllocated,
                                           {{"cpu", 1}, {"memory", 1}});
  // cpu 26000/52000 = 50, memory 50/100 = 50.
  CHECK(most.score(used, total, pod) == 50);
  const nnr::ResourceAllocationScorer least(ScoringStrategyType::kLeastAllocated,
                                            {{"cpu", 1}, {"hugepages-1Gi", 1}});
  // hugepages: a scalar the pod does not request, left out; cpu 50.
  CHECK(least.score(used, total, pod) == 50);
  CHECK(nnr::parseScoringStrategyType("MostAllocated") == ScoringStrategyType::kMostAllocated);
  CHECK_FALSE(nnr::parseScoringStrategyType("Balanced").has_value());
}
