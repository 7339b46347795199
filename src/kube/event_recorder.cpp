#include "koord/kube/event_recorder.h"

#include <fmt/format.h>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/json.hpp>

#include <algorithm>
#include <condition_variable>
#include <ctime>
#include <deque>
#include <list>
#include <mutex>
#include <random>
#include <unordered_map>
#include <utility>
#include <vector>

#include "koord/core/log.h"
#include "koord/kube/time.h"

namespace koord::kube {

namespace json = boost::json;

std::string_view toString(EventType type) {
  return type == EventType::kWarning ? "Warning" : "Normal";
}

Event makeEvent(const ObjectReference& object, EventType type, std::string reason,
                std::string message, const EventSource& source,
                std::chrono::system_clock::time_point now) {
  Event e;
  const auto nanos = std::chrono::duration_cast<std::chrono::nanoseconds>(now.time_since_epoch());
  e.name = fmt::format("{}.{:x}", object.name, static_cast<std::uint64_t>(nanos.count()));
  e.namespace_ = object.namespace_.empty() ? "default" : object.namespace_;
  e.involved_object = object;
  e.type = type;
  e.reason = std::move(reason);
  e.message = std::move(message);
  e.source = source;
  e.count = 1;
  e.first_timestamp = now;
  e.last_timestamp = now;
  return e;
}

json::value eventToJson(const Event& event) {
  const auto& o = event.involved_object;
  json::object involved;
  auto put = [](json::object& obj, std::string_view key, const std::string& value) {
    if (!value.empty())
      obj[key] = value;
  };
  put(involved, "kind", o.kind);
  put(involved, "namespace", o.namespace_);
  put(involved, "name", o.name);
  put(involved, "uid", o.uid);
  put(involved, "apiVersion", o.api_version);
  put(involved, "resourceVersion", o.resource_version);
  put(involved, "fieldPath", o.field_path);
  json::object source;
  put(source, "component", event.source.component);
  put(source, "host", event.source.host);

  json::object body{
      {"apiVersion", "v1"},
      {"kind", "Event"},
      {"metadata", {{"name", event.name}, {"namespace", event.namespace_}}},
      {"involvedObject", std::move(involved)},
      {"reason", event.reason},
      {"message", event.message},
      {"source", std::move(source)},
      {"firstTimestamp", formatTime(event.first_timestamp)},
      {"lastTimestamp", formatTime(event.last_timestamp)},
      {"count", event.count},
      {"type", toString(event.type)},
  };
  put(body, "reportingComponent", event.source.component);
  put(body, "reportingInstance", event.source.host);
  return body;
}

json::value eventRepeatPatch(const Event& event) {
  return json::object{{"count", event.count},
                      {"lastTimestamp", formatTime(event.last_timestamp)},
                      {"message", event.message}};
}

namespace {

// Least recently used entries are evicted beyond `capacity`, so a component that touches many
// objects holds bounded state.
template <typename V>
class LruCache {
 public:
  explicit LruCache(std::size_t capacity) : capacity_(std::max<std::size_t>(capacity, 1)) {}

  V* get(const std::string& key) {
    auto it = index_.find(key);
    if (it == index_.end())
      return nullptr;
    items_.splice(items_.begin(), items_, it->second);
    return &it->second->second;
  }

  V& put(const std::string& key, V value) {
    if (V* existing = get(key)) {
      *existing = std::move(value);
      return *existing;
    }
    items_.emplace_front(key, std::move(value));
    index_.emplace(key, items_.begin());
    if (items_.size() > capacity_) {
      index_.erase(items_.back().first);
      items_.pop_back();
    }
    return items_.front().second;
  }

 private:
  using List = std::list<std::pair<std::string, V>>;
  std::size_t capacity_;
  List items_;
  std::unordered_map<std::string, typename List::iterator> index_;
};

// Fields joined with a separator no Kubernetes name, kind or reason can hold; the message, which
// may hold anything, always comes last.
std::string joinKey(std::initializer_list<std::string_view> parts) {
  std::string key;
  for (auto p : parts) {
    key += p;
    key += '\x1f';
  }
  return key;
}

std::string spamKey(const Event& e) {
  const auto& o = e.involved_object;
  return joinKey(
      {e.source.component, e.source.host, o.kind, o.namespace_, o.name, o.uid, o.api_version});
}

std::string similarKey(const Event& e) {
  const auto& o = e.involved_object;
  return joinKey({e.source.component, e.source.host, o.kind, o.namespace_, o.name, o.uid,
                  o.api_version, toString(e.type), e.reason});
}

std::string repeatKey(const Event& e) {
  const auto& o = e.involved_object;
  return joinKey({e.source.component, e.source.host, o.kind, o.namespace_, o.name, o.field_path,
                  o.uid, o.api_version, toString(e.type), e.reason, e.message});
}

}  // namespace

struct EventCorrelator::Impl {
  using Mono = std::chrono::steady_clock::time_point;

