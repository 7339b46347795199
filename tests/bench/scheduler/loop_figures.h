// The figures of one run of the Scheduler's own loop (--jobs, --fine-grained), how they are
// printed, and the side-by-side table of A (the default plugins) and B (the plugins measured).
#pragma once

#include <algorithm>
#include <cstddef>
#include <span>
#include <string_view>
#include <vector>

#include <fmt/format.h>

namespace koord::bench::scheduler {

/// Trivially copyable: it crosses the pipe from a run's child process inside its result.
struct LoopFigures {
  std::size_t bound = 0, failures = 0, cycles = 0;
  double setup_s = 0, feed_s = 0, schedule_s = 0, schedule_cpu_s = 0, confirm_s = 0;
  double cycle_p50_us = 0, cycle_p99_us = 0, cycle_max_us = 0;
};

inline double usPerPod(double s, std::size_t pods) {
  return s * 1e6 / static_cast<double>(pods);
}

/// The cycles' p50, p99 and max from their durations (sorted in place).
inline void setCyclePercentiles(std::vector<double>& cycle_us, LoopFigures& f) {
  std::sort(cycle_us.begin(), cycle_us.end());
  auto pct = [&](double p) {
    return cycle_us.empty() ? 0.0
                            : cycle_us[std::min(cycle_us.size() - 1,
                                                static_cast<std::size_t>(p * cycle_us.size()))];
  };
  f.cycle_p50_us = pct(0.5);
  f.cycle_p99_us = pct(0.99);
  f.cycle_max_us = cycle_us.empty() ? 0.0 : cycle_us.back();
}

inline void printLoopRun(std::size_t pods, std::string_view label, const LoopFigures& r) {
  fmt::print(
      "{}: bound {}/{} in {} cycles, {} failures; {:.0f} pods/s; loop {:.1f} us/pod wall, "
      "{:.1f} us/pod cpu (all threads); cycle p50 {:.1f} us, p99 {:.1f} us, max {:.0f} us; "
      "informer adds {:.1f} us/pod, confirmations {:.1f} us/pod; setup {:.2f} s\n",
      label, r.bound, pods, r.cycles, r.failures, static_cast<double>(r.bound) / r.schedule_s,
      usPerPod(r.schedule_s, pods), usPerPod(r.schedule_cpu_s, pods), r.cycle_p50_us,
      r.cycle_p99_us, r.cycle_max_us, usPerPod(r.feed_s, pods), usPerPod(r.confirm_s, pods),
      r.setup_s);
}

/// A and B of each round side by side, with B-A per pod and the bar B-A is held to.
inline void printLoopTable(std::span<const LoopFigures> without, std::span<const LoopFigures> with,
                           std::size_t pods, int bar_us) {
  fmt::print("\n{:<6} {:>9} {:>9} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10}\n", "", "pods/s",
             "pods/s", "loop us", "loop us", "B-A", "cpu us", "cpu us", "B-A");
  fmt::print("{:<6} {:>9} {:>9} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10}\n", "round", "A", "B",
             "A", "B", "us/pod", "A", "B", "us/pod");
  for (std::size_t i = 0; i < std::min(without.size(), with.size()); ++i) {
    const auto& a = without[i];
    const auto& b = with[i];
    const double la = usPerPod(a.schedule_s, pods), lb = usPerPod(b.schedule_s, pods);
    const double ca = usPerPod(a.schedule_cpu_s, pods), cb = usPerPod(b.schedule_cpu_s, pods);
    fmt::print(
        "{:<6} {:>9.0f} {:>9.0f} {:>10.1f} {:>10.1f} {:>+10.1f} {:>10.1f} {:>10.1f} {:>+10.1f}\n",
        i + 1, static_cast<double>(a.bound) / a.schedule_s,
        static_cast<double>(b.bound) / b.schedule_s, la, lb, lb - la, ca, cb, cb - ca);
  }
  fmt::print(
      "(loop: the scheduling thread's wall time over all pods; cpu: the process's CPU time "
      "meanwhile; the bar: B-A loop within +{} us/pod)\n",
      bar_us);
}

}  // namespace koord::bench::scheduler
