// Per-pod scheduling-cycle scratch space: what PreFilter/PreScore compute once for Filter/Score
// to read on every node. Keyed by plugin-chosen names; cloned for preemption's what-if runs.
#pragma once

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
  /// Null when absent or of another type.
  template <typename T>
  const T* read(std::string_view key) const {
    // Filter and Score read their state on every node: the exact-type check is a pointer
    // compare where a dynamic_cast walks the class hierarchy.
    const StateData* d = find(key);
    if (d != nullptr && typeid(*d) == typeid(T))
      return static_cast<const T*>(d);
    return dynamic_cast<const T*>(d);
  }
  template <typename T>
  T* readMutable(std::string_view key) {
    return dynamic_cast<T*>(const_cast<StateData*>(find(key)));
  }
  void erase(std::string_view key);
  CycleState clone() const;

  /// Whether preemption's simulation is running (plugins that skip work then may check).
  bool skip_filter_plugins_for_nominated = false;

 private:
  const StateData* find(std::string_view key) const;
  std::vector<std::pair<std::string, std::unique_ptr<StateData>>> entries_;  // a dozen at most
};

}  // namespace koord::roles::scheduler