  // GCRA form of a token bucket: `tat` is when the bucket would be full again. Integer time, so
  // "one more event after exactly one refill interval" holds without rounding doubts.
  struct SpamRecord {
    Mono tat;
    bool dropping = false;
  };
  struct SimilarRecord {
    std::vector<std::string> messages;  // distinct, oldest first
    Mono last;
  };
  struct RepeatRecord {
    std::int32_t count = 0;
    std::chrono::system_clock::time_point first;
    std::string name;
  };

  Impl(Clock& c, EventCorrelatorOptions o)
      : clock(c),
        options(std::move(o)),
        spam(options.cache_size),
        similar(options.cache_size),
        repeats(options.cache_size) {
    if (options.spam_qps > 0) {
      spam_interval =
          std::chrono::nanoseconds(static_cast<std::int64_t>(1e9 / options.spam_qps + 0.5));
    }
  }

  // True when the event may go out.
  bool admit(const Event& e, Mono now, bool& first_skip) {
    if (spam_interval.count() <= 0)
      return true;
    const std::string key = spamKey(e);
    SpamRecord* rec = spam.get(key);
    if (rec == nullptr)
      rec = &spam.put(key, SpamRecord{now, false});
    const Mono tat = std::max(rec->tat, now);
    const auto tolerance = spam_interval * (std::max(options.spam_burst, 1) - 1);
    if (tat - now > tolerance) {
      first_skip = !rec->dropping;
      rec->dropping = true;
      return false;
    }
    rec->tat = tat + spam_interval;
    rec->dropping = false;
    return true;
  }

  // The event to count: itself, or the combined event once its similar messages are too many.
  Event combine(Event e, Mono now, std::string& key) {
    const std::string skey = similarKey(e);
    SimilarRecord* rec = similar.get(skey);
    if (rec == nullptr || now - rec->last > options.similar_window)
      rec = &similar.put(skey, SimilarRecord{{}, now});
    if (std::find(rec->messages.begin(), rec->messages.end(), e.message) == rec->messages.end())
      rec->messages.push_back(e.message);
    rec->last = now;
    if (rec->messages.size() < options.max_similar_events) {
      key = repeatKey(e);
      return e;
    }
    // Keep the set at its limit, so every further distinct message is combined too.
    rec->messages.erase(rec->messages.begin());
    key = skey;
    return makeEvent(e.involved_object, e.type, e.reason,
                     "(combined from similar events): " + e.message, e.source, e.last_timestamp);
  }

  Clock& clock;
  const EventCorrelatorOptions options;
  std::chrono::nanoseconds spam_interval{0};
  LruCache<SpamRecord> spam;
  LruCache<SimilarRecord> similar;
  LruCache<RepeatRecord> repeats;
};

EventCorrelator::EventCorrelator(Clock& clock, EventCorrelatorOptions options)
    : impl_(std::make_unique<Impl>(clock, std::move(options))) {}

EventCorrelator::~EventCorrelator() = default;

CorrelatedEvent EventCorrelator::correlate(Event event) {
  CorrelatedEvent out;
  const auto now = impl_->clock.monotonicNow();
  if (!impl_->admit(event, now, out.first_skip)) {
    out.skip = true;
    out.event = std::move(event);
    return out;
  }
  out.event = impl_->combine(std::move(event), now, out.key);
  Event& e = out.event;
  if (auto* seen = impl_->repeats.get(out.key)) {
    seen->count += 1;
    e.count = seen->count;
    e.first_timestamp = seen->first;
    e.name = seen->name;
  } else {
    impl_->repeats.put(out.key, Impl::RepeatRecord{1, e.first_timestamp, e.name});
  }
  return out;
}

namespace detail {

namespace {

// client-go's recordToSink: 12 tries, 10 s apart (the first wait random so that clients which
// lost the API server together do not return together).
constexpr int kMaxTries = 12;
constexpr std::chrono::seconds kRetryWait{10};

std::string objectKey(const ObjectReference& o) {
  return o.namespace_.empty() ? fmt::format("{} {}", o.kind, o.name)
                              : fmt::format("{} {}/{}", o.kind, o.namespace_, o.name);
}

}  // namespace

struct EventRecorderState : std::enable_shared_from_this<EventRecorderState> {
  // One event being written: kept across its retries.
  struct Write {
    Event event;
    bool create = false;  // a repeat whose Event is gone is created again
    int tries = 0;
  };

