// metav1.Time and metav1.MicroTime on the wire: RFC 3339 in UTC, written and read the way the
// apiserver does, for every object field and Lease, Event or NodeMetric time koord touches.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace koord::kube {

/// metav1.Time's wire form: seconds precision, "2026-11-22T10:00:00Z" (sub-second time is
/// dropped, rounding toward the past).
std::string formatTime(std::chrono::system_clock::time_point t);
/// metav1.MicroTime's wire form: exactly six fractional digits, "2026-11-22T10:00:00.123456Z"
/// (sub-microsecond time is dropped).
std::string formatMicroTime(std::chrono::system_clock::time_point t);
/// Reads RFC 3339 as the apiserver writes Time and MicroTime: 0-9 fractional digits
/// (truncated to microseconds), "Z" or a +hh:mm/-hh:mm offset. nullopt when malformed, and for
/// a time system_clock cannot hold (before 1677-09-21 or after 2262-04-11).
std::optional<std::chrono::system_clock::time_point> parseTime(std::string_view text);

}  // namespace koord::kube
