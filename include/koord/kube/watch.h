// Kubernetes watch streams: the newline-delimited JSON event decoder, the re-watch backoff, and a
// Watcher that keeps one resource collection's watch open across server-side stream ends.
#pragma once

#include <boost/json/value.hpp>

namespace boost::json {
class parser;
}

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <string_view>

#include "koord/kube/rest_client.h"

namespace boost::asio {
class io_context;
}

namespace koord::kube {

enum class WatchEventType { kAdded, kModified, kDeleted, kBookmark, kError };

/// "ADDED" ... "ERROR"; nullopt for anything else.
std::optional<WatchEventType> parseWatchEventType(std::string_view s);
std::string_view toString(WatchEventType t);

struct WatchEvent {
  WatchEventType type = WatchEventType::kAdded;
  /// The object; for kError a metav1.Status.
  boost::json::value object;
};

/// Splits a watch body into events. The apiserver writes one JSON object per line and JSON text
/// never holds a raw newline, so a line is an event whatever the chunking of the body was, and a
/// line that is not an event can be dropped without losing the ones after it.
class WatchDecoder {
 public:
  using Sink = std::function<void(WatchEvent)>;
  /// Why a line was dropped (it names the fault and quotes the line's start).
  using SkipSink = std::function<void(std::string_view why)>;

  /// An event larger than this is dropped: keeping it would grow the buffer without bound.
  explicit WatchDecoder(std::size_t max_event_bytes = 16u << 20);
  ~WatchDecoder();
  WatchDecoder(WatchDecoder&&) noexcept;
  WatchDecoder& operator=(WatchDecoder&&) noexcept;

  /// Calls `sink` for each complete event in order, and `skip` once for each line that is not
  /// one (malformed, nested deeper than kMaxApiObjectDepth, of no known type, or oversized: the
  /// bytes of an oversized line are discarded up to its newline, never buffered). One object a
  /// component cannot read must not stop the stream: every later event would wait behind it.
  void feed(std::string_view chunk, const Sink& sink, const SkipSink& skip);
  /// Bytes of an unfinished event waiting for the rest.
  std::size_t pending() const { return buf_.size(); }

 private:
  void decodeLine(std::string_view line, const Sink& sink, const SkipSink& skip);

  std::size_t max_;
  std::string buf_;
  bool discarding_ = false;  // inside an oversized line, until its newline
  // Kept between events: its scratch stack is allocated once, not per event.
  std::unique_ptr<boost::json::parser> parser_;
};

/// client-go's watch backoff: 0.8 s doubling to a 30 s cap, each delay stretched by up to 20%
/// random jitter (still capped) so that many watchers failing together do not retry together.
class WatchBackoff {
 public:
  explicit WatchBackoff(std::uint64_t seed = std::random_device{}()) : rng_(seed) {}
  std::chrono::milliseconds next();
  void reset() { attempt_ = 0; }

  static constexpr std::chrono::milliseconds kInitial{800};
  static constexpr std::chrono::milliseconds kCap{30000};

 private:
  int attempt_ = 0;
  std::mt19937_64 rng_;
};

struct WatchOptions {
  std::string label_selector;
  std::string field_selector;
  /// Where to start (usually the list's metadata.resourceVersion); "" = the server's choice.
  std::string resource_version;
  bool allow_bookmarks = true;
  /// Server-side stream length; 0 = random 300-600 s per stream, as client-go picks.
  std::int64_t timeout_seconds = 0;
  /// Drop a stream that is silent this long (0 = never); the server's timeout normally ends it.
  std::chrono::milliseconds idle_timeout{0};
  std::size_t max_event_bytes = 16u << 20;
};

namespace detail {
struct WatcherState;
}

/// Watches one collection and re-watches from the last resourceVersion seen when a stream ends.
/// `handler` gets every event except ERROR, serially (never concurrently). `on_error` runs once
/// when the watch ends for good: ApiError code 410 with isResourceExpired() true when the
/// resourceVersion is too old (the caller must relist), or another 4xx the server answered.
/// Transport failures and 5xx/429 are retried with WatchBackoff, and so is a stream that ends
/// within a second with no event (client-go's "very short watch"): reopening that at once would
/// be a hot loop against the server. An event that cannot be decoded is skipped with one error
/// line and koord_informer_decode_errors_total{resource}. The RestClient must outlive
/// the Watcher; callbacks never run after stop() (or the destructor) has returned on a thread
/// other than the one running them.
class Watcher {
 public:
  using Handler = std::function<void(const WatchEvent&)>;
  using ErrorHandler = std::function<void(const ApiError&)>;

  Watcher(RestClient& client, boost::asio::io_context& io, ResourceRef ref, WatchOptions options,
          Handler handler, ErrorHandler on_error);
  ~Watcher();
  Watcher(const Watcher&) = delete;
  Watcher& operator=(const Watcher&) = delete;

  void start();
  void stop();

  /// The last resourceVersion seen (bookmarks included), where a re-watch resumes.
  std::string resourceVersion() const;
  /// Streams opened so far (initial one included).
  std::size_t streamsOpened() const;

 private:
  std::shared_ptr<detail::WatcherState> state_;
};

}  // namespace koord::kube