  // Events about one object always take the same lane and a lane writes one at a time, so a
  // repeat is never sent before the Event it patches exists; lanes write side by side, so a
  // scheduler binding a few hundred pods a second is not held to one Event per round trip.
  struct Lane {
    explicit Lane(boost::asio::io_context& io) : timer(io) {}
    std::deque<Event> queue;
    bool busy = false;  // a chain is running: correlating, writing, or waiting to retry
    boost::asio::steady_timer timer;
  };
  static constexpr std::size_t kLanes = 8;

  EventRecorderState(RestClient& c, boost::asio::io_context& io_in, EventSource s, Clock& cl,
                     EventCorrelatorOptions o)
      : client(c), io(io_in), source(std::move(s)), clock(cl), correlator(cl, o) {
    lanes.reserve(kLanes);
    for (std::size_t i = 0; i < kLanes; ++i)
      lanes.push_back(std::make_unique<Lane>(io_in));
  }

  std::size_t laneOf(const ObjectReference& o) const {
    const auto& id = o.uid.empty() ? o.name : o.uid;
    return std::hash<std::string>{}(id) % kLanes;
  }

  void record(Event e) {
    std::size_t lane_index = laneOf(e.involved_object);
    {
      std::lock_guard lock(mu);
      if (stopped)
        return;
      if (queuedLocked() >= EventRecorder::kMaxQueuedEvents) {
        ++dropped;
        if (!dropping) {
          dropping = true;
          KOORD_LOG_WARNING(
              "event backlog is full ({} waiting); dropping events until it drains, first {} {} "
              "on {}",
              queuedLocked(), toString(e.type), e.reason, objectKey(e.involved_object));
        }
        return;
      }
      dropping = false;
      Lane& lane = *lanes[lane_index];
      lane.queue.push_back(std::move(e));
      if (lane.busy)
        return;
      lane.busy = true;
    }
    boost::asio::post(io, [self = shared_from_this(), lane_index] { self->next(lane_index); });
  }

  // Takes the lane's next event that passes the correlator and writes it; the chain ends when
  // the lane is empty and restarts on the next record() for it.
  void next(std::size_t lane_index) {
    std::shared_ptr<Write> write;
    {
      std::lock_guard lock(mu);
      Lane& lane = *lanes[lane_index];
      while (!stopped && !lane.queue.empty() && !write) {
        CorrelatedEvent c = correlator.correlate(std::move(lane.queue.front()));
        lane.queue.pop_front();
        if (c.skip) {
          ++filtered;
          if (c.first_skip) {
            KOORD_LOG_WARNING(
                "events from {} about {} exceed the spam limit; dropping them until it refills, "
                "first {} {}",
                c.event.source.component, objectKey(c.event.involved_object), c.event.reason,
                c.event.message);
          }
          continue;
        }
        write = std::make_shared<Write>();
        write->create = c.event.count <= 1;
        write->event = std::move(c.event);
      }
      if (!write) {
        endChainLocked(lane);
        return;
      }
    }
    send(lane_index, std::move(write));
  }

  void send(std::size_t lane_index, std::shared_ptr<Write> w) {
    // The client is the owner's and may go once the recorder is gone: a call starts only
    // before stop(), and the recorder's destructor waits for the calls under way.
    {
      std::lock_guard lock(mu);
      if (stopped) {
        endChainLocked(*lanes[lane_index]);
        return;
      }
      ++client_calls;
    }
    ++w->tries;
    const Event& e = w->event;
    auto answer = [self = shared_from_this(), lane_index, w](ApiResult<json::value> r) {
      self->onAnswer(lane_index, w, std::move(r));
    };
    if (w->create)
      client.create(ResourceRef{"", "v1", "events", e.namespace_, "", ""}, eventToJson(e),
                    std::move(answer));
    else
      client.patch(ResourceRef{"", "v1", "events", e.namespace_, e.name, ""},
                   PatchType::kStrategicMergePatch, eventRepeatPatch(e), std::move(answer));
    std::lock_guard lock(mu);
    if (--client_calls == 0)
      calls_done.notify_all();
  }

  // After stop(): returns once no chain is inside a client call, so none starts after.
  void waitForClientCalls() {
    std::unique_lock lock(mu);
    calls_done.wait(lock, [this] { return client_calls == 0; });
  }

