// Test fixtures for LoadAwareScheduling: the testkit's FrameworkHandle serving NodeMetrics as
// LoadAware's declared source, and builders for pods, nodes and NodeMetrics.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "koord/apis/node_metric.h"
#include "koord/kube/quantity.h"
#include "plugins/loadaware/load_aware.h"
#include "scheduler/builders.h"
#include "scheduler/fake_handle.h"

namespace loadaware_test {

using koord::roles::scheduler::CycleState;
using koord::roles::scheduler::Node;
using koord::roles::scheduler::NodeInfo;
using koord::roles::scheduler::PodInfo;
using koord::roles::scheduler::Resource;
using koord::roles::scheduler::Snapshot;
using koord::roles::scheduler::Status;
using koord::roles::scheduler::loadaware::kNodeMetricSource;
using TimePoint = std::chrono::system_clock::time_point;

inline const TimePoint kNow{std::chrono::seconds(1700000000)};

inline koord::kube::Quantity q(std::string_view text) {
  return koord::roles::scheduler::testkit::quantity(text);
}

inline koord::kube::ResourceList list(std::string_view cpu, std::string_view memory) {
  return koord::roles::scheduler::testkit::resourceList(cpu, memory);
}

inline Resource res(std::string_view cpu, std::string_view memory) {
  return koord::roles::scheduler::testkit::resources(cpu, memory);
}

/// The testkit's handle with NodeMetrics served from its FakeCluster under LoadAware's key
/// (declared before any plugin is built on it).
class FakeHandle : public koord::roles::scheduler::testkit::FakeHandle {
 public:
  FakeHandle() { fakeCluster().declare<koord::apis::NodeMetric>(kNodeMetricSource); }

  void setMetric(koord::apis::NodeMetric m) {
    std::string name = m.name;
    fakeCluster().setObject(kNodeMetricSource, std::move(name),
                            std::make_shared<const koord::apis::NodeMetric>(std::move(m)));
  }
  void removeMetric(const std::string& name) {
    fakeCluster().removeObject<koord::apis::NodeMetric>(kNodeMetricSource, name);
  }
};

/// A pod named `name` in "default", requests = limits unless limits are given.
inline PodInfo pod(std::string name, Resource requests, std::optional<Resource> limits = {}) {
  const std::string uid = "uid-" + name;
  koord::roles::scheduler::testkit::PodBuilder b(std::move(name));
  b.uid(uid).limits(limits ? *limits : requests).requests(std::move(requests));
  return b;
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
