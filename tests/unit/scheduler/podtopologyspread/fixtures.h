// Builders for PodTopologySpread's table tests, shaped like kube-scheduler's st.MakePod() and
// st.MakeNode(), plus a fake FrameworkHandle serving a snapshot of the test's nodes and pods.
#pragma once

#include <catch2/catch.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "framework/framework_handle.h"
#include "framework/node_info.h"
#include "framework/pod_info.h"
#include "framework/snapshot.h"
#include "koord/kube/labels.h"
#include "koord/kube/scheduling_match.h"
#include "plugins/upstream/podtopologyspread/pod_topology_spread.h"

namespace pts_test {

using koord::roles::scheduler::ClusterView;
using koord::roles::scheduler::Code;
using koord::roles::scheduler::CycleState;
using koord::roles::scheduler::DisruptionBudget;
using koord::roles::scheduler::FrameworkHandle;
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

class PodBuilder {
 public:
  explicit PodBuilder(std::string name) {
    pod_.namespace_ = std::string("default");
    pod_.uid = name;
    pod_.name = std::move(name);
  }
  PodBuilder& label(std::string key, std::string value) {
    pod_.labels[std::move(key)] = std::move(value);
    return *this;
  }
  PodBuilder& ns(std::string namespace_) {
    pod_.namespace_ = std::move(namespace_);
    return *this;
  }
  PodBuilder& node(std::string name) {
    pod_.node_name = std::move(name);
    return *this;
  }
  PodBuilder& terminating() {
    pod_.terminating = true;
    return *this;
  }
  PodBuilder& controller(std::string kind, std::string name) {
    pod_.controller_kind = std::move(kind);
    pod_.controller_name = std::move(name);
    return *this;
  }
  PodBuilder& spread(std::int32_t max_skew, std::string key, UnsatisfiableConstraintAction action,
                     koord::kube::Selector selector) {
    pod_.topology_spread_constraints.push_back(
        TopologySpreadConstraint{max_skew, std::move(key), action, std::move(selector)});
    return *this;
  }
  PodBuilder& nodeAffinity(std::string key, koord::kube::NodeSelectorOperator op,
                           std::vector<std::string> values) {
    koord::kube::NodeSelectorTerm term;
    term.match_expressions.push_back({std::move(key), op, std::move(values)});
    koord::kube::NodeAffinity affinity;
    affinity.required = koord::kube::NodeSelector{{std::move(term)}};
    pod_.node_affinity = std::move(affinity);
    return *this;
  }
  PodBuilder& nodeSelector(std::string key, std::string value) {
    pod_.node_selector[std::move(key)] = std::move(value);
    return *this;
  }
  PodInfo obj() const { return pod_; }
  operator PodInfo() const { return pod_; }

 private:
  PodInfo pod_;
};

inline PodBuilder makePod(std::string name) {
  return PodBuilder(std::move(name));
}

inline std::shared_ptr<const Node> makeNode(std::string name, koord::kube::Labels labels) {
  auto n = std::make_shared<Node>();
  n->name = std::move(name);
  n->uid = n->name;
  n->labels = std::move(labels);
  return n;
}

/// The usual 4-node, 2-zone cluster of the upstream tables: node-a/node-b in zone1 and
/// node-x/node-y in zone2, each with "zone" and "node" labels.
inline std::shared_ptr<const Node> zoneNode(std::string name, std::string zone) {
  return makeNode(name, {{"zone", std::move(zone)}, {"node", name}});
}

class FakeCluster final : public ClusterView {
 public:
  std::shared_ptr<const koord::apis::NodeMetric> nodeMetric(std::string_view) const override {
    return nullptr;
  }
  std::vector<DisruptionBudget> disruptionBudgets(std::string_view) const override { return {}; }
};

/// Serves a snapshot of `nodes` with each of `pods` on the node its node_name names.
class FakeHandle final : public FrameworkHandle {
 public:
  FakeHandle(const std::vector<std::shared_ptr<const Node>>& nodes,
             const std::vector<PodInfo>& pods) {
    std::vector<std::shared_ptr<const NodeInfo>> infos;
    for (const auto& n : nodes) {
      auto info = std::make_shared<NodeInfo>();
      info->node = n;
      for (const auto& p : pods) {
        if (p.node_name == n->name)
          info->addPod(std::make_shared<const PodInfo>(p));
      }
      infos.push_back(std::move(info));
    }
    snapshot_ = Snapshot(std::move(infos));
  }

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

  const NodeInfo& node(std::string_view name) const {
    const NodeInfo* info = snapshot_.get(name);
    REQUIRE(info != nullptr);
    return *info;
  }
  /// Every node of the snapshot, in the order given.
  std::vector<const NodeInfo*> nodes() const {
    std::vector<const NodeInfo*> out;
    for (const auto& n : snapshot_.nodes())
      out.push_back(n.get());
    return out;
  }

 private:
  Snapshot snapshot_;
  FakeCluster cluster_;
};

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
