// A table of entries by unique name (the scheduler's and descheduler's plugin registries): filled
// once at startup from an explicit list, then only read.
#pragma once

#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace koord::app {

template <typename Entry>
class NamedRegistry {
 public:
  /// Throws std::logic_error on a duplicate name (a programming error).
  void add(std::string name, Entry entry) {
    if (entries_.contains(name))
      throw std::logic_error("plugin registered twice: " + name);
    entries_.emplace(std::move(name), std::move(entry));
  }
  /// Null when no entry has that name.
  const Entry* find(std::string_view name) const {
    const auto it = entries_.find(name);
    return it == entries_.end() ? nullptr : &it->second;
  }
  /// Sorted.
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    out.reserve(entries_.size());
    for (const auto& [name, entry] : entries_)
      out.push_back(name);
    return out;
  }
  /// By name, sorted.
  const std::map<std::string, Entry, std::less<>>& entries() const { return entries_; }

 private:
  std::map<std::string, Entry, std::less<>> entries_;
};

}  // namespace koord::app
