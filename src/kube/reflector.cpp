#include "koord/kube/reflector.h"

#include <fmt/format.h>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/json.hpp>

#include <atomic>
#include <mutex>
#include <optional>
#include <utility>

#include "koord/core/log.h"

namespace koord::kube {

namespace json = boost::json;

namespace {

const json::string* stringField(const json::object& o, std::string_view name) {
  const auto* v = o.if_contains(name);
  return v != nullptr && v->is_string() ? &v->get_string() : nullptr;
}

}  // namespace

Expected<ObjectIdentity> readObjectIdentity(const json::value& object) {
  const auto* o = object.if_object();
  const json::value* md = o != nullptr ? o->if_contains("metadata") : nullptr;
  if (md == nullptr || !md->is_object())
    return makeKubeError("object has no metadata");
  const auto& m = md->get_object();
  const auto* name = stringField(m, "name");
  if (name == nullptr || name->empty())
    return makeKubeError("object has no metadata.name");
  ObjectIdentity meta;
  const auto* ns = stringField(m, "namespace");
  if (ns != nullptr && !ns->empty()) {
    meta.key.reserve(ns->size() + 1 + name->size());
    meta.key.append(ns->data(), ns->size()).push_back('/');
  }
  meta.key.append(name->data(), name->size());
  if (const auto* rv = stringField(m, "resourceVersion"))
    meta.resource_version.assign(rv->data(), rv->size());
  return meta;
}

namespace detail {

// One list-then-watch cycle at a time. `generation` tells a late callback of an abandoned cycle
// (stop, or a relist that replaced it) to drop what it carries.
struct ReflectorState : std::enable_shared_from_this<ReflectorState> {
  ReflectorState(RestClient& c, boost::asio::io_context& io_in, ResourceRef r, ReflectorOptions o,
                 ReflectorTarget& t)
      : client(c),
        io(io_in),
        ref(std::move(r)),
        options(std::move(o)),
        target(t),
        timer(io_in),
        key(resourcePath(ref)) {}

  // --- list ---------------------------------------------------------------------------------

  void startList() {
    {
      std::lock_guard dispatch(dispatch_mu);
      abortReplace();  // a list of an abandoned cycle that never finished
    }
    std::string rv;
    std::uint64_t gen;
    {
      std::lock_guard lock(mu);
      if (stopped)
        return;
      gen = ++generation;
      // client-go's relistResourceVersion: "0" (any cached state) first, the last synced
      // version afterwards, and a consistent read from etcd once that version has expired.
      rv = last_rv_unavailable ? "" : (last_rv.empty() ? "0" : last_rv);
    }
    listPage(gen, rv, "");
  }

  void listPage(std::uint64_t gen, std::string rv, std::string continue_token) {
    ListOptions o;
    o.label_selector = options.label_selector;
    o.field_selector = options.field_selector;
    o.continue_ = std::move(continue_token);
    // With a continue token the server ignores resourceVersion (the token holds it) and
    // refuses one that is set.
    if (o.continue_.empty())
      o.resource_version = rv;
    // The watch cache serves resourceVersion=0 whole and ignores a limit; etcd pages.
    if (rv != "0")
      o.limit = options.page_size;
    std::weak_ptr<ReflectorState> weak = shared_from_this();
    client.listEach(
        ref, o,
        [weak, gen](const json::value& item) {
          auto self = weak.lock();
          return self && self->onItem(gen, item);
        },
        [self = shared_from_this(), gen, rv](ApiResult<json::value> r) mutable {
          self->onPage(gen, std::move(rv), std::move(r));
        });
  }

  // Items go to the target as they arrive; a list that breaks off later is aborted, which
  // keeps what arrived (it is newer than what the store had) and deletes nothing.
  bool onItem(std::uint64_t gen, const json::value& item) {
    std::lock_guard dispatch(dispatch_mu);
    if (!current(gen))
      return false;
    if (!replacing) {
      target.beginReplace();
      replacing = true;
    }
    auto meta = readObjectIdentity(item);
    if (!meta) {
      if (skipped++ == 0)
        KOORD_LOG_WARNING("list {}: skipping an object: {}", key, meta.error().message);
      return true;
    }
    target.replaceItem(*meta, item);
    return true;
  }

