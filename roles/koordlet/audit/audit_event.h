// One audit event as Koordinator's koordlet writes it (pkg/koordlet/audit Event): a JSON object
// per line with createdAt, type, level, namespace, name, container, reason and message.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "koord/core/expected.h"

namespace koord::roles::koordlet::audit {

/// Fields are left out of the JSON when empty, as Go's omitempty does. Type is "node", "pod",
/// "group" or "unknown" (the builder's node(), pod(), group(), unknown()).
struct Event {
  /// RFC 3339 with nanoseconds and the local offset (Go's time.Time text); kept as read.
  std::string created_at;
  std::string type;
  std::string level;
  std::string namespace_;
  std::string name;
  std::string container;
  std::string reason;
  std::string message;
};

/// Longest message written; longer ones are cut at a UTF-8 boundary, so that a line stays well
/// under what the reader accepts.
inline constexpr std::size_t kMaxMessageBytes = 4096;
/// Longest of the other fields.
inline constexpr std::size_t kMaxFieldBytes = 512;
/// Longest line the reader takes; longer lines are skipped.
inline constexpr std::size_t kMaxEventLineBytes = 16 * 1024;

/// `t` as Go prints a time.Time in JSON: "2006-01-02T15:04:05.999999999-07:00" in local time.
std::string formatCreatedAt(std::chrono::system_clock::time_point t);

/// One line of JSON (no newline), fields cut to their bounds.
std::string toJson(const Event& event);
/// The event of one line; an error when it is not a JSON object of string fields.
Expected<Event> parseEvent(std::string_view line);

}  // namespace koord::roles::koordlet::audit
