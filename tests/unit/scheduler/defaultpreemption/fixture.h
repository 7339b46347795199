// DefaultPreemption test fixtures: upstream's test pods and nodes, the testkit's recording
// ClusterView, and a runtime Framework (PrioritySort, NodeResourcesFit, fake filters) as the
// FrameworkHandle.
#pragma once

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "framework/framework_handle.h"
#include "framework/plugin_registry.h"
#include "framework/snapshot.h"
#include "plugins/upstream/defaultpreemption/default_preemption.h"
#include "plugins/upstream/defaultpreemption/register.h"
#include "plugins/upstream/noderesources/register.h"
#include "plugins/upstream/queuesort/register.h"
#include "runtime/framework.h"
#include "runtime/parallelizer.h"
#include "scheduler/fake_cluster.h"
#include "scheduler/fixed_factory.h"

namespace koord::roles::scheduler::upstream::dptest {

inline constexpr std::int32_t kNegPriority = -100;
inline constexpr std::int32_t kLowPriority = 0;
inline constexpr std::int32_t kMidPriority = 100;
inline constexpr std::int32_t kHighPriority = 1000;
inline constexpr std::int32_t kVeryHighPriority = 10000;

inline Resource res(std::int64_t milli_cpu, std::int64_t memory) {
  Resource r;
  r.milli_cpu = milli_cpu;
  r.memory = memory;
  return r;
}
inline const Resource kSmall = res(100, 100);
inline const Resource kMedium = res(200, 200);
inline const Resource kLarge = res(300, 300);
inline const Resource kVeryLarge = res(500, 500);

/// Upstream's epochTime<n>: n nanoseconds after the epoch.
inline std::chrono::system_clock::time_point epoch(int n) {
  return std::chrono::system_clock::time_point(
      std::chrono::duration_cast<std::chrono::system_clock::duration>(std::chrono::nanoseconds(n)));
}

struct PodSpec {
  std::string name{};
  std::int32_t priority = 0;
  Resource req{};
  std::string node{};
  std::optional<int> start{};  // epoch(start)
  kube::Labels labels{};
  bool terminating = false;
  std::string nominated{};
  bool preempt_never = false;
  std::string namespace_ = "default";
};

inline PodInfo makePod(const PodSpec& s) {
  PodInfo p;
  p.namespace_ = s.namespace_;
  p.name = s.name;
  p.uid = s.name;
  p.priority = s.priority;
  p.requests = s.req;
  p.non_zero_requests = s.req;
  p.node_name = s.node;
  if (s.start)
    p.start_time = epoch(*s.start);
  p.labels = s.labels;
  p.terminating = s.terminating;
  p.nominated_node_name = s.nominated;
  p.preempt_never = s.preempt_never;
  return p;
}

inline std::shared_ptr<const PodInfo> pod(const PodSpec& s) {
  return std::make_shared<const PodInfo>(makePod(s));
}

/// Nodes of upstream's Capacity(veryLargeRes) (32 pods) unless `capacity` says otherwise, with
/// each pod on the node its spec names.
inline Snapshot makeSnapshot(const std::vector<std::string>& names,
                             const std::vector<PodSpec>& pods, Resource capacity = kVeryLarge,
                             std::int64_t max_pods = 32) {
  std::vector<std::shared_ptr<const NodeInfo>> list;
  for (const auto& name : names) {
    auto node = std::make_shared<Node>();
    node->name = name;
    node->uid = name;
    node->labels["kubernetes.io/hostname"] = name;
    node->allocatable = capacity;
    node->allocatable.allowed_pod_number = max_pods;
    node->capacity = node->allocatable;
    auto info = std::make_shared<NodeInfo>();
    info->node = node;
    for (const auto& p : pods) {
      if (p.node == name)
        info->addPod(pod(p));
    }
    list.push_back(info);
  }
  return Snapshot(std::move(list));
}

/// ClusterView over fixtures (budgets, nominations), recording the API calls preemption makes.
using TestCluster = testkit::FakeCluster;

/// `{app: foo}`-style PDB in namespace "default".
inline DisruptionBudget budget(kube::Labels match, std::int32_t allowed,
                               std::vector<std::string> disrupted = {}) {
  DisruptionBudget b;
  b.namespace_ = "default";
  b.name = "pdb";
  b.selector = kube::Selector::fromSet(match);
  b.disruptions_allowed = allowed;
  b.disrupted_pods = std::move(disrupted);
  return b;
}

/// Upstream's FakeFilterPlugin: counts calls, answers a fixed code on every node.
class CountingFilter final : public FilterPlugin {
 public:
  Code code = Code::kSuccess;
  mutable std::atomic<int> calls{0};
  std::string_view name() const override { return "FakeFilter"; }
  Status filter(const CycleState&, const PodInfo&, const NodeInfo&) const override {
    ++calls;
    if (code == Code::kSuccess)
      return Status::success();
    return Status(code, "fake filter");
  }
};

/// Upstream's TrueFilter / FalseFilter / MatchFilter (fits the node named like the pod).
class TestFilter final : public FilterPlugin {
 public:
  enum class Kind { kTrue, kFalse, kMatch };
  explicit TestFilter(Kind kind) : kind_(kind) {}
  std::string_view name() const override {
    return kind_ == Kind::kTrue    ? "TrueFilter"
           : kind_ == Kind::kFalse ? "FalseFilter"
                                   : "MatchFilter";
  }
  Status filter(const CycleState&, const PodInfo& pod, const NodeInfo& node) const override {
    if (kind_ == Kind::kTrue || (kind_ == Kind::kMatch && pod.name == node.name()))
      return Status::success();
    return Status::unschedulable("injecting failure for pod " + pod.name);
  }

