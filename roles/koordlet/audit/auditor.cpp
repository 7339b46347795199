#include "audit/auditor.h"

#include <fmt/format.h>

#include <boost/json.hpp>

#include <algorithm>
#include <charconv>
#include <random>
#include <stdexcept>
#include <utility>
#include <vector>

#include "koord/core/log.h"

namespace koord::roles::koordlet::audit {
namespace {

namespace json = boost::json;

std::mutex g_default_mu;
std::shared_ptr<Auditor> g_default;

std::shared_ptr<Auditor> defaultAuditor() {
  std::lock_guard lock(g_default_mu);
  return g_default;
}

// A random (version 4) UUID, as Koordinator's page tokens are.
std::string newToken() {
  std::random_device random;
  std::uint8_t b[16];
  for (std::size_t i = 0; i < sizeof b; i += 4) {
    const std::uint32_t r = random();
    for (std::size_t j = 0; j < 4; ++j)
      b[i + j] = static_cast<std::uint8_t>(r >> (8 * j));
  }
  b[6] = static_cast<std::uint8_t>((b[6] & 0x0f) | 0x40);
  b[8] = static_cast<std::uint8_t>((b[8] & 0x3f) | 0x80);
  return fmt::format(
      "{:02x}{:02x}{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-"
      "{:02x}{:02x}{:02x}{:02x}{:02x}{:02x}",
      b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14],
      b[15]);
}

// The first value of `key` in a query string, as sent (tokens and sizes need no decoding).
std::string_view queryValue(std::string_view query, std::string_view key) {
  while (!query.empty()) {
    const auto amp = query.find('&');
    std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    const auto eq = pair.find('=');
    if (pair.substr(0, eq) == key)
      return eq == std::string_view::npos ? std::string_view() : pair.substr(eq + 1);
  }
  return {};
}

// Go's strconv.Atoi: an optional sign and decimal digits.
std::optional<long long> atoi(std::string_view text) {
  if (!text.empty() && text.front() == '+')
    text.remove_prefix(1);
  long long v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size())
    return std::nullopt;
  return v;
}

bool acceptsJson(const http::Request& request) {
  for (const auto& [name, value] : request.headers) {
    if (!http::equalsIgnoreCase(name, "Accept"))
      continue;
    std::string_view rest = value;
    while (!rest.empty()) {
      const auto comma = rest.find(',');
      std::string_view type = rest.substr(0, comma);
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
      type = type.substr(0, type.find(';'));
      while (!type.empty() && type.front() == ' ')
        type.remove_prefix(1);
      while (!type.empty() && type.back() == ' ')
        type.remove_suffix(1);
      if (type == "application/json")
        return true;
    }
  }
  return false;
}

}  // namespace

void AuditConfig::validate() const {
  if (max_disk_space_mb <= 0)
    throw std::invalid_argument(
        fmt::format("-audit-max-disk-space-mb={}: must be positive", max_disk_space_mb));
  if (max_concurrent_readers <= 0)
    throw std::invalid_argument(
        fmt::format("-audit-max-concurrent-readers={}: must be positive", max_concurrent_readers));
  if (max_events_limit <= 0)
    throw std::invalid_argument(
        fmt::format("-audit-max-events-limit={}: must be positive", max_events_limit));
  if (log_dir.empty())
    throw std::invalid_argument("-audit-log-dir must not be empty");
}

Auditor::Auditor(AuditConfig config)
    : config_((config.validate(), std::move(config))),
      writer_(config_.log_dir, static_cast<std::uint64_t>(config_.max_disk_space_mb) << 20,
              config_.max_file_bytes) {}

void Auditor::record(int verbose, Event event) {
  if (config_.verbose > 0 && verbose > config_.verbose)
    return;
  event.created_at = formatCreatedAt(std::chrono::system_clock::now());
  const std::string line = toJson(event);
  std::lock_guard lock(write_mu_);
  auto written = writer_.append(line);
  if (!written) {
    if (!write_failing_)
      KOORD_LOG_ERROR("audit: event not recorded: {}", written.error().message);
    write_failing_ = true;
    return;
  }
  if (write_failing_)
    KOORD_LOG_INFO("audit: events are recorded again in {}", config_.log_dir.string());
  write_failing_ = false;
}

void Auditor::expireLocked(std::chrono::steady_clock::time_point now) {
  std::vector<std::shared_ptr<Reader>> expired;
  auto excess = static_cast<long long>(readers_.size()) - config_.max_concurrent_readers;
  for (auto it = readers_.begin(); it != readers_.end();) {
    if (excess > 0 || now - (*it)->used_at > config_.active_reader_ttl) {
      expired.push_back(*it);
      it = readers_.erase(it);
    } else {
      ++it;
    }
    --excess;
  }
  for (const auto& reader : expired) {
    KOORD_VLOG(2, "audit: reader {} expired", reader->token);
    // A reader in use right now finishes its page and is gone after it.
    reader->closed = true;
  }
}

