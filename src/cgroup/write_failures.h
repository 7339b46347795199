// Refused cgroup writes (the kernel's refusals and values the range check refuses): counted per
// file and errno, logged once per run of failures of one file, retried with backoff, not every
// round.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>

#include "koord/core/clock.h"
#include "koord/core/expected.h"

namespace koord::cgroup {

/// A reconcile loop that rewrites a value the kernel refuses (a parent quota below a child's,
/// a read-only file), or computes one the range check refuses (quota 999, garbage), would
/// otherwise log and retry it every round forever. The first refusal of a file is logged; repeats
/// with the same errno are counted (koordlet_cgroup_write_errors_total and a line at each power of
/// ten) and the same value is not tried again until a delay that doubles from 1 s to 5 min has
/// passed. A different value is tried at once: it may be one the kernel takes. A success after
/// refusals is logged with their count and ends the run.
class WriteFailures {
 public:
  explicit WriteFailures(const Clock& clock) : clock_(clock) {}

  /// An error when `value` was refused for `path` and its delay has not passed yet; its code is
  /// that refusal's (the errno, or rangeRefusal()).
  Expected<void> admit(const std::string& path, std::string_view value);
  /// The kernel refused `value` with `err`.
  void refused(const std::string& path, std::string_view file, std::string_view value, int err);
  /// The range check refused `value` (nothing was written); `why` is its message. Counted with
  /// errno="range".
  void outOfRange(const std::string& path, std::string_view file, std::string_view value,
                  std::string_view why);
  /// The kernel took a write to `path`.
  void succeeded(const std::string& path);

  static constexpr std::chrono::seconds kFirstDelay{1};
  static constexpr std::chrono::seconds kMaxDelay{300};
  static constexpr std::size_t kMaxRuns = 1024;

 private:
  // err 0: the range check's refusal, which `why` explains.
  void record(const std::string& path, std::string_view file, std::string_view value, int err,
              std::string_view why);

  struct Run {
    int err = 0;
    std::string why;
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

/// The code of a write the range check refused: not an errno, since the kernel never saw it.
boost::system::error_code rangeRefusal();

}  // namespace koord::cgroup
