// /validate-node-writes (koord's own): a koordlet may change only its own node's Node, NodeMetric
// and Device. RBAC cannot say "your own node", so a stolen koordlet token could forge every node.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "webhook/admission_review.h"

namespace koord::manager::webhook {

/// What the manager knows of a pod: its UID and the node it is bound to.
struct PodPlacement {
  std::string uid;
  std::string node_name;
};

struct NodeWriterOptions {
  /// The koordlets' identities (system:serviceaccount:<ns>:koordlet); writes by anyone else are
  /// not this webhook's business.
  std::vector<std::string> koordlet_usernames;
  /// The pod a token was bound to, from the manager's pod informer.
  std::function<std::optional<PodPlacement>(std::string_view ns, std::string_view name)> pod;
};

/// The node a koordlet request comes from: the bound token's node-name (Kubernetes 1.30+), else
/// the node of the pod the token names (checked against its UID). nullopt with `why` set when the
/// request does not say (a legacy token, before bound tokens) or names a pod the manager does not
/// know.
std::optional<std::string> requesterNode(const AdmissionRequest& request,
                                         const NodeWriterOptions& options, std::string& why);

/// The handler for nodes, nodemetrics and devices (and their status): a koordlet's CREATE,
/// UPDATE or DELETE of another node's object is denied with 403. A koordlet whose node cannot be
/// told is allowed, logged once per user: legacy tokens carry no pod (Kubernetes 1.20 without
/// bound service-account token volumes), and refusing them would stop every koordlet there.
Handler nodeWriterHandler(NodeWriterOptions options);

}  // namespace koord::manager::webhook
