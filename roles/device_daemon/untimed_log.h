// --no-timestamp: log lines without their date and time, for supervisors (journald, a container
// runtime) that stamp every line themselves.
#pragma once

#include <string>
#include <string_view>

namespace koord::roles::device_daemon {

/// `line` as koord::log formats it ("I0724 10:00:00.123456   12345 file.cpp:1] msg") without
/// the date and time ("I   12345 file.cpp:1] msg"); any other text unchanged.
std::string withoutTimestamp(std::string_view line);

/// From now on, every log line of the process goes to stderr without its date and time.
void logWithoutTimestamps();

}  // namespace koord::roles::device_daemon
