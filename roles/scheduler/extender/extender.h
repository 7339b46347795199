// Scheduler extenders as the scheduling cycle calls them (kube-scheduler's []framework.Extender):
// the interface the runtime codes against; the HTTP client behind it is http_extenders.h's.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "framework/node_info.h"
#include "framework/plugin.h"
#include "framework/pod_info.h"
#include "framework/status.h"

namespace koord::roles::scheduler {

class Snapshot;

/// A node preemption could free and the pods it would evict there (kube-scheduler's
/// extenderv1.Victims under the node's name).
struct PreemptionCandidate {
  std::string node;
  std::vector<std::shared_ptr<const PodInfo>> victims;
  std::int64_t num_pdb_violations = 0;
};

/// The configured extenders together, in configuration order. An extender only sees pods it is
/// interested in: those requesting (or limiting) one of its managed resources, every pod when it
/// manages none. filter, prioritize and processPreemption block the calling thread (the
/// scheduling thread, as kube-scheduler's cycle waits on them) for at most each extender's
/// httpTimeout.
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

  /// Whether an interested extender has a preempt verb (DefaultPreemption then asks them).
  virtual bool preemptsFor(const PodInfo& pod) const = 0;
  /// kube-scheduler's CallExtenders, between finding the candidates and picking one: each
  /// interested extender with a preempt verb, in order, is sent the candidates and answers with
  /// the nodes and victims it allows, which replace `candidates` for the next one; an answer
  /// with none ends the round (no candidate is left). The answer's nodes and victims (by UID)
  /// are looked up in `snapshot`: a node it lacks, or a UID not among that node's pods, is the
  /// extender's error. An ignorable extender's failure is logged and skipped; a required one's
  /// is the kError status returned, `candidates` as the previous extender left them.
  virtual Status processPreemption(const PodInfo& pod, const Snapshot& snapshot,
                                   std::vector<PreemptionCandidate>& candidates) = 0;
};

}  // namespace koord::roles::scheduler