std::shared_ptr<Auditor::Reader> Auditor::newReader() {
  auto reader = std::make_shared<Reader>(newToken(), config_.log_dir);
  std::lock_guard lock(readers_mu_);
  readers_.push_back(reader);
  expireLocked(std::chrono::steady_clock::now());
  return reader;
}

std::shared_ptr<Auditor::Reader> Auditor::findReader(std::string_view token) {
  std::lock_guard lock(readers_mu_);
  expireLocked(std::chrono::steady_clock::now());
  for (const auto& reader : readers_) {
    if (reader->token == token)
      return reader;
  }
  return nullptr;
}

void Auditor::dropReader(const std::shared_ptr<Reader>& reader) {
  std::lock_guard lock(readers_mu_);
  readers_.remove(reader);
}

std::size_t Auditor::activeReaders() const {
  std::lock_guard lock(readers_mu_);
  return readers_.size();
}

http::Response Auditor::handle(const http::Request& request) {
  const std::string_view size_text = queryValue(request.query, "size");
  const std::string_view token = queryValue(request.query, "pageToken");
  KOORD_VLOG(4, "audit: query from {} pageToken={} size={}", request.remote, token, size_text);

  long long size = std::min(config_.default_events_limit, config_.max_events_limit);
  if (auto s = atoi(size_text)) {
    if (*s > config_.max_events_limit)
      return http::text(
          400, fmt::format("size({}) exceeds the limit({})\n", *s, config_.max_events_limit));
    if (*s < 0)
      return http::text(400, fmt::format("size({}) must not be negative\n", *s));
    size = *s;
  }

  std::shared_ptr<Reader> reader = token.empty() ? newReader() : findReader(token);
  if (reader == nullptr)
    return http::text(409, fmt::format("invalid pageToken {}\n", token));

  std::vector<std::string> lines;
  bool eof = false;
  {
    std::lock_guard lock(reader->mu);
    if (reader->closed)
      return http::text(409, fmt::format("reader {} is expired\n", reader->token));
    reader->used_at = std::chrono::steady_clock::now();
    lines = reader->cursor.take(static_cast<std::size_t>(size));
    eof = reader->cursor.exhausted();
  }
  if (eof)
    dropReader(reader);

  std::vector<Event> events;
  events.reserve(lines.size());
  for (const std::string& line : lines) {
    auto event = parseEvent(line);
    if (!event) {
      KOORD_VLOG(4, "audit: reader {} skips a line: {}", reader->token, event.error().message);
      continue;
    }
    events.push_back(std::move(*event));
  }

  if (acceptsJson(request)) {
    // Go's field names (JsonResponse has no tags); the events as toJson writes them.
    std::string body = "{\"NextPageToken\":";
    body += json::serialize(json::string(eof ? std::string_view() : reader->token));
    body += ",\"Events\":[";
    for (std::size_t i = 0; i < events.size(); ++i) {
      if (i > 0)
        body += ',';
      body += toJson(events[i]);
    }
    body += "]}";
    return http::json(200, std::move(body));
  }
  http::Response response;
  response.status = 200;
  response.content_type = "text/plain; charset=utf-8";
  for (const Event& e : events) {
    response.body += toJson(e);
    response.body += '\n';
  }
  if (!eof)
    response.headers.emplace_back("Next-Page-Token", reader->token);
  return response;
}

EventBuilder& EventBuilder::node() {
  event_.type = "node";
  return *this;
}

EventBuilder& EventBuilder::pod(std::string_view namespace_, std::string_view name) {
  event_.type = "pod";
  event_.namespace_ = namespace_;
  event_.name = name;
  return *this;
}

EventBuilder& EventBuilder::group(std::string_view name) {
  event_.type = "group";
  event_.name = name;
  return *this;
}

EventBuilder& EventBuilder::unknown(std::string_view name) {
  event_.type = "unknown";
  event_.name = name;
  return *this;
}

EventBuilder& EventBuilder::container(std::string_view name) {
  event_.container = name;
  return *this;
}

EventBuilder& EventBuilder::reason(std::string_view reason) {
  event_.reason = reason;
  return *this;
}

EventBuilder& EventBuilder::message(std::string message) {
  event_.message = std::move(message);
  return *this;
}

void EventBuilder::record() {
  if (auto auditor = defaultAuditor())
    auditor->record(verbose_, std::move(event_));
}

bool enabled() {
  return defaultAuditor() != nullptr;
}

DefaultAuditorScope::DefaultAuditorScope(std::shared_ptr<Auditor> auditor) {
  std::lock_guard lock(g_default_mu);
  previous_ = std::exchange(g_default, std::move(auditor));
}

DefaultAuditorScope::~DefaultAuditorScope() {
  std::lock_guard lock(g_default_mu);
  g_default = std::move(previous_);
}

}  // namespace koord::roles::koordlet::audit
