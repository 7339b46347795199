#include "koord/kube/watch.h"

#include <fmt/format.h>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/json.hpp>

#include <algorithm>
#include <cctype>
#include <mutex>

#include "koord/core/log.h"
#include "koord/core/metrics.h"
#include "koord/kube/json_limits.h"

namespace koord::kube {

namespace json = boost::json;

std::optional<WatchEventType> parseWatchEventType(std::string_view s) {
  if (s == "ADDED")
    return WatchEventType::kAdded;
  if (s == "MODIFIED")
    return WatchEventType::kModified;
  if (s == "DELETED")
    return WatchEventType::kDeleted;
  if (s == "BOOKMARK")
    return WatchEventType::kBookmark;
  if (s == "ERROR")
    return WatchEventType::kError;
  return std::nullopt;
}

std::string_view toString(WatchEventType t) {
  switch (t) {
    case WatchEventType::kAdded:
      return "ADDED";
    case WatchEventType::kModified:
      return "MODIFIED";
    case WatchEventType::kDeleted:
      return "DELETED";
    case WatchEventType::kBookmark:
      return "BOOKMARK";
    case WatchEventType::kError:
      return "ERROR";
  }
  return "UNKNOWN";
}

WatchDecoder::WatchDecoder(std::size_t max_event_bytes)
    : max_(max_event_bytes),
      parser_(std::make_unique<json::parser>(json::storage_ptr(), apiObjectParseOptions())) {}
WatchDecoder::~WatchDecoder() = default;
WatchDecoder::WatchDecoder(WatchDecoder&&) noexcept = default;
WatchDecoder& WatchDecoder::operator=(WatchDecoder&&) noexcept = default;

void WatchDecoder::feed(std::string_view chunk, const Sink& sink, const SkipSink& skip) {
  while (!chunk.empty()) {
    auto nl = chunk.find('\n');
    std::string_view part = chunk.substr(0, nl);
    if (!discarding_ && buf_.size() + part.size() > max_) {
      skip(fmt::format("watch event larger than {} bytes: {}", max_,
                       (buf_.empty() ? part : std::string_view(buf_)).substr(0, 200)));
      buf_.clear();
      buf_.shrink_to_fit();
      discarding_ = true;
    }
    if (nl == std::string_view::npos) {
      if (!discarding_)
        buf_.append(part);
      return;
    }
    chunk.remove_prefix(nl + 1);
    if (discarding_) {
      discarding_ = false;
    } else if (buf_.empty()) {
      decodeLine(part, sink, skip);
    } else {
      buf_.append(part);
      decodeLine(buf_, sink, skip);
      buf_.clear();
    }
  }
}

void WatchDecoder::decodeLine(std::string_view line, const Sink& sink, const SkipSink& skip) {
  if (line.find_first_not_of(" \t\r") == std::string_view::npos)
    return;  // blank keep-alive lines carry nothing
  // One arena per event: a pod's DOM is a few hundred nodes that a projection reads once and
  // drops, and an arena is one allocation instead of one per node. It is reference counted, so
  // a handler that keeps a copy of the object keeps the arena too.
  boost::system::error_code ec;
  parser_->reset(json::make_shared_resource<json::monotonic_resource>(line.size() * 2));
  parser_->write(line.data(), line.size(), ec);
  json::value v;
  if (!ec)
    v = parser_->release();
  if (ec || !v.is_object()) {
    skip(fmt::format("watch event is not a JSON object ({}): {}", ec ? ec.message() : "wrong type",
                     line.substr(0, 200)));
    return;
  }
  auto& o = v.get_object();
  const auto* type = o.if_contains("type");
  auto* object = o.if_contains("object");
  std::optional<WatchEventType> t;
  if (type != nullptr && type->is_string())
    t = parseWatchEventType(type->get_string());
  if (!t || object == nullptr) {
    skip(fmt::format("watch event has no known type or no object: {}", line.substr(0, 200)));
    return;
  }
  // Moved, not copied: the event owns the arena's object from here.
  sink(WatchEvent{*t, std::move(*object)});
}

std::chrono::milliseconds WatchBackoff::next() {
  auto base = kInitial;
  for (int i = 0; i < attempt_ && base < kCap; ++i)
    base *= 2;
  base = std::min(base, kCap);
  if (base < kCap)
    ++attempt_;
  std::uniform_real_distribution<double> jitter(0.0, 0.2);
  auto delay = std::chrono::milliseconds(
      static_cast<std::int64_t>(static_cast<double>(base.count()) * (1.0 + jitter(rng_))));
  return std::min(delay, kCap);
}

namespace detail {

struct WatcherState : std::enable_shared_from_this<WatcherState> {
  WatcherState(RestClient& c, boost::asio::io_context& io_in, ResourceRef r, WatchOptions o,
               Watcher::Handler h, Watcher::ErrorHandler e)
      : client(c),
        io(io_in),
        ref(std::move(r)),
        options(std::move(o)),
        handler(std::move(h)),
        on_error(std::move(e)),
        timer(io_in),
        rv(options.resource_version),
        key(resourcePath(ref)),
        decode_errors(decodeErrorsFamily().with({resourceLabel(ref)})) {}

