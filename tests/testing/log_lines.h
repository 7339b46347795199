// Captures koord's log lines for tests that check that a fault was logged once, at the right
// severity, naming the right file.
#pragma once

#include <algorithm>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "koord/core/log.h"

namespace koord::testing {

// count() and problems() may run while other threads log (a test polling for a line); reading
// `lines` directly is for when those threads are done.
struct LogLines {
  std::vector<std::string> lines;
  LogLines() {
    log::setSink([this](std::string_view l) {
      std::lock_guard lock(mu);
      lines.emplace_back(l);
    });
  }
  ~LogLines() { log::setSink(nullptr); }
  LogLines(const LogLines&) = delete;
  LogLines& operator=(const LogLines&) = delete;

  std::size_t count(std::string_view needle) const {
    std::lock_guard lock(mu);
    return static_cast<std::size_t>(std::count_if(lines.begin(), lines.end(), [&](const auto& l) {
      return l.find(needle) != std::string::npos;
    }));
  }
  /// Lines at warning or error severity (klog's W and E).
  std::size_t problems() const {
    std::lock_guard lock(mu);
    return static_cast<std::size_t>(std::count_if(lines.begin(), lines.end(), [](const auto& l) {
      return !l.empty() && (l[0] == 'W' || l[0] == 'E');
    }));
  }

  mutable std::mutex mu;
};

}  // namespace koord::testing
