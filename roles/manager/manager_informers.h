// Every informer koord-manager runs, started once and shared by the webhooks (all replicas) and
// the controllers (the leader): each keeps a compact projection, never whole objects.
#pragma once

#include <boost/json/value.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "discovered_informer.h"
#include "koord/apis/colocation_profile.h"
#include "koord/apis/elastic_quota.h"
#include "koord/apis/elastic_quota_profile.h"
#include "koord/apis/node_metric.h"
#include "koord/kube/informer.h"
#include "noderesource/device_resource_view.h"
#include "noderesource/node_view.h"
#include "sloconfig/slo_config_source.h"

namespace koord::roles::manager {

struct NamespaceInfo {
  std::string name;
  kube::Labels labels;
};

struct PriorityClassInfo {
  std::string name;
  std::int32_t value = 0;
  std::string preemption_policy;
};

/// A NodeSLO's spec as stored, for the nodeslo controller's comparison.
struct NodeSLOInfo {
  std::string name;
  boost::json::value spec;
};

struct NodeInfo {
  std::string uid;
  noderesource::NodeView view;
  /// spec.unschedulable, and the Ready condition's status is True (the quota profiles count
  /// the allocatable of nodes that are neither apart).
  bool unschedulable = false;
  bool ready = false;
};

/// The pods index by their quota-name label.
inline constexpr const char* kPodQuotaIndex = "label.quotaName";

struct ManagerInformers {
  ManagerInformers(kube::RestClient& client, boost::asio::io_context& io,
                   const std::string& config_namespace, const std::string& config_name);

  kube::Informer<NodeInfo> nodes;
  kube::Informer<noderesource::PodView> pods;
  kube::Informer<apis::NodeMetric> node_metrics;
  kube::Informer<NodeSLOInfo> node_slos;
  kube::Informer<ConfigMapData> slo_config;
  kube::Informer<apis::ClusterColocationProfile> profiles;
  kube::Informer<NamespaceInfo> namespaces;
  kube::Informer<PriorityClassInfo> priority_classes;
  /// Started once discovery finds their CRDs served (their store() is null until then).
  DiscoveredInformer<apis::ElasticQuota> elastic_quotas;
  DiscoveredInformer<apis::ElasticQuotaProfile> quota_profiles;
  /// The nodes' Device objects, for the noderesource device plugins (none without the CRD).
  DiscoveredInformer<noderesource::DeviceView> devices;

  void start();
  void stop();
  /// Blocks (not on an io thread) until every informer has listed once; false on timeout.
  bool waitForSync(std::chrono::milliseconds timeout) const;
};

}  // namespace koord::roles::manager