  void onPage(std::uint64_t gen, std::string rv, ApiResult<json::value> r) {
    std::lock_guard dispatch(dispatch_mu);
    if (!current(gen))
      return;
    if (!r) {
      const ApiError& e = r.error();
      abortReplace();
      if (e.code == 410 || isResourceExpired(e)) {
        // Our version, or the continue token's, is older than etcd's compaction.
        KOORD_LOG_INFO("list {}: resourceVersion {} expired ({}); listing from etcd", key,
                       rv.empty() ? "(continue token)" : rv, e.message);
        {
          std::lock_guard lock(mu);
          last_rv_unavailable = true;
        }
        return post([self = shared_from_this()] { self->startList(); });
      }
      KOORD_LOG_WARNING("list {}: {} {}: {}; retrying", key, e.code, e.reason, e.message);
      return retryLater(e.retry_after);
    }
    std::string list_rv, next;
    if (const auto* md = r->if_object()) {
      if (const auto* v = stringField(*md, "resourceVersion"))
        list_rv.assign(v->data(), v->size());
      if (const auto* v = stringField(*md, "continue"))
        next.assign(v->data(), v->size());
    }
    if (!next.empty()) {
      // The next page; the continue token carries the list's resourceVersion.
      return listPage(gen, std::move(rv), std::move(next));
    }
    if (skipped > 1)
      KOORD_LOG_WARNING("list {}: skipped {} objects without a name", key, skipped);
    if (!replacing)
      target.beginReplace();  // an empty list still replaces
    replacing = false;
    skipped = 0;
    {
      // Before endReplace: whoever waits for the sync may read these at once.
      std::lock_guard lock(mu);
      last_rv = list_rv;
      last_rv_unavailable = false;
      backoff.reset();
    }
    lists.fetch_add(1);
    target.endReplace(list_rv);
    KOORD_VLOG(2, "list {}: synced at resourceVersion {}", key, list_rv);
    startWatch(gen, list_rv);
  }

  void abortReplace() {
    if (replacing)
      target.abortReplace();
    replacing = false;
    skipped = 0;
  }

  // --- watch --------------------------------------------------------------------------------

  void startWatch(std::uint64_t gen, const std::string& rv) {
    WatchOptions w;
    w.label_selector = options.label_selector;
    w.field_selector = options.field_selector;
    w.resource_version = rv;
    w.timeout_seconds = options.watch_timeout_seconds;
    w.idle_timeout = options.watch_idle_timeout;
    w.max_event_bytes = options.max_event_bytes;
    std::weak_ptr<ReflectorState> weak = shared_from_this();
    auto watcher = std::make_shared<Watcher>(
        client, io, ref, std::move(w),
        [weak, gen](const WatchEvent& ev) {
          if (auto self = weak.lock())
            self->onEvent(gen, ev);
        },
        [weak, gen](const ApiError& e) {
          if (auto self = weak.lock())
            self->onWatchEnd(gen, e);
        });
    std::shared_ptr<Watcher> old;  // destroyed (stopped) outside our lock
    {
      std::lock_guard lock(mu);
      if (stopped || gen != generation)
        return;
      old_watchers_opened += watcher_ ? watcher_->streamsOpened() : 0;
      old = std::exchange(watcher_, watcher);
    }
    old.reset();
    watcher->start();
  }

  void onEvent(std::uint64_t gen, const WatchEvent& ev) {
    std::lock_guard dispatch(dispatch_mu);
    if (!current(gen))
      return;
    auto meta = readObjectIdentity(ev.object);
    if (!meta) {
      KOORD_LOG_WARNING("watch {}: {} event skipped: {}", key, toString(ev.type),
                        meta.error().message);
      return;
    }
    target.apply(ev.type, *meta, ev.object);
    std::lock_guard lock(mu);
    if (!meta->resource_version.empty())
      last_rv = meta->resource_version;
  }

