// Builders for PodTopologySpread's table tests (the testkit's st.MakePod()/st.MakeNode()
// shapes), plus the testkit's FrameworkHandle serving a snapshot of the test's nodes and pods.
#pragma once

#include <catch2/catch.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "framework/node_info.h"
#include "framework/pod_info.h"
#include "koord/kube/labels.h"
#include "koord/kube/scheduling_match.h"
#include "plugins/upstream/helper/spread_selectors.h"
#include "plugins/upstream/podtopologyspread/pod_topology_spread.h"
#include "scheduler/builders.h"
#include "scheduler/fake_handle.h"

namespace pts_test {

using koord::roles::scheduler::Code;
using koord::roles::scheduler::CycleState;
using koord::roles::scheduler::Node;
using koord::roles::scheduler::NodeInfo;
using koord::roles::scheduler::NodeScore;
using koord::roles::scheduler::PodInfo;
using koord::roles::scheduler::Snapshot;
using koord::roles::scheduler::Status;
using koord::roles::scheduler::TopologySpreadConstraint;
using koord::roles::scheduler::UnsatisfiableConstraintAction;
using koord::roles::scheduler::upstream::PodTopologySpread;
using koord::roles::scheduler::upstream::PodTopologySpreadArgs;

inline constexpr auto kDoNotSchedule = UnsatisfiableConstraintAction::kDoNotSchedule;
inline constexpr auto kScheduleAnyway = UnsatisfiableConstraintAction::kScheduleAnyway;
inline constexpr std::string_view kHostname = "kubernetes.io/hostname";

/// A selector in the string syntax ("foo" is Exists, "foo=bar" an equality).
inline koord::kube::Selector sel(std::string_view text) {
  auto s = koord::kube::Selector::parse(text);
  REQUIRE(s.has_value());
  return *s;
}

using koord::roles::scheduler::testkit::makeNode;
using koord::roles::scheduler::testkit::makePod;
using koord::roles::scheduler::testkit::PodBuilder;

/// The usual 4-node, 2-zone cluster of the upstream tables: node-a/node-b in zone1 and
/// node-x/node-y in zone2, each with "zone" and "node" labels.
inline std::shared_ptr<const Node> zoneNode(std::string name, std::string zone) {
  return makeNode(name, {{"zone", std::move(zone)}, {"node", name}});
}

/// Serves a snapshot of `nodes` with each of `pods` on the node its node_name names.
class FakeHandle final : public koord::roles::scheduler::testkit::FakeHandle {
 public:
  FakeHandle(const std::vector<std::shared_ptr<const Node>>& nodes,
             const std::vector<PodInfo>& pods)
      : koord::roles::scheduler::testkit::FakeHandle(
            koord::roles::scheduler::testkit::snapshotOf(nodes, pods)) {}
};

using koord::roles::scheduler::upstream::helper::SpreadingSelector;

/// A Service, RC, ReplicaSet or StatefulSet as default spreading reads it.
inline SpreadingSelector spreadObject(std::string name, std::string_view selector,
                                      std::string ns = "default") {
  return {std::move(ns), std::move(name), sel(selector)};
}

/// What the spreading informers would hold.
struct SpreadingObjects {
  std::vector<SpreadingSelector> services = {};
  std::vector<SpreadingSelector> replica_sets = {};
  std::vector<SpreadingSelector> stateful_sets = {};
};

/// Puts `objects` where plugins built afterwards find them (the handle's cluster, under the
/// informers' keys).
inline void addSpreadingObjects(koord::roles::scheduler::testkit::FakeHandle& handle,
                                const SpreadingObjects& objects) {
  namespace helper = koord::roles::scheduler::upstream::helper;
  auto put = [&](std::string_view key, const std::vector<SpreadingSelector>& list) {
    auto& source = handle.fakeCluster().declare<SpreadingSelector>(key);
    for (const auto& o : list)
      source.set(o.key(), std::make_shared<const SpreadingSelector>(o));
  };
  put(helper::kServiceSource, objects.services);
  put(helper::kReplicaSetSource, objects.replica_sets);
  put(helper::kStatefulSetSource, objects.stateful_sets);
}

inline std::shared_ptr<const PodTopologySpreadArgs> listArgs(
    std::vector<koord::roles::scheduler::upstream::DefaultSpreadConstraint> constraints) {
  auto a = std::make_shared<PodTopologySpreadArgs>();
  a->defaulting_type = koord::roles::scheduler::upstream::SpreadDefaultingType::kList;
  a->default_constraints = std::move(constraints);
  return a;
}

inline std::shared_ptr<const PodTopologySpreadArgs> systemArgs() {
  return std::make_shared<PodTopologySpreadArgs>();
}

}  // namespace pts_test
