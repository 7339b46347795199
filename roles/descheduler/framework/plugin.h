// The descheduling framework's extension points (Koordinator's pkg/descheduler/framework):
// Deschedule and Balance plugins pick pods to move off nodes; Filter and Evict plugins decide
// whether a picked pod may go and carry the eviction out. A plugin implements those it needs.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "koord/core/expected.h"

namespace koord::roles::descheduler {

// The projections plugins read; each plugin issue (27) brings the fields it needs.
struct Node;
struct Pod;

/// Why a pod is evicted, as Koordinator's EvictOptions say it (Events and logs name both).
struct EvictOptions {
  std::string plugin_name;
  std::string reason;
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
class FilterPlugin : public virtual Plugin {
 public:
  virtual bool filter(const Pod& pod) const = 0;
};

/// Evicts a pod the filters let go (Koordinator's Evict); true when it did.
class EvictPlugin : public virtual Plugin {
 public:
  virtual bool evict(const Pod& pod, const EvictOptions& options) = 0;
};

/// Base of every plugin's decoded args (the registry hands them back to the plugin's factory).
class PluginArgs {
 public:
  virtual ~PluginArgs() = default;
};

/// What a plugin reaches beyond its args: the profile's Filter and Evict plugins as one evictor
/// (Koordinator's Handle.Evictor()), so Deschedule and Balance plugins never evict directly.
class FrameworkHandle {
 public:
  virtual ~FrameworkHandle() = default;
  /// Every Filter plugin of the profile agrees that `pod` may be evicted.
  virtual bool filter(const Pod& pod) const = 0;
  /// The profile's Evict plugin evicts `pod`; true when it did.
  virtual bool evict(const Pod& pod, const EvictOptions& options) = 0;
};

}  // namespace koord::roles::descheduler
