// Logging in klog's line format ("I1121 23:41:00.123456   12345 file.cpp:42] msg") with -v levels,
// so koord's logs read and grep like every other Kubernetes component's.
#pragma once

#include <fmt/format.h>

#include <atomic>
#include <functional>
#include <string>
#include <string_view>

namespace koord::log {

enum class Severity { kInfo, kWarning, kError };

/// Verbosity for KOORD_VLOG; set once from -v/--v at startup, read lock-free on every call.
extern std::atomic<int> g_verbosity;

inline bool enabled(int level) {
  return g_verbosity.load(std::memory_order_relaxed) >= level;
}
void setVerbosity(int level);

/// Writes one complete line (atomic with respect to other threads). `file` may be a full path.
void write(Severity severity, const char* file, int line, std::string_view message);

/// Formats the klog header; exposed for tests that parse log lines back.
std::string formatLine(Severity severity, const char* file, int line, std::string_view message);

/// Replaces the output (stderr by default); tests capture lines with it. Pass nullptr to restore.
using Sink = std::function<void(std::string_view line)>;
void setSink(Sink sink);

}  // namespace koord::log

#define KOORD_LOG_INFO(...) \
  ::koord::log::write(::koord::log::Severity::kInfo, __FILE__, __LINE__, ::fmt::format(__VA_ARGS__))
#define KOORD_LOG_WARNING(...)                                              \
  ::koord::log::write(::koord::log::Severity::kWarning, __FILE__, __LINE__, \
                      ::fmt::format(__VA_ARGS__))
#define KOORD_LOG_ERROR(...)                                              \
  ::koord::log::write(::koord::log::Severity::kError, __FILE__, __LINE__, \
                      ::fmt::format(__VA_ARGS__))
/// Logged only at -v=level or above; arguments are not evaluated otherwise.
#define KOORD_VLOG(level, ...)          \
  do {                                  \
    if (::koord::log::enabled(level)) { \
      KOORD_LOG_INFO(__VA_ARGS__);      \
    }                                   \
  } while (0)
