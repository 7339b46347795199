#include <catch2/catch.hpp>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "fixtures.h"
#include "framework/framework_handle.h"
#include "framework/snapshot.h"
#include "plugins/upstream/defaultbinder/default_binder.h"

namespace koord::roles::scheduler::upstream {
namespace {

// Records the bindings asked for and answers them from `fail_with`.
class RecordingCluster final : public ClusterView {
 public:
  std::shared_ptr<const apis::NodeMetric> nodeMetric(std::string_view) const override {
    return nullptr;
  }
  std::vector<DisruptionBudget> disruptionBudgets(std::string_view) const override { return {}; }
  void bindPod(std::shared_ptr<const PodInfo> pod, const std::string& node,
               ApiCallback done) const override {
    calls.emplace_back(pod->key(), node);
    if (fail_with.empty())
      done({});
    else
      done(kube::makeKubeError(fail_with));
  }

  mutable std::vector<std::pair<std::string, std::string>> calls;
  std::string fail_with;
};

class Handle final : public FrameworkHandle {
 public:
  explicit Handle(const ClusterView& cluster) : cluster_(cluster) {}
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

 private:
  Snapshot snapshot_;
  const ClusterView& cluster_;
};

std::optional<Status> bindOnce(DefaultBinder& binder, const std::string& node) {
  auto pod = std::make_shared<PodInfo>();
  pod->namespace_ = "shop";
  pod->name = "web-1";
  std::optional<Status> answer;
  binder.bind(std::make_shared<CycleState>(), pod, node, [&](Status s) { answer = std::move(s); });
  return answer;
}

TEST_CASE("DefaultBinder binds through the cluster view and passes its answer on",
          "[scheduler][upstream]") {
  RecordingCluster cluster;
  Handle handle(cluster);
  DefaultBinder binder(handle);
  CHECK(binder.name() == "DefaultBinder");

  auto ok = bindOnce(binder, "node-a");
  REQUIRE(ok.has_value());
  CHECK(ok->ok());
  REQUIRE(cluster.calls.size() == 1);
  CHECK(cluster.calls[0] == std::make_pair(std::string("shop/web-1"), std::string("node-a")));

  cluster.fail_with = "pods \"web-1\" is already assigned to node \"node-b\"";
  auto conflict = bindOnce(binder, "node-a");
  REQUIRE(conflict.has_value());
  CHECK(conflict->code() == Code::kError);
  CHECK(conflict->message() == cluster.fail_with);
}

TEST_CASE("DefaultBinder without an API client answers an error instead of binding",
          "[scheduler][upstream]") {
  struct NoApi final : ClusterView {
    std::shared_ptr<const apis::NodeMetric> nodeMetric(std::string_view) const override {
      return nullptr;
    }
    std::vector<DisruptionBudget> disruptionBudgets(std::string_view) const override { return {}; }
  } cluster;
  Handle handle(cluster);
  DefaultBinder binder(handle);
  auto answer = bindOnce(binder, "node-a");
  REQUIRE(answer.has_value());
  CHECK(answer->code() == Code::kError);
  CHECK_THAT(answer->message(), Catch::Contains("no API client"));
}

}  // namespace
}  // namespace koord::roles::scheduler::upstream
