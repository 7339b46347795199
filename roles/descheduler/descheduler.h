// The descheduling loop: every deschedulingInterval one pass over a fresh snapshot, each
// profile's Deschedule plugins and then each profile's Balance plugins, the eviction caps reset
// for the pass (Koordinator's Descheduler.deschedulerOnce).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "config/descheduler_config.h"
#include "framework/eviction_limiter.h"
#include "runtime/profile_runner.h"

namespace koord::roles::descheduler {

class Descheduler {
 public:
  /// Where a pass's snapshot comes from (the informers; tests give their own).
  using SnapshotSource = std::function<Snapshot(TimePoint now)>;

  /// Builds every profile's plugins; a profile that cannot run is a ConfigError.
  Descheduler(const config::DeschedulerConfig& config, const PluginRegistry& registry,
              SnapshotSource snapshots, PodEvictionApi& api, metrics::Registry& metrics,
              ClusterServices* cluster = nullptr);
  ~Descheduler();
  Descheduler(const Descheduler&) = delete;
  Descheduler& operator=(const Descheduler&) = delete;

  /// One pass at `now`. Fewer than two nodes is an error and evicts nothing: moving a pod then
  /// only disrupts it (Koordinator's rule).
  Expected<void> runOnce(TimePoint now);

  /// Runs passes on a thread of its own, the first at once, then every interval; with an
  /// interval of 0 a single pass.
  void start();
  /// Ends the loop (a pass under way finishes first).
  void stop();
  /// Passes completed so far.
  std::size_t passes() const { return passes_.load(); }

 private:
  std::chrono::nanoseconds interval_;
  SnapshotSource snapshots_;
  EvictionLimiter limiter_;
  std::vector<std::unique_ptr<ProfileRunner>> profiles_;
  std::atomic<std::size_t> passes_{0};
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;  // under mu_
  std::thread thread_;
};

}  // namespace koord::roles::descheduler
