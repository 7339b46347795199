#include "waiting_pods.h"

#include <fmt/format.h>

#include <algorithm>

namespace koord::roles::scheduler {

WaitingPod::WaitingPod(std::shared_ptr<const PodInfo> pod, std::string node,
                       const std::vector<PluginWait>& waits, Clock::time_point now, Done done)
    : pod_(std::move(pod)), node_(std::move(node)), done_(std::move(done)) {
  for (const auto& w : waits) {
    const auto timeout = std::clamp<std::chrono::milliseconds>(
        w.timeout, std::chrono::milliseconds(0), kMaxPermitWait);
    pending_.emplace(w.plugin, now + timeout);
  }
}

std::vector<std::string> WaitingPod::pendingPlugins() const {
  std::lock_guard lock(mu_);
  std::vector<std::string> out;
  for (const auto& [plugin, deadline] : pending_)
    out.push_back(plugin);
  return out;
}

WaitingPod::Clock::time_point WaitingPod::deadline() const {
  std::lock_guard lock(mu_);
  auto earliest = Clock::time_point::max();
  for (const auto& [plugin, deadline] : pending_)
    earliest = std::min(earliest, deadline);
  return earliest;
}

bool WaitingPod::allowLocked(std::string_view plugin) {
  if (decided_)
    return false;
  if (auto it = pending_.find(plugin); it != pending_.end())
    pending_.erase(it);
  if (!pending_.empty())
    return false;
  decided_ = true;
  return true;
}

WaitingPods::WaitingPods() = default;

WaitingPods::~WaitingPods() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (timer_.joinable())
    timer_.join();
}

void WaitingPods::add(std::shared_ptr<const PodInfo> pod, std::string node,
                      const std::vector<PluginWait>& waits, WaitingPod::Done done) {
  auto waiting =
      std::make_shared<WaitingPod>(pod, std::move(node), waits, Clock::now(), std::move(done));
  const bool none_pending = waiting->pendingPlugins().empty();
  const Clock::time_point deadline = waiting->deadline();
  bool wake = false;
  {
    std::lock_guard lock(mu_);
    if (!none_pending)
      pods_[pod->uid] = waiting;
    if (!timer_.joinable())
      timer_ = std::thread([this] { timeoutLoop(); });
    // The timer sleeps towards the earliest deadline it knew; a gang's members share theirs, so
    // most adds need not wake it (each wake walks every waiting pod).
    wake = !none_pending && deadline < sleeping_until_;
  }
  if (wake)
    wake_.notify_all();
  if (none_pending) {
    {
      std::lock_guard lock(waiting->mu_);
      waiting->decided_ = true;
    }
    waiting->done_(Status::success());
  }
}

std::shared_ptr<WaitingPod> WaitingPods::get(std::string_view uid) const {
  std::lock_guard lock(mu_);
  auto it = pods_.find(std::string(uid));
  return it == pods_.end() ? nullptr : it->second;
}

void WaitingPods::iterate(const std::function<void(WaitingPod&)>& fn) const {
  std::vector<std::shared_ptr<WaitingPod>> copy;
  {
    std::lock_guard lock(mu_);
    copy.reserve(pods_.size());
    for (const auto& [uid, pod] : pods_)
      copy.push_back(pod);
  }
  for (const auto& pod : copy)
    fn(*pod);
}

std::size_t WaitingPods::size() const {
  std::lock_guard lock(mu_);
  return pods_.size();
}

bool WaitingPods::allow(std::string_view uid, std::string_view plugin) {
  auto pod = get(uid);
  if (!pod)
    return false;
  bool last = false;
  {
    std::lock_guard lock(pod->mu_);
    last = pod->allowLocked(plugin);
  }
  if (last) {
    {
      std::lock_guard lock(mu_);
      auto it = pods_.find(pod->pod()->uid);
      if (it != pods_.end() && it->second == pod)
        pods_.erase(it);
    }
    pod->done_(Status::success());
  }
  return true;
}

bool WaitingPods::reject(std::string_view uid, std::string_view plugin, std::string message) {
  auto pod = get(uid);
  if (!pod)
    return false;
  Status status = Status::unschedulable(std::move(message));
  if (!plugin.empty())
    status.withPlugin(std::string(plugin));
  decide(pod, std::move(status));
  return true;
}

void WaitingPods::decide(const std::shared_ptr<WaitingPod>& pod, Status status) {
  {
    std::lock_guard lock(pod->mu_);
    if (pod->decided_)
      return;
    pod->decided_ = true;
    pod->pending_.clear();
  }
  {
    std::lock_guard lock(mu_);
    auto it = pods_.find(pod->pod()->uid);
    if (it != pods_.end() && it->second == pod)
      pods_.erase(it);
  }
  pod->done_(std::move(status));
}

void WaitingPods::expire(Clock::time_point now) {
  // The pods' locks are taken only with this one released: the timeout loop takes them inside
  // it, so taking it inside theirs could deadlock.
  std::vector<std::shared_ptr<WaitingPod>> pods;
  {
    std::lock_guard lock(mu_);
    pods.reserve(pods_.size());
    for (const auto& [uid, pod] : pods_)
      pods.push_back(pod);
  }
  for (const auto& pod : pods) {
    std::string expired;
    {
      std::lock_guard lock(pod->mu_);
      for (const auto& [plugin, deadline] : pod->pending_) {
        if (deadline <= now) {
          expired = plugin;
          break;
        }
      }
    }
    if (expired.empty())
      continue;
    Status status = Status::unschedulable(
        fmt::format("{} after waiting at plugin {}", kPermitTimeoutMessage, expired));
    status.withPlugin(expired);
    decide(pod, std::move(status));
  }
}

void WaitingPods::timeoutLoop() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    auto next = Clock::time_point::max();
    for (const auto& [uid, pod] : pods_)
      next = std::min(next, pod->deadline());
    sleeping_until_ = next;
    if (next == Clock::time_point::max())
      wake_.wait(lock);
    else
      wake_.wait_until(lock, next);
    if (stopping_)
      return;
    lock.unlock();
    expire(Clock::now());
    lock.lock();
  }
}

}  // namespace koord::roles::scheduler
