// One bench run in a forked child process, so that no run inherits the heap another left; the
// run's figures (a trivially copyable struct) come back through a pipe.
#pragma once

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <string>
#include <string_view>
#include <type_traits>

#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include "koord/core/expected.h"

namespace koord::bench::scheduler {

/// The result of `run()` computed in a child process; an error when the child could not be
/// started or did not report (it crashed, or exited early).
template <typename Result, typename Run>
Expected<Result> runInChildProcess(Run&& run) {
  static_assert(std::is_trivially_copyable_v<Result>);
  int fds[2];
  if (::pipe(fds) != 0)
    return invalidArgument("pipe failed");
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t pid = ::fork();
  if (pid < 0)
    return invalidArgument("fork failed");
  if (pid == 0) {
    ::close(fds[0]);
    const Result result = run();
    const auto* bytes = reinterpret_cast<const char*>(&result);
    std::size_t off = 0;
    while (off < sizeof result) {
      const auto n = ::write(fds[1], bytes + off, sizeof result - off);
      if (n <= 0)
        break;
      off += static_cast<std::size_t>(n);
    }
    // Skips the destructors: the figures are out, and tearing the cluster down is not timed.
    ::_exit(0);
  }
  ::close(fds[1]);
  std::string bytes;
  char buf[4096];
  for (;;) {
    const auto n = ::read(fds[0], buf, sizeof buf);
    if (n <= 0)
      break;
    bytes.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (bytes.size() != sizeof(Result))
    return invalidArgument(
        fmt::format("the run's child process reported {} bytes (status {})", bytes.size(), status));
  Result r;
  std::memcpy(&r, bytes.data(), sizeof r);
  return r;
}

/// The process's CPU time over all its threads.
inline double processCpuSeconds() {
  timespec ts{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

/// Copies `from` into a fixed buffer of a Result, cut to fit and NUL-terminated.
inline void copyText(char* to, std::size_t size, std::string_view from) {
  const std::size_t n = std::min(size - 1, from.size());
  std::memcpy(to, from.data(), n);
  to[n] = '\0';
}

}  // namespace koord::bench::scheduler
