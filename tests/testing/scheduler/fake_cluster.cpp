#include "fake_cluster.h"

namespace koord::roles::scheduler::testkit {

const AnyObjectSource* FakeCluster::objectSource(std::string_view key) const {
  auto it = sources_.find(key);
  return it == sources_.end() ? nullptr : it->second.get();
}

std::vector<DisruptionBudget> FakeCluster::disruptionBudgets(std::string_view namespace_) const {
  auto it = budgets.find(namespace_);
  return it == budgets.end() ? std::vector<DisruptionBudget>{} : it->second;
}

std::vector<std::shared_ptr<const PodInfo>> FakeCluster::nominatedPodsForNode(
    std::string_view node) const {
  auto it = nominated.find(node);
  return it == nominated.end() ? std::vector<std::shared_ptr<const PodInfo>>{} : it->second;
}

bool FakeCluster::anyNominatedPods() const {
  return any_nominated || !nominated.empty();
}

void FakeCluster::bindPod(std::shared_ptr<const PodInfo> pod, const std::string& node,
                          ApiCallback done) const {
  bound.emplace_back(pod->key(), node);
  if (bind_error.empty())
    done({});
  else
    done(kube::makeKubeError(bind_error));
}

kube::Expected<void> FakeCluster::deletePod(const PodInfo& pod) const {
  deleted.push_back(pod.name);
  if (fail_delete.contains(pod.name))
    return kube::makeKubeError("pods \"" + pod.name + "\" is forbidden");
  return {};
}

kube::Expected<void> FakeCluster::clearNominatedNodeName(const PodInfo& pod) const {
  cleared.push_back(pod.name);
  if (fail_clear)
    return kube::makeKubeError("the server is unavailable");
  return {};
}

}  // namespace koord::roles::scheduler::testkit
