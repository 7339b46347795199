// A FrameworkHandle over a Snapshot the test builds, for plugin tests: it records what a plugin
// asked to evict, applies a filter the test chooses and the same caps as the real evictor
// (per node, per namespace, total), and evicts nothing for real.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "framework/plugin.h"
#include "framework/types.h"

namespace koord::roles::descheduler::testkit {

/// Records what an Evict plugin asked the API server to evict.
struct RecordingApi final : PodEvictionApi {
  std::vector<std::string> evicted;
  bool answer = true;
  bool evict(const Pod& pod, const EvictOptions&) override {
    evicted.push_back(pod.key());
    return answer;
  }
};

class FakeHandle final : public FrameworkHandle {
 public:
  Snapshot snap;
  RecordingApi api;
  /// Pods evicted, in order, as namespace/name, and the options each was evicted with.
  std::vector<std::string> evicted;
  std::vector<EvictOptions> options;
  /// Defaults: every pod may go.
  std::function<bool(const Pod&)> filter_fn = [](const Pod&) { return true; };
  std::function<bool(const Pod&)> pre_eviction_fn = [](const Pod&) { return true; };
  std::optional<std::size_t> max_per_node, max_per_namespace, max_total;

  const Snapshot& snapshot() const override { return snap; }
  bool filter(const Pod& pod) const override { return filter_fn(pod); }
  bool preEvictionFilter(const Pod& pod) const override { return pre_eviction_fn(pod); }
  bool evict(const Pod& pod, const EvictOptions& o) override {
    if (nodeLimitReached(pod.node_name) || totalLimitReached())
      return false;
    if (max_per_namespace && per_namespace_[pod.namespace_] >= *max_per_namespace)
      return false;
    ++per_node_[pod.node_name];
    ++per_namespace_[pod.namespace_];
    evicted.push_back(pod.key());
    options.push_back(o);
    return true;
  }
  bool nodeLimitReached(std::string_view node) const override {
    auto it = per_node_.find(std::string(node));
    return max_per_node && it != per_node_.end() && it->second >= *max_per_node;
  }
  bool totalLimitReached() const override { return max_total && evicted.size() >= *max_total; }
  /// Evict plugins' API calls land in `api.evicted` (namespace/name); `api.answer` is returned.
  PodEvictionApi& podEvictor() override { return api; }

  /// Nodes of the snapshot as the plugins receive them.
  std::vector<const Node*> nodes() const {
    std::vector<const Node*> out;
    for (const auto& n : snap.nodes)
      out.push_back(n.get());
    return out;
  }

 private:
  std::map<std::string, std::size_t> per_node_, per_namespace_;
};

/// A Ready node with `milli_cpu`, `memory` bytes and room for 110 pods.
inline std::shared_ptr<Node> makeNode(std::string name, std::int64_t milli_cpu = 4000,
                                      std::int64_t memory = std::int64_t{8} << 30) {
  auto n = std::make_shared<Node>();
  n->name = std::move(name);
  n->uid = "uid-" + n->name;
  n->allocatable = {{"cpu", milli_cpu}, {"memory", memory}, {"pods", 110}};
  return n;
}

/// A Running pod in `ns` bound to `node`, owned by ReplicaSet `rs` (none when empty), requesting
/// `milli_cpu` and `memory` bytes.
inline std::shared_ptr<Pod> makePod(std::string name, std::string node,
                                    std::int64_t milli_cpu = 100,
                                    std::int64_t memory = std::int64_t{128} << 20,
                                    std::string rs = "rs", std::string ns = "default") {
  auto p = std::make_shared<Pod>();
  p->namespace_ = std::move(ns);
  p->name = std::move(name);
  p->uid = "uid-" + p->name;
  p->node_name = std::move(node);
  p->phase = PodPhase::kRunning;
  p->requests = {{"cpu", milli_cpu}, {"memory", memory}};
  if (!rs.empty())
    p->owner_refs.push_back({"apps/v1", "ReplicaSet", rs, "uid-" + rs, true});
  return p;
}

}  // namespace koord::roles::descheduler::testkit
