// The koordlet's view of its own Node and NodeSLO: what the collectors, the reporter and the QoS
// strategies read (capacity, labels, kubelet address; the SLO strategies as JSON objects).
#pragma once

#include <boost/json/fwd.hpp>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "koord/kube/error.h"
#include "koord/kube/labels.h"
#include "koord/kube/quantity.h"
#include "statesinformer/host_application.h"

namespace koord::roles::koordlet {

struct NodeInfo {
  std::string name;
  /// metadata.uid: the Device object's owner reference names the Node by it.
  std::string uid;
  kube::Labels labels;
  kube::Labels annotations;
  kube::ResourceList capacity;
  kube::ResourceList allocatable;
  /// status.addresses as (type, address).
  std::vector<std::pair<std::string, std::string>> addresses;
  /// status.daemonEndpoints.kubeletEndpoint.Port; 0 when unset.
  int kubelet_port = 0;
};

kube::Expected<NodeInfo> decodeNodeInfo(const boost::json::value& v);

/// The address of `preferred_type` (InternalIP by default), else the first one listed; empty
/// when the node lists none.
std::string kubeletAddress(const NodeInfo& node, std::string_view preferred_type);

/// NodeSLO spec for this node, as the manager merged it; each strategy object kept as JSON and
/// decoded by the strategy that reads it (so a newer field never breaks the informer).
struct NodeSLOInfo {
  std::string name;
  std::shared_ptr<const boost::json::object> resource_used_threshold_with_be;
  std::shared_ptr<const boost::json::object> resource_qos_strategy;
  std::shared_ptr<const boost::json::object> cpu_burst_strategy;
  std::shared_ptr<const boost::json::object> system_strategy;
  /// spec.hostApplications, typed: the collector, the reporter and CPU suppression all read it,
  /// and its paths must be checked once. Bad entries are in `skipped`, never in `apps`.
  HostApplications host_applications;
};

kube::Expected<NodeSLOInfo> decodeNodeSLOInfo(const boost::json::value& v);

}  // namespace koord::roles::koordlet
