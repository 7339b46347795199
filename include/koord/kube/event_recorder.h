// core/v1 Events about what a component did to an object: recorded without blocking, then
// de-duplicated, aggregated and spam-filtered as client-go's EventCorrelator does before sending.
#pragma once

#include <boost/json/value.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "koord/core/clock.h"
#include "koord/kube/rest_client.h"

namespace boost::asio {
class io_context;
}

namespace koord::kube {

/// core/v1 ObjectReference: the object an Event is about.
struct ObjectReference {
  std::string kind;
  std::string api_version;
  std::string namespace_;  // empty for cluster-scoped objects
  std::string name;
  std::string uid;
  std::string resource_version;
  std::string field_path;
};

enum class EventType { kNormal, kWarning };
/// "Normal" or "Warning", as the API spells them.
std::string_view toString(EventType type);

/// Who reports: the component ("koord-manager") and the node or instance it runs on.
struct EventSource {
  std::string component;
  std::string host;
};

/// A core/v1 Event as the recorder writes it.
struct Event {
  std::string name;
  std::string namespace_;
  ObjectReference involved_object;
  EventType type = EventType::kNormal;
  std::string reason;
  std::string message;
  EventSource source;
  std::int32_t count = 1;
  std::chrono::system_clock::time_point first_timestamp;
  std::chrono::system_clock::time_point last_timestamp;
};

/// A first occurrence at `now`: count 1, named `<object name>.<unix nanoseconds in hex>` (unique
/// per occurrence, as client-go names them), in the object's namespace or "default".
Event makeEvent(const ObjectReference& object, EventType type, std::string reason,
                std::string message, const EventSource& source,
                std::chrono::system_clock::time_point now);

/// The Event object to POST.
boost::json::value eventToJson(const Event& event);
/// The patch that records a repeat: count, lastTimestamp and message.
boost::json::value eventRepeatPatch(const Event& event);

struct EventCorrelatorOptions {
  /// Entries of each LRU cache (repeats, similar events, spam buckets).
  std::size_t cache_size = 4096;
  /// Similar events (differing only in message) before they are combined into one.
  std::size_t max_similar_events = 10;
  /// Similar events further apart than this start a new count.
  std::chrono::seconds similar_window{600};
  /// Per source and object: a bucket of `spam_burst` events refilled at `spam_qps`.
  int spam_burst = 25;
  double spam_qps = 1.0 / 300.0;
};

/// What to do with one event after correlation.
struct CorrelatedEvent {
  /// The spam filter dropped it: send nothing.
  bool skip = false;
  /// ...and it is the first drop since this source and object last got through (log it once).
  bool first_skip = false;
  /// What to write. With count > 1 it repeats an earlier Event of the same name: PATCH it with
  /// eventRepeatPatch, and create it when the server no longer has it.
  Event event;
  /// The repeat cache's key: equal for events that are counted as one.
  std::string key;
};

/// The recorder's decisions without any I/O, so they can be tested against a FakeClock. Not
/// thread-safe (the recorder calls it under its lock).
/// - Repeats (same source, object, type, reason and message) become one Event with a count.
/// - From the max_similar_events-th distinct message within the window on the same source,
///   object, type and reason, they are one Event with the message
///   "(combined from similar events): <latest message>", counted like repeats.
/// - Events over the per-(source, object) token bucket are skipped. The filter runs first, so
///   a skipped event leaves no trace in the counts.
class EventCorrelator {
 public:
  explicit EventCorrelator(Clock& clock = Clock::real(), EventCorrelatorOptions options = {});
  ~EventCorrelator();
  EventCorrelator(const EventCorrelator&) = delete;
  EventCorrelator& operator=(const EventCorrelator&) = delete;

  /// `event` as makeEvent built it.
  CorrelatedEvent correlate(Event event);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

namespace detail {
struct EventRecorderState;
}

/// Records Events for one source. record() only queues (at most kMaxQueuedEvents waiting, then
/// events are dropped, counted and logged once per burst); chains of work on the io_context
/// correlate and write them through the RestClient, several at once but one at a time per
/// involved object, so a repeat is never sent before the Event it patches exists. Transport
/// failures are retried up to 12 times 10 s apart; an error the server answered is logged once with
/// the object's key and the event given up, as client-go does. The RestClient and the io_context
/// must outlive the recorder; events not yet written when the recorder is destroyed are dropped.
/// The destructor returns once no chain is inside a RestClient call, and none starts after it,
/// so the client may be destroyed next even while the io_context still runs (answers to requests
/// already sent only end their chains).
class EventRecorder {
 public:
  static constexpr std::size_t kMaxQueuedEvents = 1000;

  EventRecorder(RestClient& client, boost::asio::io_context& io, EventSource source,
                Clock& clock = Clock::real(), EventCorrelatorOptions options = {});
  ~EventRecorder();
  EventRecorder(const EventRecorder&) = delete;
  EventRecorder& operator=(const EventRecorder&) = delete;

  /// Thread-safe and non-blocking.
  void record(const ObjectReference& object, EventType type, std::string reason,
              std::string message);

  /// Waits until every event recorded so far is written or given up; false on timeout. Must
  /// not be called on the io_context's threads (it would wait for itself).
  bool flush(std::chrono::milliseconds timeout);

  /// Dropped because the backlog was full.
  std::uint64_t droppedCount() const;
  /// Dropped by the spam filter.
  std::uint64_t filteredCount() const;

 private:
  std::shared_ptr<detail::EventRecorderState> state_;
};

}  // namespace koord::kube
