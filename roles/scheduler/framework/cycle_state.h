// Per-pod scheduling-cycle scratch space: what PreFilter/PreScore compute once for Filter/Score
// to read on every node. Keyed by plugin-chosen names; cloned for preemption's what-if runs.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <typeinfo>
#include <utility>
#include <vector>

namespace koord::roles::scheduler {

class StateData {
 public:
  virtual ~StateData() = default;
  virtual std::unique_ptr<StateData> clone() const = 0;
};

/// A CycleState key interned once (at static initialisation, as a namespace-scope constant):
/// Filter and Score read their state on every node, and comparing a small integer costs less
/// than comparing names that share long prefixes. Keys with equal names are the same key, and
/// the name-keyed read/write find the same entry.
class StateKey {
 public:
  explicit StateKey(std::string_view name);
  std::uint32_t id() const { return id_; }
  std::string_view name() const { return name_; }

 private:
  std::uint32_t id_;
  std::string_view name_;  // the interned copy, alive for the process
};

/// Bits over a profile's plugin indices (the framework numbers the plugins it builds).
using PluginBits = std::uint64_t;

/// Written only by the single-threaded points (PreFilter, PreScore, Reserve, PostFilter); read
/// concurrently by Filter and Score, which must not write it.
class CycleState {
 public:
  CycleState() = default;
  CycleState(const CycleState&) = delete;
  CycleState& operator=(const CycleState&) = delete;
  CycleState(CycleState&&) = default;
  CycleState& operator=(CycleState&&) = default;

  void write(std::string_view key, std::unique_ptr<StateData> data);
  void write(const StateKey& key, std::unique_ptr<StateData> data);
  /// Null when absent or of another type.
  template <typename T>
  const T* read(std::string_view key) const {
    return as<T>(find(key));
  }
  template <typename T>
  const T* read(const StateKey& key) const {
    return as<T>(find(key));
  }
  template <typename T>
  T* readMutable(std::string_view key) {
    return dynamic_cast<T*>(const_cast<StateData*>(find(key)));
  }
  template <typename T>
  T* readMutable(const StateKey& key) {
    return dynamic_cast<T*>(const_cast<StateData*>(find(key)));
  }
  void erase(std::string_view key);
  void erase(const StateKey& key) { erase(key.name()); }
  /// Copies the entries (each StateData cloned) and the skip sets.
  CycleState clone() const;

  /// Whether preemption's simulation is running (plugins that skip work then may check).
  bool skip_filter_plugins_for_nominated = false;
  /// Plugins whose PreFilter answered Skip this cycle: their Filter and AddPod/RemovePod are
  /// not run (kube-scheduler 1.27+'s SkipFilterPlugins). Set by the framework.
  PluginBits skip_filter_plugins = 0;
  /// Plugins whose PreScore answered Skip: their Score and NormalizeScore are not run.
  PluginBits skip_score_plugins = 0;
  /// This cycle times each plugin's calls (scheduler_plugin_execution_duration_seconds, for a
  /// sample of cycles). Set by the framework at PreFilter.
  bool record_plugin_metrics = false;
  /// When PreBind and Bind started (steady clock, ns): they run asynchronously, so their
  /// extension-point durations are taken where they end.
  std::int64_t pre_bind_start_ns = 0;
  std::int64_t bind_start_ns = 0;
  /// Nodes the filter pass must look at whatever its adaptive window reaches (the nodes of the
  /// reservations a pod owns): set before PreFilter, by a BeforePreFilter transformer.
  std::vector<std::string> preferred_nodes;
  /// The plugin whose PreFilter refused the pod (empty when PreFilter passed). PostFilter
  /// plugins still run (a gang's rejection), but DefaultPreemption has no PreFilter state to try
  /// victims against and does nothing, unless the refusal is one its rules answer (a quota's).
  std::string pre_filter_rejected_by;

 private:
  struct Entry {
    std::uint32_t id;
    std::string_view name;  // interned: alive for the process
    std::unique_ptr<StateData> data;
  };

  template <typename T>
  static const T* as(const StateData* d) {
    // The exact-type check is a pointer compare where a dynamic_cast walks the class hierarchy.
    if (d != nullptr && typeid(*d) == typeid(T))
      return static_cast<const T*>(d);
    return dynamic_cast<const T*>(d);
  }
  const StateData* find(std::string_view key) const;
  const StateData* find(const StateKey& key) const {
    for (const auto& e : entries_) {
      if (e.id == key.id())
        return e.data.get();
    }
    return nullptr;
  }
  void put(std::uint32_t id, std::string_view name, std::unique_ptr<StateData> data);

  std::vector<Entry> entries_;  // a dozen at most
};

}  // namespace koord::roles::scheduler
