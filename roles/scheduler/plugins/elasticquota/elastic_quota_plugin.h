// Koordinator's ElasticQuota plugin: a pod is placed only while its quota's used stays within
// its runtime quota, preempts only inside its quota, and quotas over their runtime give pods back.
#pragma once

#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

#include "framework/framework_handle.h"
#include "framework/node_listener.h"
#include "framework/plugin.h"
#include "framework/plugin_controller.h"
#include "framework/pod_listener.h"
#include "koord/apis/elastic_quota.h"
#include "plugins/elasticquota/args.h"
#include "plugins/elasticquota/group_quota_manager.h"
#include "plugins/upstream/defaultpreemption/default_preemption.h"

namespace koord::metrics {
template <typename T>
class Family;
class Gauge;
}  // namespace koord::metrics

namespace koord::roles::scheduler::elasticquota {

/// The ClusterView key of the ElasticQuota informer the plugin declares.
inline constexpr std::string_view kElasticQuotaSource =
    "scheduling.sigs.k8s.io/v1alpha1/elasticquotas";

class ElasticQuotaPlugin final : public PreFilterPlugin,
                                 public PreFilterExtensions,
                                 public PostFilterPlugin,
                                 public ReservePlugin,
                                 public PodListener,
                                 public NodeListener,
                                 public PluginController {
 public:
  ElasticQuotaPlugin(std::shared_ptr<const ElasticQuotaArgs> args, FrameworkHandle& handle);
  ~ElasticQuotaPlugin() override;

  std::string_view name() const override { return kPluginName; }
  const ElasticQuotaArgs& args() const { return *args_; }
  GroupQuotaManager& quotas() { return manager_; }

  Status preFilter(CycleState& state, const PodInfo& pod) override;
  const PreFilterExtensions* preFilterExtensions() const override { return this; }
  Status addPod(CycleState& state, const PodInfo& pod_to_schedule, const PodInfo& pod_to_add,
                const NodeInfo& node) const override;
  Status removePod(CycleState& state, const PodInfo& pod_to_schedule, const PodInfo& pod_to_remove,
                   const NodeInfo& node) const override;
  /// Preemption inside the pod's quota: only its quota's preemptible pods of lower priority are
  /// victims, and enough of them to bring the quota within its limit.
  Status postFilter(CycleState& state, const PodInfo& pod, const NodeStatusMap& filtered,
                    PostFilterResult& result) override;
  Status reserve(CycleState& state, const PodInfo& pod, const std::string& node) override;
  void unreserve(CycleState& state, const PodInfo& pod, const std::string& node) override;

  void onPodAdd(const PodInfo& pod) override;
  void onPodUpdate(const PodInfo& old_pod, const PodInfo& pod) override;
  void onPodDelete(const PodInfo& pod) override;
  void onNodeAdd(const Node& node) override;
  void onNodeUpdate(const Node& old_node, const Node& node) override;
  void onNodeDelete(const Node& node) override;

  /// The status writer (every second: status.used and the figures' annotations of each
  /// ElasticQuota, and the quota metrics) and, with monitorAllQuotas, the revoke loop.
  void startController() override;
  void stopController() override;

  /// One status pass (tests call it directly): patches each quota whose figures changed.
  void syncStatusOnce();
  /// One revoke pass at `now`: evicts what GroupQuotaManager picks; returns the pods' keys.
  std::vector<std::string> revokeOnce(std::chrono::system_clock::time_point now);

 private:
  std::string quotaOf(const PodInfo& pod) const;
  void onQuota(const apis::ElasticQuota& quota);
  void setNodeAllocatable(const std::string& node, const Resource* allocatable);
  void recordMetrics(const apis::ElasticQuota& quota, const QuotaSummary& s);
  void loop();

  std::shared_ptr<const ElasticQuotaArgs> args_;
  FrameworkHandle& handle_;
  /// Thread-safe itself; const extension points (AddPod, RemovePod) ask it for a pod's quota.
  mutable GroupQuotaManager manager_;
  const ObjectSource<apis::ElasticQuota>* source_ = nullptr;
  std::unique_ptr<upstream::DefaultPreemption> preemption_;

  /// Each node's allocatable, summed into the manager's cluster total.
  std::mutex nodes_mu_;
  std::map<std::string, Resources, std::less<>> node_allocatable_;  // under nodes_mu_
  Resources total_;                                                 // under nodes_mu_

  metrics::Family<metrics::Gauge>* spec_metric_ = nullptr;
  metrics::Family<metrics::Gauge>* status_metric_ = nullptr;

  std::mutex mu_;
  std::condition_variable wake_;
  bool stopping_ = false;  // under mu_
  std::thread thread_;
};

}  // namespace koord::roles::scheduler::elasticquota