  void onWatchEnd(std::uint64_t gen, const ApiError& e) {
    {
      std::lock_guard lock(mu);
      if (stopped || gen != generation)
        return;
      if (e.code == 410 || isResourceExpired(e)) {
        last_rv_unavailable = true;
        KOORD_LOG_INFO("watch {}: resourceVersion expired ({}); relisting", key, e.message);
      } else {
        KOORD_LOG_WARNING("watch {}: ended with {} {}: {}; relisting", key, e.code, e.reason,
                          e.message);
      }
    }
    if (e.code == 410 || isResourceExpired(e))
      return post([self = shared_from_this()] { self->startList(); });
    retryLater(e.retry_after);
  }

  // --- plumbing -----------------------------------------------------------------------------

  bool current(std::uint64_t gen) {
    std::lock_guard lock(mu);
    return !stopped && gen == generation;
  }

  void post(std::function<void()> fn) { boost::asio::post(io, std::move(fn)); }

  void retryLater(std::optional<std::chrono::seconds> retry_after) {
    std::lock_guard lock(mu);
    if (stopped)
      return;
    auto delay = backoff.next();
    if (retry_after && *retry_after > delay)
      delay = std::chrono::duration_cast<std::chrono::milliseconds>(*retry_after);
    ++generation;  // a late answer of the failed cycle must not race the retry
    timer.expires_after(delay);
    timer.async_wait([self = shared_from_this()](boost::system::error_code ec) {
      if (!ec)
        self->startList();
    });
  }

  void stop() {
    // Waits for a target call in flight on another thread; one on this thread (stop() from
    // inside a handler) holds the recursive mutex already and carries on.
    std::lock_guard dispatch(dispatch_mu);
    std::shared_ptr<Watcher> w;
    {
      std::lock_guard lock(mu);
      stopped = true;
      ++generation;
      timer.cancel();
      w = std::move(watcher_);
    }
    if (w)
      w->stop();
  }

  RestClient& client;
  boost::asio::io_context& io;
  const ResourceRef ref;
  const ReflectorOptions options;
  ReflectorTarget& target;
  // Held around every target call; recursive so a handler may stop its own informer.
  std::recursive_mutex dispatch_mu;
  mutable std::mutex mu;
  boost::asio::steady_timer timer;    // under mu
  std::shared_ptr<Watcher> watcher_;  // under mu
  std::size_t old_watchers_opened = 0;
  std::uint64_t generation = 0;      // under mu
  bool stopped = false;              // under mu
  std::string last_rv;               // under mu
  bool last_rv_unavailable = false;  // under mu
  WatchBackoff backoff;              // under mu
  std::atomic<std::size_t> lists{0};
  bool replacing = false;   // under dispatch_mu: beginReplace called, endReplace not yet
  std::size_t skipped = 0;  // under dispatch_mu: nameless objects in this list
  const std::string key;
};

}  // namespace detail

Reflector::Reflector(RestClient& client, boost::asio::io_context& io, ResourceRef ref,
                     ReflectorOptions options, ReflectorTarget& target)
    : state_(std::make_shared<detail::ReflectorState>(client, io, std::move(ref),
                                                      std::move(options), target)) {}

Reflector::~Reflector() {
  stop();
}

void Reflector::start() {
  boost::asio::post(state_->io, [s = state_] { s->startList(); });
}

void Reflector::stop() {
  state_->stop();
}

std::string Reflector::lastSyncResourceVersion() const {
  std::lock_guard lock(state_->mu);
  return state_->last_rv;
}

std::size_t Reflector::listsCompleted() const {
  return state_->lists.load();
}

std::size_t Reflector::watchesOpened() const {
  std::lock_guard lock(state_->mu);
  return state_->old_watchers_opened + (state_->watcher_ ? state_->watcher_->streamsOpened() : 0);
}

}  // namespace koord::kube
