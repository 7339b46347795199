// Pods held at Permit (kube-scheduler's waitingPodsMap): a pod some Permit plugin told to wait
// (a gang member) keeps its assumed room until every such plugin allows it, one rejects it, or
// the plugin's timeout passes; the decision then runs the pod's continuation exactly once.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "pod_info.h"
#include "status.h"

namespace koord::roles::scheduler {

/// kube-scheduler's cap on what one Permit plugin may ask to wait.
inline constexpr std::chrono::minutes kMaxPermitWait{15};

/// How the message of a pod released by its Permit timeout starts (the scheduler counts these
/// apart from rejections).
inline constexpr std::string_view kPermitTimeoutMessage = "rejected due to timeout";

/// One Permit plugin's wait: its name and how long it gives the others.
struct PluginWait {
  std::string plugin;
  std::chrono::milliseconds timeout{0};
};

class WaitingPod {
 public:
  using Clock = std::chrono::steady_clock;
  using Done = std::function<void(Status)>;

  WaitingPod(std::shared_ptr<const PodInfo> pod, std::string node,
             const std::vector<PluginWait>& waits, Clock::time_point now, Done done);

  const std::shared_ptr<const PodInfo>& pod() const { return pod_; }
  const std::string& nodeName() const { return node_; }
  /// The plugins that have not allowed it yet (empty once decided).
  std::vector<std::string> pendingPlugins() const;
  /// The earliest deadline of the plugins still pending; max() once decided.
  Clock::time_point deadline() const;

 private:
  friend class WaitingPods;
  /// Marks the plugin's consent; true when that was the last one (the caller then runs done).
  bool allowLocked(std::string_view plugin);

  std::shared_ptr<const PodInfo> pod_;
  std::string node_;
  mutable std::mutex mu_;
  std::map<std::string, Clock::time_point, std::less<>> pending_;  // under mu_
  bool decided_ = false;                                           // under mu_
  Done done_;
};

/// The scheduler's waiting pods, by UID. Decisions may come from any thread (the scheduling
/// thread's Permit of a sibling, an informer's delete, the timeout thread); the continuation
/// runs on the deciding thread with no lock of this class held, so it may allow or reject other
/// waiting pods itself.
class WaitingPods {
 public:
  using Clock = WaitingPod::Clock;

  WaitingPods();
  ~WaitingPods();
  WaitingPods(const WaitingPods&) = delete;
  WaitingPods& operator=(const WaitingPods&) = delete;

  /// Holds `pod` until each plugin in `waits` allows it (timeouts capped at kMaxPermitWait).
  /// `done` gets Success, or Unschedulable naming the rejecting plugin and its reason, or the
  /// plugin that timed out.
  void add(std::shared_ptr<const PodInfo> pod, std::string node,
           const std::vector<PluginWait>& waits, WaitingPod::Done done);

  std::shared_ptr<WaitingPod> get(std::string_view uid) const;
  /// Calls `fn` for each waiting pod (a copy of the list: `fn` may decide pods).
  void iterate(const std::function<void(WaitingPod&)>& fn) const;
  std::size_t size() const;

  /// `plugin` consents; the pod goes on once no plugin is pending. False when it is not waiting.
  bool allow(std::string_view uid, std::string_view plugin);
  /// Rejects the pod as `plugin` with `message`. False when it is not waiting.
  bool reject(std::string_view uid, std::string_view plugin, std::string message);
  /// Rejects every pod whose deadline is at or before `now` (the timeout thread calls it).
  void expire(Clock::time_point now);

 private:
  /// Removes the pod and runs its continuation with `status`, once.
  void decide(const std::shared_ptr<WaitingPod>& pod, Status status);
  void timeoutLoop();

  /// Taken before a pod's own lock where both are held (the timeout loop), never after.
  mutable std::mutex mu_;
  std::unordered_map<std::string, std::shared_ptr<WaitingPod>> pods_;  // under mu_
  std::condition_variable wake_;
  bool stopping_ = false;  // under mu_
  /// The deadline the timeout thread sleeps towards (max: none); under mu_.
  Clock::time_point sleeping_until_ = Clock::time_point::max();
  std::thread timer_;  // started with the first pod
};

}  // namespace koord::roles::scheduler
