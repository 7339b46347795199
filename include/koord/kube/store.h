// The informer's cache: projected objects by "namespace/name" key, with secondary indexes
// (namespace, spec.nodeName, anything a role needs) kept in step with every change.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace koord::kube {

/// What an index files an object under; several values put it under several (labels), none
/// leaves it out.
template <typename T>
using IndexFunc = std::function<std::vector<std::string>(const T&)>;

/// Thread-safe: readers share a lock, the informer's writes take it exclusively. Objects are
/// immutable once stored (shared_ptr<const T>), so a reader may keep one after the lock is gone
/// while the store moves on; that is what lets handlers see an old and a new version at once.
template <typename T>
class Store {
 public:
  using Ptr = std::shared_ptr<const T>;

  /// Indexes must be added before the first object, as client-go refuses them after.
  void addIndex(const std::string& name, IndexFunc<T> fn) {
    std::unique_lock lock(mu_);
    if (!items_.empty())
      throw std::logic_error("Store::addIndex(" + name + ") after objects were added");
    if (!indexes_.emplace(name, Index{std::move(fn), {}}).second)
      throw std::logic_error("Store::addIndex: index " + name + " already exists");
  }

  Ptr get(const std::string& key) const {
    std::shared_lock lock(mu_);
    auto it = items_.find(key);
    return it == items_.end() ? nullptr : it->second.obj;
  }

  /// metadata.resourceVersion of the stored object ("" when absent).
  std::string resourceVersion(const std::string& key) const {
    std::shared_lock lock(mu_);
    auto it = items_.find(key);
    return it == items_.end() ? std::string() : it->second.resource_version;
  }

  std::vector<Ptr> list() const {
    std::shared_lock lock(mu_);
    std::vector<Ptr> out;
    out.reserve(items_.size());
    for (const auto& [key, entry] : items_)
      out.push_back(entry.obj);
    return out;
  }

  std::vector<std::string> keys() const {
    std::shared_lock lock(mu_);
    std::vector<std::string> out;
    out.reserve(items_.size());
    for (const auto& [key, entry] : items_)
      out.push_back(key);
    return out;
  }

  /// Objects filed under `value` by index `name`; throws std::out_of_range for an unknown index
  /// (a programmer error, not data).
  std::vector<Ptr> byIndex(const std::string& name, const std::string& value) const {
    std::shared_lock lock(mu_);
    const Index& index = indexes_.at(name);
    std::vector<Ptr> out;
    auto it = index.entries.find(value);
    if (it == index.entries.end())
      return out;
    out.reserve(it->second.size());
    for (const auto& key : it->second) {
      if (auto entry = items_.find(key); entry != items_.end())
        out.push_back(entry->second.obj);
    }
    return out;
  }

  std::size_t size() const {
    std::shared_lock lock(mu_);
    return items_.size();
  }

  /// Inserts or replaces; answers the previous object (null when new).
  Ptr put(const std::string& key, Ptr obj, std::string resource_version = {}) {
    std::unique_lock lock(mu_);
    Ptr old;
    if (auto it = items_.find(key); it != items_.end()) {
      old = std::exchange(it->second.obj, obj);
      it->second.resource_version = std::move(resource_version);
      unindexLocked(key, *old);
    } else {
      items_.emplace(key, Entry{obj, std::move(resource_version)});
    }
    indexLocked(key, *obj);
    return old;
  }

  /// Answers the removed object (null when absent).
  Ptr erase(const std::string& key) {
    std::unique_lock lock(mu_);
    auto it = items_.find(key);
    if (it == items_.end())
      return nullptr;
    Ptr old = std::move(it->second.obj);
    items_.erase(it);
    unindexLocked(key, *old);
    return old;
  }

 private:
  struct Entry {
    Ptr obj;
    std::string resource_version;
  };
  struct Index {
    IndexFunc<T> fn;
    std::unordered_map<std::string, std::unordered_set<std::string>> entries;
  };

  void indexLocked(const std::string& key, const T& obj) {
    for (auto& [name, index] : indexes_) {
      for (auto& value : index.fn(obj))
        index.entries[std::move(value)].insert(key);
    }
  }

  void unindexLocked(const std::string& key, const T& obj) {
    for (auto& [name, index] : indexes_) {
      for (const auto& value : index.fn(obj)) {
        auto it = index.entries.find(value);
        if (it == index.entries.end())
          continue;
        it->second.erase(key);
        if (it->second.empty())
          index.entries.erase(it);
      }
    }
  }

  mutable std::shared_mutex mu_;
  std::unordered_map<std::string, Entry> items_;
  std::map<std::string, Index> indexes_;
};

}  // namespace koord::kube
