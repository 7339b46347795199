// Plugin-declared objects as plugins read them: a typed source of one kind's objects by name,
// found once (at plugin construction) through the ClusterView under the key the plugin declared.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <typeinfo>
#include <vector>

namespace koord::roles::scheduler {

/// Any kind's source, as the ClusterView hands it out; ObjectSource<T> is the typed face.
class AnyObjectSource {
 public:
  virtual ~AnyObjectSource() = default;
  /// The projection type the source holds (checked by ClusterView::source<T>).
  virtual const std::type_info& type() const = 0;
};

/// What a plugin wants to hear about one kind's objects (the PodGroups of its gangs). Each
/// member may be empty. Called on the informer's thread, serially.
template <typename T>
struct ObjectHandlers {
  std::function<void(const std::shared_ptr<const T>&)> on_add;
  std::function<void(const T& old_object, const std::shared_ptr<const T>&)> on_update;
  std::function<void(const T&)> on_delete;
};

/// One kind's objects by name ("namespace/name" for namespaced kinds). get() is a hash lookup
/// and thread-safe: Filter and Score may call it from many threads at once.
template <typename T>
class ObjectSource : public AnyObjectSource {
 public:
  const std::type_info& type() const final { return typeid(T); }
  /// Null when there is no such object.
  virtual std::shared_ptr<const T> get(std::string_view name) const = 0;
  /// Every object held now.
  virtual std::vector<std::shared_ptr<const T>> list() const = 0;
  /// Adds handlers for the kind's events; only before the informers start (plugins subscribe
  /// when built). Sources without events (fixtures) keep the default, which drops them.
  virtual void subscribe(ObjectHandlers<T> /*handlers*/) const {}
  /// Watches a namespaced kind in `ns` alone, where the plugin's args say its objects are (so
  /// that reading them takes a Role, not a ClusterRole); only before the informers start. False
  /// when another plugin narrowed it to another namespace first, which stays. Sources that are
  /// not informers (fixtures) keep the default, which narrows nothing.
  virtual bool narrowToNamespace(std::string_view /*ns*/) const { return true; }
};

}  // namespace koord::roles::scheduler