  // client-go's threshold for a watch that ended too soon to count as healthy.
  static constexpr std::chrono::seconds kShortWatch{1};

  static metrics::CounterFamily& decodeErrorsFamily() {
    static auto& family = metrics::Registry::global().counter(
        "koord_informer_decode_errors_total",
        "Watch events skipped because they could not be decoded, by resource.", {"resource"});
    return family;
  }
  // "nodemetrics.slo.koordinator.sh", "pods": the resource as kubectl names it.
  static std::string resourceLabel(const ResourceRef& r) {
    return r.group.empty() ? r.resource : r.resource + "." + r.group;
  }

  std::string watchPath() {
    std::string q = "?watch=true";
    auto add = [&](std::string_view k, const std::string& v) {
      if (v.empty())
        return;
      // Selectors may hold '=', ',', '!' and spaces; escape like the verbs do.
      std::string e;
      for (unsigned char ch : v) {
        if (std::isalnum(ch) || ch == '-' || ch == '.' || ch == '_' || ch == '~') {
          e.push_back(static_cast<char>(ch));
        } else {
          e += fmt::format("%{:02X}", ch);
        }
      }
      q += fmt::format("&{}={}", k, e);
    };
    add("labelSelector", options.label_selector);
    add("fieldSelector", options.field_selector);
    {
      std::lock_guard lock(mu);
      add("resourceVersion", rv);
    }
    if (options.allow_bookmarks)
      q += "&allowWatchBookmarks=true";
    std::int64_t timeout = options.timeout_seconds;
    if (timeout <= 0) {
      std::lock_guard lock(mu);
      timeout = std::uniform_int_distribution<std::int64_t>(300, 600)(rng);
    }
    q += fmt::format("&timeoutSeconds={}", timeout);
    return key + q;
  }

  void open() {
    if (isStopped())
      return;
    client.throttle([self = shared_from_this()](boost::system::error_code ec) {
      if (ec) {
        KOORD_LOG_WARNING("watch {}: rate limiter wait failed: {}", self->key, ec.message());
        return;
      }
      self->openNow();
    });
  }

  void openNow() {
    {
      std::lock_guard lock(mu);
      if (stopped)
        return;
    }
    auto req = client.prepareRequest("GET", watchPath());
    if (!req) {
      KOORD_LOG_WARNING("watch {}: cannot prepare the request: {}", key, req.error().message);
      return retryLater();
    }
    // The stream may outlive nothing but the state: callbacks hold it, never the Watcher.
    auto stream = std::make_shared<Stream>(options.max_event_bytes);
    streams.fetch_add(1);
    auto self = shared_from_this();
    auto handle = client.httpClient().stream(
        std::move(*req),
        [self, stream](int status, const http::Headers&) {
          stream->status = status;
          return true;
        },
        [self, stream](std::string_view chunk) { return self->onData(*stream, chunk); },
        [self, stream](boost::system::error_code ec) { self->onDone(*stream, ec); },
        options.idle_timeout);
    std::lock_guard lock(mu);
    current = handle;
    if (stopped)
      current.cancel();
  }

  struct Stream {
    explicit Stream(std::size_t max) : decoder(max) {}
    int status = 0;
    WatchDecoder decoder;
    std::string error_body;  // a non-200 answer's Status, capped
    const std::chrono::steady_clock::time_point opened = std::chrono::steady_clock::now();
    std::size_t events = 0;
    bool ended = false;  // we stopped it: expired, or an ERROR event
    bool retry = false;  // ...and want a re-watch after backoff
  };

  bool isStopped() {
    std::lock_guard lock(mu);
    return stopped;
  }

  bool onData(Stream& s, std::string_view chunk) {
    if (isStopped())
      return false;
    if (s.status != 200) {
      s.error_body.append(chunk.substr(0, std::min<std::size_t>(chunk.size(), 64 << 10)));
      return s.error_body.size() < (64 << 10);
    }
    s.decoder.feed(
        chunk, [&](WatchEvent ev) { onEvent(s, std::move(ev)); },
        [&](std::string_view why) {
          decode_errors.inc();
          KOORD_LOG_ERROR("watch {}: skipping an event: {}", key, why);
        });
    return !s.ended;
  }

  void onEvent(Stream& s, WatchEvent ev) {
    if (s.ended || isStopped())
      return;
    ++s.events;
    if (ev.type == WatchEventType::kError) {
      ApiError e = statusError(ev.object, 0);
      s.ended = true;
      if (e.code == 410 || isResourceExpired(e)) {
        e.code = 410;
        return finish(e);
      }
      KOORD_LOG_WARNING("watch {}: ERROR event {} {}: {}; re-watching", key, e.code, e.reason,
                        e.message);
      s.retry = true;
      return;
    }
    if (ev.object.is_object()) {
      if (const auto* md = ev.object.get_object().if_contains("metadata"); md && md->is_object()) {
        if (const auto* v = md->get_object().if_contains("resourceVersion"); v && v->is_string()) {
          std::lock_guard lock(mu);
          rv = std::string(v->get_string());
        }
      }
    }
    if (ev.type != WatchEventType::kBookmark && handler)
      handler(ev);
  }