 private:
  Kind kind_;
};

class FakeBinder final : public BindPlugin {
 public:
  std::string_view name() const override { return "FakeBinder"; }
  void bind(std::shared_ptr<CycleState>, std::shared_ptr<const PodInfo>, const std::string&,
            StatusCallback done) override {
    done(Status::success());
  }
};

/// A Framework with PrioritySort, a fake binder, FakeFilter first and then `filters` (names of
/// "NodeResourcesFit", "TrueFilter", "FalseFilter", "MatchFilter"); PreFilter runs
/// NodeResourcesFit when it is among them. `post_filter` enables DefaultPreemption too.
struct Harness {
  TestCluster cluster;
  std::shared_ptr<CountingFilter> fake = std::make_shared<CountingFilter>();
  Parallelizer parallelizer{1};
  PluginRegistry registry;
  std::unique_ptr<Framework> fw;
  Snapshot snapshot;

  explicit Harness(std::vector<std::string> filters = {"NodeResourcesFit"},
                   bool post_filter = false) {
    registerPrioritySort(registry);
    registerNodeResourcesFit(registry);
    registerDefaultPreemption(registry);
    using testkit::fixedFactory;
    registry.add("FakeFilter", fixedFactory(fake));
    registry.add("TrueFilter", fixedFactory(std::make_shared<TestFilter>(TestFilter::Kind::kTrue)));
    registry.add("FalseFilter",
                 fixedFactory(std::make_shared<TestFilter>(TestFilter::Kind::kFalse)));
    registry.add("MatchFilter",
                 fixedFactory(std::make_shared<TestFilter>(TestFilter::Kind::kMatch)));
    registry.add("FakeBinder", fixedFactory(std::make_shared<FakeBinder>()));

    config::Profile p;
    p.scheduler_name = "default-scheduler";
    auto enable = [&](config::ExtensionPoint point, std::string name) {
      p.merged[point].enabled.push_back({std::move(name), 0, ""});
    };
    enable(config::ExtensionPoint::kQueueSort, "PrioritySort");
    enable(config::ExtensionPoint::kFilter, "FakeFilter");
    for (const auto& f : filters) {
      if (f == "NodeResourcesFit")
        enable(config::ExtensionPoint::kPreFilter, f);
      enable(config::ExtensionPoint::kFilter, f);
    }
    if (post_filter)
      enable(config::ExtensionPoint::kPostFilter, "DefaultPreemption");
    enable(config::ExtensionPoint::kBind, "FakeBinder");
    auto created = Framework::create(p, registry, cluster, parallelizer);
    if (!created)
      FAIL(created.error().message);
    fw = std::move(*created);
  }

  void use(Snapshot s) {
    snapshot = std::move(s);
    fw->setSnapshot(&snapshot);
  }

  /// A CycleState after PreFilter, as the scheduler hands PostFilter one.
  CycleState preFiltered(const PodInfo& p) {
    CycleState state;
    const Status s = fw->runPreFilterPlugins(state, p);
    INFO(s.message());
    REQUIRE(s.ok());
    return state;
  }

  std::shared_ptr<DefaultPreemption> plugin(std::int32_t percentage = 10,
                                            std::int32_t absolute = 100, std::uint64_t seed = 4) {
    auto args = std::make_shared<DefaultPreemptionArgs>();
    args->min_candidate_nodes_percentage = percentage;
    args->min_candidate_nodes_absolute = absolute;
    return std::make_shared<DefaultPreemption>(args, *fw, seed);
  }

  std::vector<const NodeInfo*> allNodes() const {
    std::vector<const NodeInfo*> out;
    for (const auto& n : snapshot.nodes())
      out.push_back(n.get());
    return out;
  }
};

/// "node: victim,victim (pdb n)" per candidate, sorted by node with victims sorted by name, as
/// upstream's test compares them.
inline std::vector<std::string> describe(const std::vector<Candidate>& candidates) {
  std::vector<std::string> out;
  for (const auto& c : candidates) {
    std::vector<std::string> names;
    for (const auto& v : c.victims)
      names.push_back(v->name);
    std::sort(names.begin(), names.end());
    std::string line = c.node + ":";
    for (std::size_t i = 0; i < names.size(); ++i)
      line += (i == 0 ? " " : ",") + names[i];
    if (c.num_pdb_violations != 0)
      line += " (pdb " + std::to_string(c.num_pdb_violations) + ")";
    out.push_back(line);
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace koord::roles::scheduler::upstream::dptest
