// A typed informer: a Reflector feeding a Store of compact projections of the API's objects,
// with event handlers and HasSynced, so roles never keep or walk whole JSON documents.
#pragma once

#include <boost/json/fwd.hpp>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "koord/core/log.h"
#include "koord/kube/error.h"
#include "koord/kube/reflector.h"
#include "koord/kube/store.h"

namespace koord::kube {

/// Turns one API object into what the role keeps. An error skips the object with a warning that
/// names its key, and leaves the store as it was (bad input changes nothing).
template <typename T>
using Projection = std::function<Expected<T>(const boost::json::value&)>;

/// Called serially, on an io thread, after the store has changed; keep them short (enqueue a
/// key for a worker). `key` is "namespace/name" or "name".
template <typename T>
struct InformerHandlers {
  std::function<void(const std::string& key, const T& obj)> on_add;
  std::function<void(const std::string& key, const T& old_obj, const T& new_obj)> on_update;
  /// With the last state the informer knew (after a relist, that may predate the deletion).
  std::function<void(const std::string& key, const T& obj)> on_delete;
};

/// Index functions the roles use everywhere.
namespace indexes {
inline constexpr const char* kNamespace = "namespace";
inline constexpr const char* kNodeName = "spec.nodeName";
}  // namespace indexes

/// Lists and watches `ref` (a collection: namespace_ set for one namespace, empty for all) into
/// store(). Add indexes and handlers before start(). hasSynced() turns true once the first list
/// is in the store, and stays true through relists, as client-go's does.
template <typename T>
class Informer : private ReflectorTarget {
 public:
  Informer(RestClient& client, boost::asio::io_context& io, ResourceRef ref,
           Projection<T> projection, ReflectorOptions options = {})
      : projection_(std::move(projection)),
        key_(resourcePath(ref)),
        reflector_(client, io, std::move(ref), std::move(options), *this) {}
  ~Informer() override { reflector_.stop(); }
  Informer(const Informer&) = delete;
  Informer& operator=(const Informer&) = delete;

  void addIndex(const std::string& name, IndexFunc<T> fn) {
    mustNotHaveStarted("addIndex");
    store_.addIndex(name, std::move(fn));
  }
  void addHandlers(InformerHandlers<T> handlers) {
    mustNotHaveStarted("addHandlers");
    handlers_.push_back(std::move(handlers));
  }

  void start() {
    {
      std::lock_guard lock(sync_mu_);
      started_ = true;
    }
    reflector_.start();
  }
  /// No handler runs after stop() returns (except one that called stop() itself).
  void stop() { reflector_.stop(); }

  bool hasSynced() const {
    std::lock_guard lock(sync_mu_);
    return synced_;
  }
  /// Blocks a thread that is not the io_context's; false on timeout.
  bool waitForSync(std::chrono::milliseconds timeout) const {
    std::unique_lock lock(sync_mu_);
    return sync_cv_.wait_for(lock, timeout, [this] { return synced_; });
  }

  const Store<T>& store() const { return store_; }
  const Reflector& reflector() const { return reflector_; }
  /// Objects the projection refused so far.
  std::size_t projectionErrors() const {
    std::lock_guard lock(sync_mu_);
    return projection_errors_;
  }

 private:
  void mustNotHaveStarted(const char* what) {
    std::lock_guard lock(sync_mu_);
    if (started_)
      throw std::logic_error(std::string("Informer::") + what + " after start()");
  }

  std::shared_ptr<const T> project(const ObjectIdentity& meta, const boost::json::value& object) {
    auto projected = projection_(object);
    if (!projected) {
      KOORD_LOG_WARNING("informer {}: {} ignored: {}", key_, meta.key, projected.error().message);
      std::lock_guard lock(sync_mu_);
      ++projection_errors_;
      return nullptr;
    }
    return std::make_shared<const T>(std::move(*projected));
  }

  void upsert(const ObjectIdentity& meta, const boost::json::value& object) {
    auto obj = project(meta, object);
    if (!obj)
      return;
    auto old = store_.put(meta.key, obj, meta.resource_version);
    for (const auto& h : handlers_) {
      if (old == nullptr) {
        if (h.on_add)
          h.on_add(meta.key, *obj);
      } else if (h.on_update) {
        h.on_update(meta.key, *old, *obj);
      }
    }
  }

  void remove(const std::string& key) {
    auto old = store_.erase(key);
    if (old == nullptr)
      return;
    for (const auto& h : handlers_) {
      if (h.on_delete)
        h.on_delete(key, *old);
    }
  }

  // ReflectorTarget
  void beginReplace() override { seen_.clear(); }
  void replaceItem(const ObjectIdentity& meta, const boost::json::value& object) override {
    seen_.insert(meta.key);
    // An unchanged object (same resourceVersion) is neither re-projected nor announced: a relist
    // of 10k pods where nothing moved costs a map lookup each, and handlers stay quiet.
    if (!meta.resource_version.empty() && store_.resourceVersion(meta.key) == meta.resource_version)
      return;
    upsert(meta, object);
  }
  void endReplace(const std::string&) override {
    for (const auto& key : store_.keys()) {
      if (!seen_.count(key))
        remove(key);
    }
    seen_.clear();
    {
      std::lock_guard lock(sync_mu_);
      synced_ = true;
    }
    sync_cv_.notify_all();
  }
  void abortReplace() override { seen_.clear(); }
  void apply(WatchEventType type, const ObjectIdentity& meta,
             const boost::json::value& object) override {
    if (type == WatchEventType::kDeleted)
      return remove(meta.key);
    upsert(meta, object);
  }

  Projection<T> projection_;
  const std::string key_;
  Store<T> store_;
  std::vector<InformerHandlers<T>> handlers_;
  // Only touched from ReflectorTarget calls, which never overlap.
  std::unordered_set<std::string> seen_;
  mutable std::mutex sync_mu_;
  mutable std::condition_variable sync_cv_;
  bool started_ = false;
  bool synced_ = false;
  std::size_t projection_errors_ = 0;
  // Last: constructed after, and stopped (in ~Informer) before, everything it calls into.
  Reflector reflector_;
};

}  // namespace koord::kube