  static ApiError statusError(const json::value& v, int http_code) {
    ApiError e;
    e.code = http_code;
    if (v.is_object()) {
      const auto& o = v.get_object();
      if (const auto* c = o.if_contains("code"); c && c->is_int64())
        e.code = static_cast<int>(c->get_int64());
      if (const auto* r = o.if_contains("reason"); r && r->is_string())
        e.reason = r->get_string();
      if (const auto* m = o.if_contains("message"); m && m->is_string())
        e.message = m->get_string();
      e.status = v;
    }
    if (e.reason.empty() && e.code == 410)
      e.reason = "Gone";
    return e;
  }

  void onDone(Stream& s, boost::system::error_code ec) {
    if (isStopped())
      return;
    if (s.status != 0 && s.status != 200) {
      boost::system::error_code pec;
      json::value body = json::parse(s.error_body, pec);
      ApiError e = statusError(pec ? json::value() : body, s.status);
      e.code = s.status;
      if (e.message.empty())
        e.message = s.error_body.substr(0, 512);
      if (s.status == 410 || s.status == 429 || s.status >= 500) {
        if (s.status == 410)
          return finish(e);
        KOORD_LOG_WARNING("watch {}: server answered {} {}; retrying", key, e.code, e.reason);
        return retryLater();
      }
      KOORD_LOG_ERROR("watch {}: server answered {} {}: {}", key, e.code, e.reason, e.message);
      return finish(e);
    }
    if (s.ended) {
      if (s.retry)
        retryLater();
      return;
    }
    if (ec) {
      KOORD_LOG_WARNING("watch {}: stream failed: {}; retrying", key, ec.message());
      return retryLater();
    }
    if (s.events == 0 && std::chrono::steady_clock::now() - s.opened < kShortWatch) {
      KOORD_LOG_WARNING(
          "watch {}: the stream ended within a second with no event; re-watching "
          "after a backoff",
          key);
      return retryLater();
    }
    // A normal end (the server's timeoutSeconds): healthy, so resume at once.
    {
      std::lock_guard lock(mu);
      backoff.reset();
    }
    KOORD_VLOG(3, "watch {}: stream ended; resuming", key);
    net_post();
  }

  void net_post() {
    boost::asio::post(io, [self = shared_from_this()] { self->open(); });
  }

  void retryLater() {
    std::lock_guard lock(mu);
    if (stopped)
      return;
    auto delay = backoff.next();
    KOORD_VLOG(2, "watch {}: re-watching in {} ms", key, delay.count());
    timer.expires_after(delay);
    timer.async_wait([self = shared_from_this()](boost::system::error_code ec) {
      if (!ec)
        self->open();
    });
  }

  void finish(const ApiError& e) {
    {
      std::lock_guard lock(mu);
      if (stopped)
        return;
      stopped = true;
    }
    if (isResourceExpired(e) || e.code == 410) {
      KOORD_VLOG(1, "watch {}: resourceVersion expired: {}", key, e.message);
    }
    if (on_error)
      on_error(e);
  }

  void stop() {
    std::lock_guard lock(mu);
    stopped = true;
    current.cancel();
    timer.cancel();
  }

  RestClient& client;
  boost::asio::io_context& io;
  const ResourceRef ref;
  const WatchOptions options;
  Watcher::Handler handler;
  Watcher::ErrorHandler on_error;
  mutable std::mutex mu;
  boost::asio::steady_timer timer;  // under mu
  std::string rv;                   // under mu
  WatchBackoff backoff;             // under mu
  std::mt19937_64 rng{std::random_device{}()};
  http::StreamHandle current;  // under mu
  bool stopped = false;        // under mu
  std::atomic<std::size_t> streams{0};
  const std::string key;
  metrics::Counter& decode_errors;
};

}  // namespace detail

Watcher::Watcher(RestClient& client, boost::asio::io_context& io, ResourceRef ref,
                 WatchOptions options, Handler handler, ErrorHandler on_error)
    : state_(std::make_shared<detail::WatcherState>(client, io, std::move(ref), std::move(options),
                                                    std::move(handler), std::move(on_error))) {}

Watcher::~Watcher() {
  stop();
}

void Watcher::start() {
  state_->open();
}

void Watcher::stop() {
  state_->stop();
}

std::string Watcher::resourceVersion() const {
  std::lock_guard lock(state_->mu);
  return state_->rv;
}

std::size_t Watcher::streamsOpened() const {
  return state_->streams.load();
}

}  // namespace koord::kube
