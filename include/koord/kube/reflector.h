// client-go's Reflector: lists one collection, then watches it from the list's resourceVersion,
// and relists when the watch reports 410 Gone, feeding every object to a ReflectorTarget.
#pragma once

#include <boost/json/fwd.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "koord/kube/rest_client.h"
#include "koord/kube/watch.h"

namespace boost::asio {
class io_context;
}

namespace koord::kube {

/// The identity of a listed or watched object, read from its metadata.
struct ObjectIdentity {
  /// "namespace/name", or "name" for cluster-scoped objects (client-go's MetaNamespaceKeyFunc).
  std::string key;
  std::string resource_version;
};

/// Reads metadata.namespace/name/resourceVersion; an error when there is no name.
Expected<ObjectIdentity> readObjectIdentity(const boost::json::value& object);

/// Receives what the reflector sees. Calls never overlap: they come one at a time, in order,
/// though not always on the same thread. An `object` lives only for the call (a list's items sit
/// in one arena freed with the list): keep a projection or a copy, never a reference.
class ReflectorTarget {
 public:
  virtual ~ReflectorTarget() = default;
  /// A (re)list starts; the objects of the list follow through replaceItem.
  virtual void beginReplace() = 0;
  virtual void replaceItem(const ObjectIdentity& meta, const boost::json::value& object) = 0;
  /// The list is complete: objects not named since beginReplace are gone.
  virtual void endReplace(const std::string& resource_version) = 0;
  /// A list broke off part way (an expired continue token, a lost connection); the next
  /// beginReplace starts over.
  virtual void abortReplace() = 0;
  /// ADDED, MODIFIED or DELETED from the watch (never BOOKMARK or ERROR).
  virtual void apply(WatchEventType type, const ObjectIdentity& meta,
                     const boost::json::value& object) = 0;
};

struct ReflectorOptions {
  std::string label_selector;
  std::string field_selector;
  /// Page size for lists served from etcd (a relist after 410). The first list asks for
  /// resourceVersion=0, which the apiserver's watch cache serves whole and fast.
  std::int64_t page_size = 500;
  /// Server-side watch length; 0 = random 300-600 s per stream, as client-go picks.
  std::int64_t watch_timeout_seconds = 0;
  /// Drop a watch stream silent this long (bookmarks arrive about every minute).
  std::chrono::milliseconds watch_idle_timeout{0};
  std::size_t max_event_bytes = 16u << 20;
};

namespace detail {
struct ReflectorState;
}

/// Keeps `target` in step with the collection `ref` until stop(). A list that fails (server
/// away, 5xx, 403 while RBAC catches up) is retried with WatchBackoff and logged once per
/// failure; the target keeps what it had, so readers never see a half-list. The RestClient and
/// the target must outlive the Reflector; no target call runs after stop() has returned (unless
/// stop() is called from inside a target call, which then finishes).
class Reflector {
 public:
  Reflector(RestClient& client, boost::asio::io_context& io, ResourceRef ref,
            ReflectorOptions options, ReflectorTarget& target);
  ~Reflector();
  Reflector(const Reflector&) = delete;
  Reflector& operator=(const Reflector&) = delete;

  void start();
  void stop();

  /// The resourceVersion of the last complete list or event.
  std::string lastSyncResourceVersion() const;
  /// Lists completed so far: 1 after the initial sync, more after relists.
  std::size_t listsCompleted() const;
  /// Watch streams opened so far, over all watchers.
  std::size_t watchesOpened() const;

 private:
  std::shared_ptr<detail::ReflectorState> state_;
};

}  // namespace koord::kube
