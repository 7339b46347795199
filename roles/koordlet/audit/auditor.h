// The koordlet's auditor (Koordinator's AuditEvents): what the koordlet did to pods and cgroups,
// recorded with audit::V(n)...record() into the rotating audit log and paged back over HTTP.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <filesystem>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "audit/audit_event.h"
#include "audit/event_log.h"
#include "koord/http/message.h"

namespace koord::roles::koordlet::audit {

/// Koordinator's audit.Config, with its defaults.
struct AuditConfig {
  std::filesystem::path log_dir = "/var/log/koordlet";  // -audit-log-dir
  /// Events of a higher V level are not recorded; 0 records all (-audit-verbose).
  int verbose = 3;
  int max_disk_space_mb = 16;      // -audit-max-disk-space-mb
  int max_concurrent_readers = 4;  // -audit-max-concurrent-readers
  std::chrono::milliseconds active_reader_ttl{std::chrono::minutes(10)};
  int default_events_limit = 256;
  int max_events_limit = 2048;  // -audit-max-events-limit
  std::size_t max_file_bytes = kDefaultMaxFileBytes;

  /// Throws std::invalid_argument naming the flag of a value the auditor cannot honour.
  void validate() const;
};

/// The path Koordinator's koordlet serves the audit log on (with AuditEventsHTTPHandler).
inline constexpr std::string_view kAuditHttpPath = "/events";

class Auditor {
 public:
  /// Creates the log directory; throws std::invalid_argument or std::runtime_error (a startup
  /// fault) when the config is bad or the directory cannot be made.
  explicit Auditor(AuditConfig config);
  Auditor(const Auditor&) = delete;
  Auditor& operator=(const Auditor&) = delete;

  /// Stamps the event with the time and appends it unless `verbose` is above the configured
  /// level. A failed write is logged once until a write succeeds again.
  void record(int verbose, Event event);

  /// GET /events?size=N&pageToken=T: up to N events (default 256, at most
  /// -audit-max-events-limit), newest first. Without a token a new reader starts at the newest
  /// event; the answer's token continues it until the oldest event has been read. With "Accept:
  /// application/json" a {"NextPageToken","Events"} object, else one JSON event per line and the
  /// token in the Next-Page-Token header. At most -audit-max-concurrent-readers readers are kept
  /// (the oldest goes first) and one unused for active_reader_ttl goes too: its token then
  /// answers 409.
  http::Response handle(const http::Request& request);

  std::size_t activeReaders() const;
  const AuditConfig& config() const { return config_; }

 private:
  struct Reader {
    std::string token;
    std::chrono::steady_clock::time_point used_at;
    std::mutex mu;
    EventLogCursor cursor;
    std::atomic<bool> closed{false};
    Reader(std::string t, std::filesystem::path dir)
        : token(std::move(t)), used_at(std::chrono::steady_clock::now()), cursor(std::move(dir)) {}
  };

  std::shared_ptr<Reader> newReader();
  std::shared_ptr<Reader> findReader(std::string_view token);
  void dropReader(const std::shared_ptr<Reader>& reader);
  void expireLocked(std::chrono::steady_clock::time_point now);

  const AuditConfig config_;
  EventLogWriter writer_;
  std::mutex write_mu_;
  bool write_failing_ = false;
  mutable std::mutex readers_mu_;
  std::list<std::shared_ptr<Reader>> readers_;  // oldest first
};

/// Builds one event fluently, as Koordinator's audit.V(n).Pod(ns, name).Reason(r).Message(m)
/// .Do(): audit::V(0).pod(ns, name).reason(r).message(m).record().
class EventBuilder {
 public:
  explicit EventBuilder(int verbose) : verbose_(verbose) {}

  EventBuilder& node();
  EventBuilder& pod(std::string_view namespace_, std::string_view name);
  /// A resource group, e.g. "blkio" or a cgroup subsystem.
  EventBuilder& group(std::string_view name);
  EventBuilder& unknown(std::string_view name);
  EventBuilder& container(std::string_view name);
  EventBuilder& reason(std::string_view reason);
  EventBuilder& message(std::string message);
  /// Records to the default auditor; nothing when none is installed (AuditEvents off).
  void record();

 private:
  int verbose_;
  Event event_;
};

/// Starts an event of V level `verbose` (0: always recorded; higher levels only up to
/// -audit-verbose).
inline EventBuilder V(int verbose) {
  return EventBuilder(verbose);
}

/// Whether a default auditor is installed, for callers that would build an expensive message.
bool enabled();

/// Installs `auditor` (may be null) as the one V() records to, until the scope ends; the
/// previous one comes back then.
class DefaultAuditorScope {
 public:
  explicit DefaultAuditorScope(std::shared_ptr<Auditor> auditor);
  ~DefaultAuditorScope();
  DefaultAuditorScope(const DefaultAuditorScope&) = delete;
  DefaultAuditorScope& operator=(const DefaultAuditorScope&) = delete;

 private:
  std::shared_ptr<Auditor> previous_;
};

}  // namespace koord::roles::koordlet::audit
