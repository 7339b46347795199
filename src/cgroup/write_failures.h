// Kernel refusals of cgroup writes: counted per file and errno, logged once per run of failures
// of one file, and retried with backoff instead of every round.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>

#include "koord/core/clock.h"
#include "koord/kube/error.h"

namespace koord::cgroup {

/// A reconcile loop that rewrites a value the kernel refuses (a parent quota below a child's,
/// a read-only file) would otherwise log and retry it every round forever. The first refusal of
/// a file is logged; repeats with the same errno are counted (koordlet_cgroup_write_errors_total
/// and a line at each power of ten) and the same value is not tried again until a delay that
/// doubles from 1 s to 5 min has passed. A different value is tried at once: it may be one the
/// kernel takes. A success after refusals is logged with their count and ends the run.
class WriteFailures {
 public:
  explicit WriteFailures(const Clock& clock) : clock_(clock) {}

  /// An error when `value` was refused for `path` and its delay has not passed yet; its code is
  /// the errno of that refusal.
  kube::Expected<void> admit(const std::string& path, std::string_view value);
  /// The kernel refused `value` with `err`.
  void refused(const std::string& path, std::string_view file, std::string_view value, int err);
  /// The kernel took a write to `path`.
  void succeeded(const std::string& path);

  static constexpr std::chrono::seconds kFirstDelay{1};
  static constexpr std::chrono::seconds kMaxDelay{300};
  static constexpr std::size_t kMaxRuns = 1024;

 private:
  struct Run {
    int err = 0;
    std::string value;
    std::uint64_t count = 0;
    std::chrono::steady_clock::duration delay{};
    std::chrono::steady_clock::time_point retry_at;
  };

  const Clock& clock_;
  std::mutex mu_;
  std::map<std::string, Run, std::less<>> runs_;  // by absolute file path
};

/// "EINVAL", "EACCES", ...: the errno label of koordlet_cgroup_write_errors_total.
std::string errnoName(int err);

}  // namespace koord::cgroup