  void onAnswer(std::size_t lane_index, const std::shared_ptr<Write>& w, ApiResult<json::value> r) {
    if (endIfStopped(lane_index))
      return;
    if (r)
      return next(lane_index);
    const ApiError& err = r.error();
    if (!w->create && (err.code == 404 || isNotFound(err))) {
      // The Event expired (or was deleted) since it was first written: write it anew.
      w->create = true;
      w->tries = 0;
      return send(lane_index, w);
    }
    const Event& e = w->event;
    if (err.code != 0) {
      // The server decided; asking again would get the same answer.
      if (isAlreadyExists(err)) {
        KOORD_VLOG(2, "event {} on {} already exists", e.name, objectKey(e.involved_object));
      } else {
        KOORD_LOG_WARNING("event {} {} on {} ({}/{}): server rejected it: {} {}: {}",
                          toString(e.type), e.reason, objectKey(e.involved_object), e.namespace_,
                          e.name, err.code, err.reason, err.message);
      }
      return next(lane_index);
    }
    if (w->tries >= kMaxTries) {
      KOORD_LOG_WARNING("event {} {} on {}: giving up after {} tries: {}", toString(e.type),
                        e.reason, objectKey(e.involved_object), w->tries, err.message);
      return next(lane_index);
    }
    KOORD_VLOG(2, "event {} on {}: {}; retrying", e.reason, objectKey(e.involved_object),
               err.message);
    std::lock_guard lock(mu);
    Lane& lane = *lanes[lane_index];
    if (stopped) {
      endChainLocked(lane);
      return;
    }
    auto wait = std::chrono::duration_cast<std::chrono::steady_clock::duration>(kRetryWait);
    if (w->tries == 1)
      wait = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
          wait * std::uniform_real_distribution<double>(0.0, 1.0)(rng));
    lane.timer.expires_after(wait);
    lane.timer.async_wait([self = shared_from_this(), lane_index, w](boost::system::error_code ec) {
      if (self->endIfStopped(lane_index))
        return;
      if (ec) {
        KOORD_LOG_WARNING("event {} on {}: retry timer failed: {}; dropping it", w->event.reason,
                          objectKey(w->event.involved_object), ec.message());
        return self->next(lane_index);
      }
      self->send(lane_index, w);
    });
  }

  void endChainLocked(Lane& lane) {
    lane.busy = false;
    if (idleLocked())
      idle.notify_all();
  }

  std::size_t queuedLocked() const {
    std::size_t n = 0;
    for (const auto& lane : lanes)
      n += lane->queue.size();
    return n;
  }

  // No event waiting and no chain running.
  bool idleLocked() const {
    return std::all_of(lanes.begin(), lanes.end(),
                       [](const auto& lane) { return lane->queue.empty() && !lane->busy; });
  }

  bool endIfStopped(std::size_t lane_index) {
    std::lock_guard lock(mu);
    if (!stopped)
      return false;
    endChainLocked(*lanes[lane_index]);
    return true;
  }

  void stop() {
    std::lock_guard lock(mu);
    stopped = true;
    for (auto& lane : lanes) {
      lane->queue.clear();
      lane->timer.cancel();
    }
    idle.notify_all();
  }

  RestClient& client;
  boost::asio::io_context& io;
  const EventSource source;
  Clock& clock;

  mutable std::mutex mu;
  std::condition_variable idle;
  std::vector<std::unique_ptr<Lane>> lanes;     // each lane's fields under mu
  EventCorrelator correlator;                   // under mu
  std::mt19937_64 rng{std::random_device{}()};  // under mu
  bool stopped = false;                         // under mu
  int client_calls = 0;                         // under mu: chains inside a client call
  std::condition_variable calls_done;
  bool dropping = false;  // under mu: the backlog overflowed and has not taken an event since
  std::uint64_t dropped = 0;
  std::uint64_t filtered = 0;
};

}  // namespace detail

EventRecorder::EventRecorder(RestClient& client, boost::asio::io_context& io, EventSource source,
                             Clock& clock, EventCorrelatorOptions options)
    : state_(std::make_shared<detail::EventRecorderState>(client, io, std::move(source), clock,
                                                          std::move(options))) {}

EventRecorder::~EventRecorder() {
  state_->stop();
  state_->waitForClientCalls();
}

void EventRecorder::record(const ObjectReference& object, EventType type, std::string reason,
                           std::string message) {
  state_->record(makeEvent(object, type, std::move(reason), std::move(message), state_->source,
                           state_->clock.now()));
}

bool EventRecorder::flush(std::chrono::milliseconds timeout) {
  std::unique_lock lock(state_->mu);
  return state_->idle.wait_for(lock, timeout,
                               [this] { return state_->stopped || state_->idleLocked(); });
}

std::uint64_t EventRecorder::droppedCount() const {
  std::lock_guard lock(state_->mu);
  return state_->dropped;
}

std::uint64_t EventRecorder::filteredCount() const {
  std::lock_guard lock(state_->mu);
  return state_->filtered;
}

}  // namespace koord::kube
