// The descheduling framework's extension points (Koordinator's pkg/descheduler/framework):
// Deschedule and Balance plugins pick pods to move off nodes; Filter and Evict plugins decide
// whether a picked pod may go and carry the eviction out. A plugin implements those it needs.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "framework/cluster_services.h"
#include "framework/eviction_method.h"
#include "framework/types.h"
#include "koord/core/expected.h"

namespace koord::apis {
struct DeleteOptions;
}

namespace koord::roles::descheduler {

/// Why a pod is evicted, as Koordinator's EvictOptions say it (Events and logs name both).
struct EvictOptions {
  std::string plugin_name;
  std::string reason;
  /// The evictor's own method when unset (a PodMigrationJob's policy sets it).
  std::optional<EvictionMethod> method{};
  /// metav1.DeleteOptions to send with it (a job's spec.deleteOptions); the pod's UID is always
  /// added as the precondition when they name none.
  const apis::DeleteOptions* delete_options = nullptr;
};

class Plugin {
 public:
  virtual ~Plugin() = default;
  virtual std::string_view name() const = 0;
};

/// Moves pods that break a rule of their own (one pod at a time, node by node).
class DeschedulePlugin : public virtual Plugin {
 public:
  virtual Expected<void> deschedule(const std::vector<const Node*>& nodes) = 0;
};

/// Moves pods to even out something across nodes (load, pods per topology domain).
class BalancePlugin : public virtual Plugin {
 public:
  virtual Expected<void> balance(const std::vector<const Node*>& nodes) = 0;
};

/// Whether a pod may be evicted at all (Koordinator's Filter); every Filter plugin must agree.
/// preEvictionFilter is upstream's later check (nodeFit: somewhere else to go).
class FilterPlugin : public virtual Plugin {
 public:
  virtual bool filter(const Pod& pod) const = 0;
  virtual bool preEvictionFilter(const Pod& /*pod*/) const { return true; }
};

/// Evicts a pod the filters let go (Koordinator's Evict); true when it did (or, in dry-run,
/// would have).
class EvictPlugin : public virtual Plugin {
 public:
  virtual bool evict(const Pod& pod, const EvictOptions& options) = 0;
};

/// Base of every plugin's decoded args (the registry hands them back to the plugin's factory).
class PluginArgs {
 public:
  virtual ~PluginArgs() = default;
};

/// The API server side of an eviction, which Evict plugins call: the Eviction subresource with
/// the pod's UID as precondition (or a Delete, as the policy says). In dry-run it makes no call
/// and answers true.
class PodEvictionApi {
 public:
  virtual ~PodEvictionApi() = default;
  virtual bool evict(const Pod& pod, const EvictOptions& options) = 0;
};

/// What a plugin reaches beyond its args: the pass's snapshot, and the profile's Filter and
/// Evict plugins as one evictor (Koordinator's Handle.Evictor()) behind the eviction limiter,
/// so Deschedule and Balance plugins never evict directly.
class FrameworkHandle {
 public:
  virtual ~FrameworkHandle() = default;
  /// The cluster as the current pass sees it; valid during deschedule() and balance().
  virtual const Snapshot& snapshot() const = 0;
  /// Every Filter plugin of the profile agrees that `pod` may be evicted.
  virtual bool filter(const Pod& pod) const = 0;
  /// Every Filter plugin's preEvictionFilter agrees.
  virtual bool preEvictionFilter(const Pod& pod) const = 0;
  /// Takes a slot from the limiter (per node, per namespace, total), then the profile's Evict
  /// plugin evicts `pod`; false when a cap is reached or the eviction failed (the slot is
  /// given back then).
  virtual bool evict(const Pod& pod, const EvictOptions& options) = 0;
  /// Whether the per-node cap for `node` is reached (a plugin stops looking at that node).
  virtual bool nodeLimitReached(std::string_view node) const = 0;
  /// Whether the total cap is reached (a plugin stops the pass).
  virtual bool totalLimitReached() const = 0;
  /// For Evict plugins: the API server side of an eviction.
  virtual PodEvictionApi& podEvictor() = 0;
  /// The running descheduler's clients and informers; nullptr where there is no cluster (unit
  /// tests, benchmarks), and a plugin then works on the snapshot alone.
  virtual ClusterServices* cluster() { return nullptr; }
};

}  // namespace koord::roles::descheduler
