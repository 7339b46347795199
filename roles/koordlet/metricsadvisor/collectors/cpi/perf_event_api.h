// The perf_event_open(2) calls of the CPI collector behind an interface, so tests can stand in
// for the kernel's PMU, and a perf fd that closes itself through that interface.
#pragma once

#include <cstdint>
#include <span>

namespace koord::roles::koordlet::metricsadvisor {

enum class HwCounter { kCycles, kInstructions };

/// The kernel calls, each returning -errno on failure (never throwing). Counters are opened
/// disabled and read as a group: PERF_FORMAT_GROUP | TOTAL_TIME_ENABLED | TOTAL_TIME_RUNNING.
class PerfEventApi {
 public:
  virtual ~PerfEventApi() = default;

  /// Whether this host counts hardware events at all: opens (and closes) a user-space cycles
  /// counter on the calling process. 0, or -ENOENT / -EOPNOTSUPP / -ENODEV where there is no
  /// PMU (most virtual machines), -ENOSYS without perf events in the kernel.
  virtual int probe() = 0;
  /// perf_event_open of `counter` for the tasks of the cgroup whose directory `cgroup_fd` is
  /// open on, on `cpu` (PERF_FLAG_PID_CGROUP), in the group led by `group_fd` (-1: a new
  /// leader). The fd, or -errno.
  virtual int open(HwCounter counter, int cgroup_fd, int cpu, int group_fd) = 0;
  /// Resets and enables a leader with its group; 0 or -errno.
  virtual int enable(int leader_fd) = 0;
  /// read(2) of a leader into `words`: the bytes read, or -errno.
  virtual long read(int leader_fd, std::span<std::uint64_t> words) = 0;
  virtual void close(int fd) = 0;
};

/// The real system calls.
PerfEventApi& systemPerfEventApi();

/// One open perf fd; move-only, closed through its api when it goes.
class PerfFd {
 public:
  PerfFd() = default;
  PerfFd(PerfEventApi& api, int fd) : api_(&api), fd_(fd) {}
  ~PerfFd() { reset(); }
  PerfFd(PerfFd&& other) noexcept : api_(other.api_), fd_(other.fd_) { other.fd_ = -1; }
  PerfFd& operator=(PerfFd&& other) noexcept;
  PerfFd(const PerfFd&) = delete;
  PerfFd& operator=(const PerfFd&) = delete;

  int get() const { return fd_; }
  explicit operator bool() const { return fd_ >= 0; }
  void reset();

 private:
  PerfEventApi* api_ = nullptr;
  int fd_ = -1;
};

}  // namespace koord::roles::koordlet::metricsadvisor
