#include "koord/core/log.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <ctime>
#include <mutex>

namespace koord::log {

std::atomic<int> g_verbosity{0};

namespace {

std::mutex g_sink_mu;
Sink g_sink;  // guarded by g_sink_mu; empty means stderr

char severityLetter(Severity s) {
  switch (s) {
    case Severity::kInfo:
      return 'I';
    case Severity::kWarning:
      return 'W';
    case Severity::kError:
      return 'E';
  }
  return 'I';
}

std::string_view baseName(const char* file) {
  std::string_view f(file);
  auto slash = f.rfind('/');
  return slash == std::string_view::npos ? f : f.substr(slash + 1);
}

}  // namespace

void setVerbosity(int level) {
  g_verbosity.store(level, std::memory_order_relaxed);
}

std::string formatLine(Severity severity, const char* file, int line, std::string_view message) {
  using namespace std::chrono;
  auto now = system_clock::now();
  std::time_t secs = system_clock::to_time_t(now);
  auto micros = duration_cast<microseconds>(now.time_since_epoch()).count() % 1000000;
  std::tm tm{};
  localtime_r(&secs, &tm);
  static thread_local const long tid = ::syscall(SYS_gettid);
  // klog: Lmmdd hh:mm:ss.uuuuuu threadid file:line] msg
  std::string out = fmt::format("{}{:02}{:02} {:02}:{:02}:{:02}.{:06} {:>7} {}:{}] ",
                                severityLetter(severity), tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
                                tm.tm_min, tm.tm_sec, micros, tid, baseName(file), line);
  out.append(message);
  if (out.empty() || out.back() != '\n')
    out.push_back('\n');
  return out;
}

void write(Severity severity, const char* file, int line, std::string_view message) {
  std::string text = formatLine(severity, file, line, message);
  std::lock_guard lock(g_sink_mu);
  if (g_sink) {
    g_sink(text);
    return;
  }
  // One write(2) per line keeps lines whole when several processes share the stream.
  const char* p = text.data();
  size_t left = text.size();
  while (left > 0) {
    ssize_t n = ::write(STDERR_FILENO, p, left);
    if (n <= 0)
      break;  // nowhere left to report a failure to write the log
    p += n;
    left -= static_cast<size_t>(n);
  }
}

void setSink(Sink sink) {
  std::lock_guard lock(g_sink_mu);
  g_sink = std::move(sink);
}

}  // namespace koord::log
