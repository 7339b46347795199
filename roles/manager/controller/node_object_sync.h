// One cluster-scoped object per Node, named after it, whose spec follows from the node and the
// configuration: what the nodemetric and nodeslo controllers both do, written once.
#pragma once

#include <boost/json/value.hpp>

#include <functional>
#include <optional>
#include <string>

#include "controller.h"
#include "koord/kube/labels.h"
#include "koord/kube/rest_client.h"

namespace koord::roles::manager {

/// What the sync reads of a Node.
struct NodeMeta {
  std::string uid;
  kube::Labels labels;
  kube::Labels annotations;
};

struct NodeObjectSyncConfig {
  /// The collection, e.g. {"slo.koordinator.sh", "v1alpha1", "nodemetrics"}.
  kube::ResourceRef collection;
  std::string kind;  // "NodeMetric"
  /// The node from the informer's store; nullopt when it is gone.
  std::function<std::optional<NodeMeta>(const std::string& name)> node;
  /// The object's current spec from the informer's store: nullopt when there is no object.
  std::function<std::optional<boost::json::value>(const std::string& name)> current_spec;
  /// The spec the object must have, or nullopt while there is no usable configuration (then
  /// nothing is created, changed or deleted).
  std::function<std::optional<boost::json::value>(const NodeMeta& node)> desired_spec;
};

/// reconcile(node name): creates the object (owned by the Node, so the garbage collector also
/// removes it), replaces a spec that differs, deletes an object whose Node is gone. Blocking;
/// runs on controller workers.
ReconcileResult syncNodeObject(kube::RestClient& client, const NodeObjectSyncConfig& config,
                               const std::string& name);

}  // namespace koord::roles::manager
