// PreBind's half of VolumeBinding (kube-scheduler's BindPodVolumes): write the assumed bindings
// to the API (PVs' claimRef, claims' selected node), then wait, without holding a thread, until
// the PV controller has bound every claim, something undid it, or the bind timeout passed.
#pragma once

#include <boost/json/fwd.hpp>

#include <chrono>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "framework/framework_handle.h"
#include "framework/plugin.h"
#include "plugins/upstream/volumebinding/state.h"
#include "plugins/upstream/volumebinding/volume_cache.h"

namespace koord::roles::scheduler::upstream::volumebinding {

/// The message of a bind that ran out of time.
inline constexpr std::string_view kBindTimeoutMessage =
    "binding volumes: timed out waiting for the condition";

class VolumeBinder : public std::enable_shared_from_this<VolumeBinder> {
 public:
  /// `timeout` 0: no limit. `cache` and `cluster` must outlive the binder's waits.
  VolumeBinder(VolumeCache& cache, const ClusterView& cluster, std::chrono::milliseconds timeout);
  VolumeBinder(const VolumeBinder&) = delete;
  VolumeBinder& operator=(const VolumeBinder&) = delete;

  /// Sends the writes for `volumes` (assumed by Reserve) one after another, then answers `done`
  /// once every claim is fully bound, or with the first failure: an API error as the API gave
  /// it, or "binding volumes: <why>" when the objects show the binding undone (a PV's claimRef
  /// reset, provisioning given up, an object deleted) or the timeout passed. A failed write
  /// restores the assumptions it had not sent yet.
  void bind(std::string pod_key, std::shared_ptr<const PodVolumes> volumes, StatusCallback done);

  /// A PV or claim changed or went away (any thread): waits involving it are checked again.
  void objectChanged();

  /// Binds in progress (sending or waiting).
  std::size_t inFlight() const;

  /// The JSON merge patch that binds `binding.volume` to its claim (upstream's
  /// GetBindVolumeToClaim, sent as a patch): claimRef with the claim's identity and
  /// resourceVersion, bound-by-controller when the volume was not pre-bound to it, and the
  /// volume's resourceVersion as precondition.
  static boost::json::value bindVolumePatch(const StaticBinding& binding);
  /// The merge patch asking for provisioning on `node`: the selected-node annotation, with the
  /// claim's resourceVersion as precondition.
  static boost::json::value selectNodePatch(const storage::PersistentVolumeClaim& claim,
                                            const std::string& node);

 private:
  struct Op;
  enum class Check { kWait, kBound, kFailed };

  void sendNext(const std::shared_ptr<Op>& op, std::size_t i);
  void startWaiting(const std::shared_ptr<Op>& op);
  /// checkBindings: kFailed sets `why`.
  Check check(const Op& op, std::string& why) const;
  void recheck(const std::shared_ptr<Op>& op);
  /// Answers once; later calls for the same op do nothing.
  void finish(const std::shared_ptr<Op>& op, Status status);

  VolumeCache& cache_;
  const ClusterView& cluster_;
  const std::chrono::milliseconds timeout_;
  mutable std::mutex mu_;
  std::vector<std::shared_ptr<Op>> waiting_;  // under mu_
  std::size_t in_flight_ = 0;                 // under mu_
};

}  // namespace koord::roles::scheduler::upstream::volumebinding
