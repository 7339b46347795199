#include "metricsadvisor/collectors/cpi/perf_event_api.h"

#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace koord::roles::koordlet::metricsadvisor {

namespace {

perf_event_attr attrFor(HwCounter counter, bool leader) {
  perf_event_attr attr;
  std::memset(&attr, 0, sizeof(attr));
  attr.type = PERF_TYPE_HARDWARE;
  attr.size = sizeof(attr);
  attr.config =
      counter == HwCounter::kCycles ? PERF_COUNT_HW_CPU_CYCLES : PERF_COUNT_HW_INSTRUCTIONS;
  attr.read_format =
      PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
  // Members follow their leader: only the leader starts disabled and is enabled for the group.
  attr.disabled = leader ? 1 : 0;
  attr.exclude_hv = 1;
  return attr;
}

long perfEventOpen(perf_event_attr& attr, int pid, int cpu, int group_fd, unsigned long flags) {
  return ::syscall(SYS_perf_event_open, &attr, pid, cpu, group_fd, flags);
}

class SystemPerfEventApi final : public PerfEventApi {
 public:
  int probe() override {
    perf_event_attr attr = attrFor(HwCounter::kCycles, true);
    // User space only, on ourselves: perf_event_paranoid must not hide whether a PMU exists
    // (the kernel checks the permission to count kernel events before it looks for the PMU).
    attr.exclude_kernel = 1;
    const long fd = perfEventOpen(attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0)
      return -errno;
    ::close(static_cast<int>(fd));
    return 0;
  }

  int open(HwCounter counter, int cgroup_fd, int cpu, int group_fd) override {
    perf_event_attr attr = attrFor(counter, group_fd < 0);
    const long fd =
        perfEventOpen(attr, cgroup_fd, cpu, group_fd, PERF_FLAG_PID_CGROUP | PERF_FLAG_FD_CLOEXEC);
    return fd < 0 ? -errno : static_cast<int>(fd);
  }

  int enable(int leader_fd) override {
    if (::ioctl(leader_fd, PERF_EVENT_IOC_RESET, PERF_IOC_FLAG_GROUP) != 0 ||
        ::ioctl(leader_fd, PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP) != 0)
      return -errno;
    return 0;
  }

  long read(int leader_fd, std::span<std::uint64_t> words) override {
    const ssize_t n = ::read(leader_fd, words.data(), words.size_bytes());
    return n < 0 ? -errno : static_cast<long>(n);
  }

  void close(int fd) override { ::close(fd); }
};

}  // namespace

PerfEventApi& systemPerfEventApi() {
  static SystemPerfEventApi api;
  return api;
}

PerfFd& PerfFd::operator=(PerfFd&& other) noexcept {
  if (this != &other) {
    reset();
    api_ = other.api_;
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

void PerfFd::reset() {
  if (fd_ >= 0 && api_ != nullptr)
    api_->close(fd_);
  fd_ = -1;
}

}  // namespace koord::roles::koordlet::metricsadvisor
