// One consistent view of what the states informer knows, taken once per QoS round, so strategies
// can be driven by the informer in the koordlet and by hand-built states in tests.
#pragma once

#include <memory>
#include <vector>

#include "koord/apis/node_metric.h"
#include "statesinformer/kubelet_config.h"
#include "statesinformer/node_info.h"
#include "statesinformer/pod_meta.h"

namespace koord::roles::koordlet {

struct StatesSnapshot {
  std::shared_ptr<const NodeInfo> node;
  std::shared_ptr<const NodeSLOInfo> node_slo;
  std::shared_ptr<const apis::NodeMetric> node_metric;
  std::shared_ptr<const std::vector<PodMeta>> pods;
  /// Node seen and pods listed: only then may a strategy act.
  bool synced = false;
  /// The kubelet's configuration from its /configz; null until read, and when not queried.
  std::shared_ptr<const KubeletConfig> kubelet_config;
  /// The koordlet queries /configz (-disable-query-kubelet-config=false over HTTPS): what
  /// depends on the kubelet's CPU manager waits for kubelet_config.
  bool kubelet_config_queried = false;
};

}  // namespace koord::roles::koordlet
