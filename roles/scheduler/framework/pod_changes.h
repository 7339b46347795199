// The changes plugins make to the pod being scheduled (annotations such as reservation-allocated,
// later resource-status and device-allocated): kept in the cycle state, applied to the assumed
// pod at Reserve and sent as one patch by DefaultPreBind before the binding, as Koordinator does.
#pragma once

#include <boost/json/fwd.hpp>

#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "cycle_state.h"
#include "framework_handle.h"
#include "plugin.h"
#include "pod_info.h"

namespace koord::roles::scheduler {

class PodChanges final : public StateData {
 public:
  std::unique_ptr<StateData> clone() const override { return std::make_unique<PodChanges>(*this); }

  void setAnnotation(std::string_view key, std::string value);
  /// Null when the annotation is not changed.
  const std::string* annotation(std::string_view key) const;
  void removeAnnotation(std::string_view key);
  bool empty() const { return annotations_.empty(); }
  const std::map<std::string, std::string, std::less<>>& annotations() const {
    return annotations_;
  }

  /// The pod as the changes leave it (fields derived from annotations refreshed).
  void applyTo(PodInfo& pod) const;
  /// The JSON merge patch for the pod ({"metadata":{"annotations":{...}}}), with the pod's UID
  /// as precondition.
  boost::json::value mergePatch(const PodInfo& pod) const;

  /// Set once the patch went out: DefaultPreBind and the framework's own pass after the PreBind
  /// plugins send it once between them.
  bool applied = false;

 private:
  std::map<std::string, std::string, std::less<>> annotations_;
};

/// The cycle's PodChanges, created on first use (at Reserve, on the scheduling thread).
PodChanges& podChanges(CycleState& state);
/// Null when no plugin changed the pod.
const PodChanges* findPodChanges(const CycleState& state);

/// DefaultPreBind: sends the cycle's pod changes as one merge patch (nothing when there are none,
/// they went out already, or the pod is a reservation's stand-in); `done` gets an error status
/// when the API refused it, which fails the binding cycle.
void applyPodChanges(const ClusterView& cluster, const std::shared_ptr<CycleState>& state,
                     const std::shared_ptr<const PodInfo>& pod, StatusCallback done);

}  // namespace koord::roles::scheduler
