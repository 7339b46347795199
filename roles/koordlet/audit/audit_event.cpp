#include "audit/audit_event.h"

#include <fmt/format.h>

#include <boost/json.hpp>

#include <ctime>
#include <utility>

namespace koord::roles::koordlet::audit {
namespace {

namespace json = boost::json;

// Keeps the first `max` bytes, backing off to the start of a UTF-8 sequence so that the cut
// leaves valid text.
std::string_view cut(std::string_view s, std::size_t max) {
  if (s.size() <= max)
    return s;
  std::size_t end = max;
  while (end > 0 && (static_cast<unsigned char>(s[end]) & 0xC0) == 0x80)
    --end;
  return s.substr(0, end);
}

// Go's struct order; omitempty drops empty strings.
struct Field {
  std::string_view json_name;
  std::string Event::*member;
  std::size_t max;
};
constexpr Field kFields[] = {
    {"createdAt", &Event::created_at, kMaxFieldBytes},
    {"type", &Event::type, kMaxFieldBytes},
    {"level", &Event::level, kMaxFieldBytes},
    {"namespace", &Event::namespace_, kMaxFieldBytes},
    {"name", &Event::name, kMaxFieldBytes},
    {"container", &Event::container, kMaxFieldBytes},
    {"reason", &Event::reason, kMaxFieldBytes},
    {"message", &Event::message, kMaxMessageBytes},
};

}  // namespace

std::string formatCreatedAt(std::chrono::system_clock::time_point t) {
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch());
  auto secs = static_cast<std::time_t>(std::chrono::floor<std::chrono::seconds>(ns).count());
  auto frac = (ns - std::chrono::floor<std::chrono::seconds>(ns)).count();
  std::tm tm{};
  localtime_r(&secs, &tm);
  std::string out = fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}", tm.tm_year + 1900,
                                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
  if (frac != 0) {
    std::string digits = fmt::format(".{:09}", frac);
    while (digits.back() == '0')
      digits.pop_back();
    out += digits;
  }
  const long offset = tm.tm_gmtoff;
  if (offset == 0)
    return out + "Z";
  const long minutes = (offset < 0 ? -offset : offset) / 60;
  return out + fmt::format("{}{:02}:{:02}", offset < 0 ? '-' : '+', minutes / 60, minutes % 60);
}

std::string toJson(const Event& event) {
  json::object out;
  for (const Field& f : kFields) {
    const std::string& value = event.*f.member;
    if (!value.empty())
      out.emplace(f.json_name, cut(value, f.max));
  }
  return json::serialize(out);
}

Expected<Event> parseEvent(std::string_view line) {
  if (line.size() > kMaxEventLineBytes)
    return invalidArgument(fmt::format("an event line of {} bytes", line.size()));
  boost::system::error_code ec;
  json::value parsed = json::parse(line, ec);
  if (ec)
    return invalidArgument(fmt::format("not JSON: {}", ec.message()));
  const json::object* object = parsed.if_object();
  if (object == nullptr)
    return invalidArgument("not a JSON object");
  Event event;
  for (const Field& f : kFields) {
    const json::value* value = object->if_contains(f.json_name);
    if (value == nullptr || value->is_null())
      continue;
    const json::string* text = value->if_string();
    if (text == nullptr)
      return invalidArgument(fmt::format("{} is not a string", f.json_name));
    event.*f.member = std::string(cut(*text, f.max));
  }
  return event;
}

}  // namespace koord::roles::koordlet::audit
