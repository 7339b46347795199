// Scheduler extenders as the scheduling cycle calls them (kube-scheduler's []framework.Extender):
// the interface the runtime codes against; the HTTP client behind it is http_extenders.h's.
#pragma once

#include <string>
#include <vector>

#include "framework/node_info.h"
#include "framework/plugin.h"
#include "framework/pod_info.h"
#include "framework/status.h"

namespace koord::roles::scheduler {

/// The configured extenders together, in configuration order. An extender only sees pods it is
/// interested in: those requesting (or limiting) one of its managed resources, every pod when it
/// manages none. filter and prioritize block the calling thread (the scheduling thread, as
/// kube-scheduler's cycle waits on them) for at most each extender's httpTimeout.
class Extenders {
 public:
  virtual ~Extenders() = default;

  /// findNodesThatPassExtenders: each interested extender with a filter verb, in order, narrows
  /// `feasible` (keeping its order) until none is left. The nodes it refuses get its reason in
  /// `failed`: Unschedulable (failedNodes, appended to a status already there) or
  /// UnschedulableAndUnresolvable (failedAndUnresolvableNodes, which wins over failedNodes). An
  /// ignorable extender's failure (transport, HTTP status, malformed answer, or its "Error") is
  /// logged and skipped; a required one's is the kError status returned, which fails the cycle.
  virtual Status filter(const PodInfo& pod, std::vector<const NodeInfo*>& feasible,
                        NodeStatusMap& failed) = 0;

  /// Adds to scores[i] (the total of nodes[i]) each interested extender's score for the node
  /// times its weight times kMaxNodeScore / MaxExtenderPriority (10). The extenders are asked at
  /// once; one that fails gives no scores (logged), as upstream.
  virtual void prioritize(const PodInfo& pod, const std::vector<const NodeInfo*>& nodes,
                          std::vector<NodeScore>& scores) = 0;

  /// Whether an interested extender with a bind verb binds `pod` (instead of the Bind plugins).
  virtual bool bindsPod(const PodInfo& pod) const = 0;
  /// That extender's bind call; `done` runs once, on another thread, with an error status when
  /// the call failed or the extender answered an "Error".
  virtual void bind(const PodInfo& pod, const std::string& node, StatusCallback done) = 0;
};

}  // namespace koord::roles::scheduler
