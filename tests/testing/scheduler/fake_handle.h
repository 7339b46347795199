// A FrameworkHandle for plugin tests: a Snapshot the test builds and a ClusterView (its own
// FakeCluster unless given another); the profile's filter runs all pass.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "fake_cluster.h"
#include "framework/framework_handle.h"
#include "framework/snapshot.h"

namespace koord::roles::scheduler::testkit {

class FakeHandle : public FrameworkHandle {
 public:
  /// An empty snapshot.
  FakeHandle() = default;
  explicit FakeHandle(Snapshot snapshot) : snapshot_(std::move(snapshot)) {}
  /// Over `cluster` (not owned; it must outlive the handle) instead of the own FakeCluster.
  explicit FakeHandle(const ClusterView& cluster) : view_(&cluster) {}
  FakeHandle(const FakeHandle&) = delete;
  FakeHandle& operator=(const FakeHandle&) = delete;

  const Snapshot& snapshot() const override { return snapshot_; }
  const ClusterView& cluster() const override { return view_ ? *view_ : cluster_; }
  Status runFilterPlugins(const CycleState&, const PodInfo&, const NodeInfo&) const override;
  Status runFilterPluginsWithNominatedPods(const CycleState&, const PodInfo&,
                                           const NodeInfo&) const override;
  Status runPreFilterAddPod(CycleState&, const PodInfo&, const PodInfo&,
                            const NodeInfo&) const override;
  Status runPreFilterRemovePod(CycleState&, const PodInfo&, const PodInfo&,
                               const NodeInfo&) const override;

  /// The own FakeCluster (unused when the handle was given another ClusterView).
  FakeCluster& fakeCluster() { return cluster_; }
  void setSnapshot(Snapshot snapshot) { snapshot_ = std::move(snapshot); }

  /// The snapshot's node of that name; throws std::out_of_range when there is none.
  const NodeInfo& node(std::string_view name) const;
  /// Every node of the snapshot, in its order.
  std::vector<const NodeInfo*> nodes() const;

 private:
  Snapshot snapshot_;
  FakeCluster cluster_;
  const ClusterView* view_ = nullptr;
};

}  // namespace koord::roles::scheduler::testkit
