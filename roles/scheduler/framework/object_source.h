// Plugin-declared objects as plugins read them: a typed source of one kind's objects by name,
// found once (at plugin construction) through the ClusterView under the key the plugin declared.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <typeinfo>

namespace koord::roles::scheduler {

/// Any kind's source, as the ClusterView hands it out; ObjectSource<T> is the typed face.
class AnyObjectSource {
 public:
  virtual ~AnyObjectSource() = default;
  /// The projection type the source holds (checked by ClusterView::source<T>).
  virtual const std::type_info& type() const = 0;
};

/// One kind's objects by name ("namespace/name" for namespaced kinds). get() is a hash lookup
/// and thread-safe: Filter and Score may call it from many threads at once.
template <typename T>
class ObjectSource : public AnyObjectSource {
 public:
  const std::type_info& type() const final { return typeid(T); }
  /// Null when there is no such object.
  virtual std::shared_ptr<const T> get(std::string_view name) const = 0;
};

}  // namespace koord::roles::scheduler
