// Test fixtures for LoadAwareScheduling: a fake FrameworkHandle whose ClusterView serves
// NodeMetrics from a map, a settable clock, and builders for pods, nodes and NodeMetrics.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "framework/framework_handle.h"
#include "framework/snapshot.h"
#include "koord/apis/node_metric.h"
#include "koord/kube/quantity.h"
#include "plugins/loadaware/load_aware.h"

namespace loadaware_test {

using koord::roles::scheduler::ClusterView;
using koord::roles::scheduler::CycleState;
using koord::roles::scheduler::DisruptionBudget;
using koord::roles::scheduler::FrameworkHandle;
using koord::roles::scheduler::Node;
using koord::roles::scheduler::NodeInfo;
using koord::roles::scheduler::PodInfo;
using koord::roles::scheduler::Resource;
using koord::roles::scheduler::Snapshot;
using koord::roles::scheduler::Status;
using TimePoint = std::chrono::system_clock::time_point;

inline const TimePoint kNow{std::chrono::seconds(1700000000)};

inline koord::kube::Quantity q(std::string_view text) {
  return koord::kube::Quantity::parse(text).value();
}

inline koord::kube::ResourceList list(std::string_view cpu, std::string_view memory) {
  return {{"cpu", q(cpu)}, {"memory", q(memory)}};
}

inline Resource res(std::string_view cpu, std::string_view memory) {
  return Resource::fromList(list(cpu, memory));
}

class FakeCluster : public ClusterView {
 public:
  std::shared_ptr<const koord::apis::NodeMetric> nodeMetric(std::string_view node) const override {
    auto it = metrics.find(std::string(node));
    return it == metrics.end() ? nullptr : it->second;
  }
  std::vector<DisruptionBudget> disruptionBudgets(std::string_view) const override { return {}; }

  std::map<std::string, std::shared_ptr<const koord::apis::NodeMetric>> metrics;
};

class FakeHandle : public FrameworkHandle {
 public:
  const Snapshot& snapshot() const override { return snapshot_; }
  const ClusterView& cluster() const override { return cluster_; }
  Status runFilterPlugins(const CycleState&, const PodInfo&, const NodeInfo&) const override {
    return Status::success();
  }
  Status runFilterPluginsWithNominatedPods(const CycleState&, const PodInfo&,
                                           const NodeInfo&) const override {
    return Status::success();
  }
  Status runPreFilterAddPod(CycleState&, const PodInfo&, const PodInfo&,
                            const NodeInfo&) const override {
    return Status::success();
  }
  Status runPreFilterRemovePod(CycleState&, const PodInfo&, const PodInfo&,
                               const NodeInfo&) const override {
    return Status::success();
  }

  void setMetric(koord::apis::NodeMetric m) {
    std::string name = m.name;
    cluster_.metrics[name] = std::make_shared<const koord::apis::NodeMetric>(std::move(m));
  }
  void removeMetric(const std::string& name) { cluster_.metrics.erase(name); }

 private:
  Snapshot snapshot_;
  FakeCluster cluster_;
};

/// A pod named `name` in "default", requests = limits unless limits are given.
inline PodInfo pod(std::string name, Resource requests, std::optional<Resource> limits = {}) {
  PodInfo p;
  p.namespace_ = "default";
  p.name = name;
  p.uid = "uid-" + name;
  p.limits = limits ? *limits : requests;
  p.requests = std::move(requests);
  return p;
}

/// 96 cores and 512Gi unless told otherwise.
inline std::shared_ptr<const Node> node(std::string name = "node-1",
                                        koord::kube::Labels annotations = {},
                                        Resource allocatable = res("96", "512Gi")) {
  auto n = std::make_shared<Node>();
  n->name = std::move(name);
  n->annotations = std::move(annotations);
  n->allocatable = allocatable;
  n->capacity = allocatable;
  return n;
}

inline NodeInfo nodeInfo(std::shared_ptr<const Node> n) {
  NodeInfo info;
  info.node = std::move(n);
  return info;
}

inline koord::apis::PodMetricInfo podMetric(
    std::string name, std::string_view cpu, std::string_view memory,
    koord::apis::PriorityClass priority = koord::apis::PriorityClass::kNone) {
  koord::apis::PodMetricInfo m;
  m.namespace_ = "default";
  m.name = std::move(name);
  m.pod_usage = list(cpu, memory);
  m.priority = priority;
  return m;
}

/// Reported `age` before kNow with a 60 s report interval.
inline koord::apis::NodeMetric metric(std::string_view cpu, std::string_view memory,
                                      std::chrono::seconds age = std::chrono::seconds(10),
                                      std::string name = "node-1") {
  koord::apis::NodeMetric m;
  m.name = std::move(name);
  m.collect_policy = koord::apis::NodeMetricCollectPolicy{};
  m.collect_policy->report_interval_seconds = 60;
  m.update_time = kNow - age;
  m.node_metric = koord::apis::NodeMetricInfo{};
  m.node_metric->node_usage = list(cpu, memory);
  return m;
}

}  // namespace loadaware_test
