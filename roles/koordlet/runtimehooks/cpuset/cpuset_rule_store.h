// The CPUSetAllocator rule the hook server and the reconciler share, rebuilt from the node's
// NodeResourceTopology annotations (what the koordlet's topology reporter wrote) when they change.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "koord/kube/error.h"
#include "koord/kube/labels.h"
#include "runtimehooks/cpuset/cpuset_rule.h"

namespace koord::roles::koordlet {

/// Thread-safe: the hook server asks from its own thread, the reconciler from the io thread.
class CPUSetRuleStore {
 public:
  /// The annotations of the NodeResourceTopology last reported; null before any. A new pointer
  /// is what tells the store to look again.
  using Source = std::function<std::shared_ptr<const kube::Labels>()>;

  /// Where the rule comes from, and the BECPUManager gate (BE pods' NUMA pools).
  void setSource(Source source, bool be_cpu_manager);
  /// No source, no rule, the gate off: as at start.
  void reset();

  /// Reads the source and rebuilds the rule when it gives other annotations; true when the rule
  /// changed. A rule that does not parse is update()'s.
  bool refresh();
  /// The rule from these annotations; true when it differs from the one held. An error leaves the
  /// rule held as it is and is logged once until its message changes.
  kube::Expected<bool> update(const kube::Labels& nrt_annotations);

  /// refresh(), then the rule: null while no NodeResourceTopology has been read.
  std::shared_ptr<const CPUSetRule> rule();
  bool beCPUManager() const;
  /// Counts the rule's changes, so that a reconciler can tell whether it applied the current one.
  std::uint64_t generation() const;

 private:
  mutable std::mutex mu_;
  Source source_;
  bool be_cpu_manager_ = false;
  std::shared_ptr<const kube::Labels> seen_;  // what the source gave last
  std::shared_ptr<const CPUSetRule> rule_;
  std::uint64_t generation_ = 0;
  std::string last_error_;

  kube::Expected<bool> updateLocked(const kube::Labels& nrt_annotations);
};

/// The koordlet's one store. Hooks are plain functions of the CRI request (runtime_hook.h), so
/// the rule they read lives here, as Koordinator's plugin keeps its rule in its singleton.
CPUSetRuleStore& cpusetRuleStore();

/// Points a store at a source for the lifetime of this object (the koordlet's), and resets it
/// when destroyed, so that no call reaches a source that is gone.
class CPUSetRuleSourceScope {
 public:
  CPUSetRuleSourceScope(CPUSetRuleStore& store, CPUSetRuleStore::Source source,
                        bool be_cpu_manager);
  ~CPUSetRuleSourceScope();
  CPUSetRuleSourceScope(const CPUSetRuleSourceScope&) = delete;
  CPUSetRuleSourceScope& operator=(const CPUSetRuleSourceScope&) = delete;

 private:
  CPUSetRuleStore& store_;
};

}  // namespace koord::roles::koordlet
