#include "write_failures.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "koord/core/log.h"
#include "koord/core/metrics.h"

namespace koord::cgroup {

namespace {

metrics::CounterFamily& writeErrors() {
  // Counted where writes are refused, so every caller's writes are covered alike.
  static auto& family = metrics::Registry::global().counter(
      "koordlet_cgroup_write_errors_total",
      "cgroup writes refused, by file name and errno: the kernel's errno, or \"range\" for a "
      "value the koordlet's range check refused (never written).",
      {"file", "errno"});
  return family;
}

bool powerOfTen(std::uint64_t n) {
  while (n >= 10 && n % 10 == 0)
    n /= 10;
  return n == 1;
}

// "range": the label an operator reads for a value koord refused itself. An errno name there
// would send them looking for a kernel refusal that never happened.
constexpr std::string_view kRangeLabel = "range";

class RangeCategory final : public boost::system::error_category {
 public:
  const char* name() const noexcept override { return "koord.cgroup.range"; }
  std::string message(int) const override { return "value refused by the range check"; }
};

}  // namespace

boost::system::error_code rangeRefusal() {
  static const RangeCategory category;
  return {EINVAL, category};
}

std::string errnoName(int err) {
  switch (err) {
    case EINVAL:
      return "EINVAL";
    case EACCES:
      return "EACCES";
    case EPERM:
      return "EPERM";
    case EROFS:
      return "EROFS";
    case ENOENT:
      return "ENOENT";
    case EBUSY:
      return "EBUSY";
    case ENOSPC:
      return "ENOSPC";
    case EISDIR:
      return "EISDIR";
    case EIO:
      return "EIO";
    case ENODEV:
      return "ENODEV";
    case ESRCH:
      return "ESRCH";
    case E2BIG:
      return "E2BIG";
    default:
      return std::to_string(err);  // bounded by the errno range, not by input
  }
}

Expected<void> WriteFailures::admit(const std::string& path, std::string_view value) {
  std::lock_guard lock(mu_);
  auto it = runs_.find(path);
  if (it == runs_.end() || it->second.value != value ||
      clock_.monotonicNow() >= it->second.retry_at)
    return {};
  // The message stays the same from round to round, so a caller that logs a changed error
  // once does not log this one again; the code is the refusal's (the errno, or the range
  // check's), as the write's was.
  const auto& run = it->second;
  return Error(
      fmt::format("write {} = {:?}: {}; retried with backoff", path, std::string(value), run.why),
      run.err == 0 ? rangeRefusal()
                   : boost::system::error_code(run.err, boost::system::system_category()));
}

void WriteFailures::refused(const std::string& path, std::string_view file, std::string_view value,
                            int err) {
  record(path, file, value, err, std::strerror(err));
}

void WriteFailures::outOfRange(const std::string& path, std::string_view file,
                               std::string_view value, std::string_view why) {
  record(path, file, value, 0, why);
}

void WriteFailures::record(const std::string& path, std::string_view file, std::string_view value,
                           int err, std::string_view why) {
  writeErrors()
      .with({std::string(file), err == 0 ? std::string(kRangeLabel) : errnoName(err)})
      .inc();
  std::lock_guard lock(mu_);
  if (runs_.size() >= kMaxRuns && !runs_.contains(path)) {
    // Runs of cgroups that went away (a deleted pod) never end with a success; the oldest
    // makes room rather than the map growing with the node's pod churn.
    runs_.erase(std::min_element(runs_.begin(), runs_.end(), [](const auto& a, const auto& b) {
      return a.second.retry_at < b.second.retry_at;
    }));
  }
  auto [it, fresh] = runs_.try_emplace(path);
  Run& run = it->second;
  if (fresh || run.err != err) {
    KOORD_LOG_WARNING(
        "cgroup write {} = {:?} refused: {}; repeats are counted in "
        "koordlet_cgroup_write_errors_total and retried with backoff",
        path, std::string(value), why);
    run = Run{};
    run.err = err;
    run.why = std::string(why);
    run.delay = kFirstDelay;
  } else {
    run.delay = std::min<std::chrono::steady_clock::duration>(run.delay * 2, kMaxDelay);
  }
  ++run.count;
  run.value = std::string(value);
  run.retry_at = clock_.monotonicNow() + run.delay;
  if (run.count > 1 && powerOfTen(run.count)) {
    KOORD_LOG_WARNING("cgroup write {}: refused {} times in a row ({}), last value {:?}", path,
                      run.count, run.why, run.value);
  }
}

void WriteFailures::succeeded(const std::string& path) {
  std::lock_guard lock(mu_);
  auto it = runs_.find(path);
  if (it == runs_.end())
    return;
  KOORD_LOG_INFO("cgroup write {}: taken after {} refused write(s) ({}, last refused {:?})", path,
                 it->second.count, it->second.why, it->second.value);
  runs_.erase(it);
}

}  // namespace koord::cgroup
