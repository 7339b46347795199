// A plugin-declared kind's source over a map the test fills: what FakeCluster hands plugins in
// place of an informer's store. set() and remove() send the subscribed handlers their events.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "framework/object_source.h"
#include "koord/core/string_map.h"

namespace koord::roles::scheduler::testkit {

template <typename T>
class MapObjectSource final : public ObjectSource<T> {
 public:
  std::shared_ptr<const T> get(std::string_view name) const override {
    auto it = objects_.find(name);
    return it == objects_.end() ? nullptr : it->second;
  }
  std::vector<std::shared_ptr<const T>> list() const override {
    std::vector<std::shared_ptr<const T>> out;
    out.reserve(objects_.size());
    for (const auto& [name, obj] : objects_)
      out.push_back(obj);
    return out;
  }
  void subscribe(ObjectHandlers<T> handlers) const override {
    handlers_.push_back(std::move(handlers));
  }
  void set(std::string name, std::shared_ptr<const T> obj) {
    auto it = objects_.find(name);
    std::shared_ptr<const T> old = it == objects_.end() ? nullptr : it->second;
    objects_.insert_or_assign(std::move(name), obj);
    for (const auto& h : handlers_) {
      if (old && h.on_update)
        h.on_update(*old, obj);
      else if (!old && h.on_add)
        h.on_add(obj);
    }
  }
  void remove(std::string_view name) {
    auto it = objects_.find(name);
    if (it == objects_.end())
      return;
    std::shared_ptr<const T> old = it->second;
    objects_.erase(it);
    for (const auto& h : handlers_) {
      if (h.on_delete)
        h.on_delete(*old);
    }
  }

 private:
  StringMap<std::shared_ptr<const T>> objects_;
  mutable std::vector<ObjectHandlers<T>> handlers_;
};

}  // namespace koord::roles::scheduler::testkit
