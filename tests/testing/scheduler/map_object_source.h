// A plugin-declared kind's source over a map the test fills: what FakeCluster hands plugins in
// place of an informer's store.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>

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
  void set(std::string name, std::shared_ptr<const T> obj) {
    objects_.insert_or_assign(std::move(name), std::move(obj));
  }
  void remove(std::string_view name) {
    if (auto it = objects_.find(name); it != objects_.end())
      objects_.erase(it);
  }

 private:
  StringMap<std::shared_ptr<const T>> objects_;
};

}  // namespace koord::roles::scheduler::testkit
