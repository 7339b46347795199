#include "untimed_log.h"

#include <unistd.h>

#include <cctype>

#include "koord/core/log.h"

namespace koord::roles::device_daemon {

namespace {

// klog's header: a severity letter, then "mmdd hh:mm:ss.uuuuuu " (21 characters) before the
// thread id.
constexpr std::size_t kStampBegin = 1;
constexpr std::size_t kStampLength = 21;
constexpr std::string_view kStampShape = "dddd dd:dd:dd.dddddd ";

bool hasStamp(std::string_view line) {
  if (line.size() < kStampBegin + kStampLength)
    return false;
  for (std::size_t i = 0; i < kStampLength; ++i) {
    char c = line[kStampBegin + i];
    bool ok = kStampShape[i] == 'd' ? std::isdigit(static_cast<unsigned char>(c)) != 0
                                    : c == kStampShape[i];
    if (!ok)
      return false;
  }
  return true;
}

}  // namespace

std::string withoutTimestamp(std::string_view line) {
  if (!hasStamp(line))
    return std::string(line);
  // The stamp's space stays: a seven-digit thread id fills its column and would touch the letter.
  std::string out(line.substr(0, kStampBegin));
  out.push_back(' ');
  out.append(line.substr(kStampBegin + kStampLength));
  return out;
}

void logWithoutTimestamps() {
  log::setSink([](std::string_view line) {
    std::string text = withoutTimestamp(line);
    // One write(2) per line, as the default sink does, so lines stay whole.
    std::string_view left = text;
    while (!left.empty()) {
      ssize_t n = ::write(STDERR_FILENO, left.data(), left.size());
      if (n <= 0)
        return;  // nowhere left to report a failure to write the log
      left.remove_prefix(static_cast<std::size_t>(n));
    }
  });
}

}  // namespace koord::roles::device_daemon
