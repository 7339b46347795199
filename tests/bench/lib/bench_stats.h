// What the latency benches share: a percentile of samples, and the hypervisor's steal sampled
// once a second so that a bench can report the samples of the seconds the VM kept to itself.
#pragma once

#include <algorithm>
#include <chrono>
#include <fstream>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace koord::bench {

/// The sample at rank p (0..1) of `v`, rounded to the nearest rank; 0 for no samples.
inline double percentile(std::vector<double> v, double p) {
  if (v.empty())
    return 0;
  std::sort(v.begin(), v.end());
  const auto i = static_cast<std::size_t>(p * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(i, v.size() - 1)];
}

/// Steal ticks of all CPUs together (time the hypervisor ran something else on this VM's vCPUs),
/// from /proc/stat's "cpu" line.
inline long long stealTicks() {
  std::ifstream stat("/proc/stat");
  std::string name;
  long long v[8] = {};
  stat >> name;
  for (auto& x : v)
    stat >> x;
  return v[7];  // user nice system idle iowait irq softirq steal
}

/// One steal reading at `start` and then every second after it until stop(); second s of the
/// run is quiet when no steal accrued between readings s and s+1. On a shared VM the tail of a
/// sub-millisecond latency is decided by those ticks, not by what is measured.
class StealSampler {
 public:
  /// `on_thread` runs first on the sampling thread (a bench pins it out of the way).
  explicit StealSampler(std::chrono::steady_clock::time_point start,
                        std::function<void()> on_thread = {})
      : start_(start) {
    readings_.push_back(stealTicks());
    thread_ = std::jthread([this, on_thread = std::move(on_thread)](std::stop_token stop) {
      if (on_thread)
        on_thread();
      for (int second = 1; !stop.stop_requested(); ++second) {
        std::this_thread::sleep_until(start_ + std::chrono::seconds(second));
        const long long ticks = stealTicks();
        std::lock_guard lock(mu_);
        readings_.push_back(ticks);
      }
    });
  }
  ~StealSampler() { stop(); }
  StealSampler(const StealSampler&) = delete;
  StealSampler& operator=(const StealSampler&) = delete;

  /// Ends sampling; the queries below are for after it.
  void stop() {
    if (thread_.joinable()) {
      thread_.request_stop();
      thread_.join();
    }
  }
  int second(std::chrono::steady_clock::time_point t) const {
    return static_cast<int>(std::chrono::duration_cast<std::chrono::seconds>(t - start_).count());
  }
  bool quiet(int second) const {
    return second >= 0 && static_cast<std::size_t>(second) + 1 < readings_.size() &&
           readings_[second + 1] == readings_[second];
  }
  int quietSeconds() const {
    int n = 0;
    for (int s = 0; s < seconds(); ++s)
      n += quiet(s);
    return n;
  }
  /// Whole seconds sampled.
  int seconds() const { return static_cast<int>(readings_.size()) - 1; }
  long long totalTicks() const { return readings_.back() - readings_.front(); }

 private:
  std::chrono::steady_clock::time_point start_;
  std::mutex mu_;
  std::vector<long long> readings_;
  std::jthread thread_;
};

}  // namespace koord::bench
