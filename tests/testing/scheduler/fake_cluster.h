// A ClusterView for tests, benchmarks and fuzzers: plugin-declared objects, PDBs and nominated
// pods as the test sets them, and the API calls (bind, delete, clear nomination) recorded.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "framework/framework_handle.h"
#include "map_object_source.h"

namespace koord::roles::scheduler::testkit {

class FakeCluster : public ClusterView {
 public:
  /// The source of `key`, made empty on first use: declare what a plugin looks up before
  /// building it (plugins resolve their sources once, when built).
  template <typename T>
  MapObjectSource<T>& declare(std::string_view key) {
    auto it = sources_.find(key);
    if (it == sources_.end())
      it = sources_.emplace(std::string(key), std::make_unique<MapObjectSource<T>>()).first;
    auto* typed = dynamic_cast<MapObjectSource<T>*>(it->second.get());
    if (typed == nullptr)
      throw std::logic_error("FakeCluster: " + std::string(key) + " holds another type");
    return *typed;
  }
  template <typename T>
  void setObject(std::string_view key, std::string name, std::shared_ptr<const T> obj) {
    declare<T>(key).set(std::move(name), std::move(obj));
  }
  template <typename T>
  void removeObject(std::string_view key, std::string_view name) {
    declare<T>(key).remove(name);
  }

  // Filled by the test: budgets by namespace, nominated pods by node.
  std::map<std::string, std::vector<DisruptionBudget>, std::less<>> budgets;
  std::map<std::string, std::vector<std::shared_ptr<const PodInfo>>, std::less<>> nominated;
  /// anyNominatedPods() answers true when set, even with `nominated` empty.
  bool any_nominated = false;

  // The API: every call recorded (pod key and node for bindings, pod names for the others),
  // answered with success unless told otherwise.
  std::string bind_error;             // non-empty: bindPod answers this error
  std::set<std::string> fail_delete;  // pod names whose deletion fails
  bool fail_clear = false;
  mutable std::vector<std::pair<std::string, std::string>> bound;
  mutable std::vector<std::string> deleted;
  mutable std::vector<std::string> cleared;

  const AnyObjectSource* objectSource(std::string_view key) const override;
  std::vector<DisruptionBudget> disruptionBudgets(std::string_view namespace_) const override;
  std::vector<std::shared_ptr<const PodInfo>> nominatedPodsForNode(
      std::string_view node) const override;
  bool anyNominatedPods() const override;
  void bindPod(std::shared_ptr<const PodInfo> pod, const std::string& node,
               ApiCallback done) const override;
  kube::Expected<void> deletePod(const PodInfo& pod) const override;
  kube::Expected<void> clearNominatedNodeName(const PodInfo& pod) const override;

 private:
  std::map<std::string, std::unique_ptr<AnyObjectSource>, std::less<>> sources_;
};

}  // namespace koord::roles::scheduler::testkit
