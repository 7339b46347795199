// The scheduler's informers (pods not yet finished, nodes, NodeMetrics, PodDisruptionBudgets)
// and the handlers that feed their events to the cache and the queue (upstream eventhandlers.go).
#pragma once

#include <chrono>

#include "framework/framework_handle.h"
#include "framework/node_info.h"
#include "framework/pod_info.h"
#include "koord/apis/node_metric.h"
#include "koord/kube/informer.h"

namespace koord::roles::scheduler {

class Scheduler;

/// Projects a policy PodDisruptionBudget; errors name the field.
kube::Expected<DisruptionBudget> decodeDisruptionBudget(const boost::json::value& v);

struct SchedulerInformers {
  SchedulerInformers(kube::RestClient& client, boost::asio::io_context& io);

  /// Routes every event to `scheduler`: bound pods to the cache, pending pods of its profiles
  /// to the queue (a pod moving from one to the other leaves the first), nodes and NodeMetrics
  /// to the cache. Before start().
  void connect(Scheduler& scheduler);
  void start();
  void stop();
  bool waitForSync(std::chrono::milliseconds timeout) const;

  /// Succeeded and Failed pods are left out by a field selector, as kube-scheduler's pod
  /// informer does: their resources are free and a finished pod's phase change is a delete.
  kube::Informer<PodInfo> pods;
  kube::Informer<Node> nodes;
  kube::Informer<apis::NodeMetric> node_metrics;
  kube::Informer<DisruptionBudget> pdbs;
};

}  // namespace koord::roles::scheduler
