// The scheduler's informers (pods not yet finished, nodes, NodeMetrics, PodDisruptionBudgets)
// and the handlers that feed their events to the cache and the queue (upstream eventhandlers.go).
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "framework/framework_handle.h"
#include "framework/node_info.h"
#include "framework/pod_info.h"
#include "koord/apis/node_metric.h"
#include "koord/kube/discovery.h"
#include "koord/kube/informer.h"

namespace koord::roles::scheduler {

class Scheduler;

/// Projects a PodDisruptionBudget of policy/v1 or policy/v1beta1 (the fields preemption reads
/// are the same in both); errors name the field.
kube::Expected<DisruptionBudget> decodeDisruptionBudget(const boost::json::value& v);

struct SchedulerInformers {
  SchedulerInformers(kube::RestClient& client, boost::asio::io_context& io);
  /// Stops the discovery first: its answer would create the PDB informer.
  ~SchedulerInformers();
  SchedulerInformers(const SchedulerInformers&) = delete;
  SchedulerInformers& operator=(const SchedulerInformers&) = delete;

  /// Routes every event to `scheduler`: bound pods to the cache, pending pods of its profiles
  /// to the queue (a pod moving from one to the other leaves the first), nodes and NodeMetrics
  /// to the cache. Before start().
  void connect(Scheduler& scheduler);
  /// Starts the informers. The PodDisruptionBudget one starts once discovery has said which
  /// version the API server serves: policy/v1 where it does (1.21+), else policy/v1beta1 (up to
  /// 1.24); with neither, preemption runs without budgets and that counts as synced.
  void start();
  void stop();
  bool waitForSync(std::chrono::milliseconds timeout) const;

  /// The namespace's budgets; none while discovery has not answered or no PDB API is served.
  std::vector<std::shared_ptr<const DisruptionBudget>> disruptionBudgets(
      std::string_view namespace_) const;

  /// Succeeded and Failed pods are left out by a field selector, as kube-scheduler's pod
  /// informer does: their resources are free and a finished pod's phase change is a delete.
  kube::Informer<PodInfo> pods;
  kube::Informer<Node> nodes;
  kube::Informer<apis::NodeMetric> node_metrics;

 private:
  enum class PdbApi { kUnknown, kServed, kNotServed };
  void onPdbVersion(std::optional<std::string> version);
  bool waitForPdbs(std::chrono::milliseconds timeout) const;

  kube::RestClient& client_;
  boost::asio::io_context& io_;
  kube::DiscoveryRetry pdb_discovery_;
  mutable std::mutex pdb_mu_;
  bool stopped_ = false;                                    // under pdb_mu_
  std::unique_ptr<kube::Informer<DisruptionBudget>> pdbs_;  // under pdb_mu_, set once
  std::atomic<PdbApi> pdb_api_{PdbApi::kUnknown};
};

}  // namespace koord::roles::scheduler
