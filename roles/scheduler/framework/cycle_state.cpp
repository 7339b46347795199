#include "cycle_state.h"

#include <algorithm>
#include <deque>
#include <mutex>
#include <unordered_map>

namespace koord::roles::scheduler {

namespace {

// Every key name ever written, numbered from 1. Names live as long as the process, so entries
// and StateKeys keep views into them; the set stays small (one or two names per plugin).
struct KeyRegistry {
  std::mutex mu;
  std::deque<std::string> names;
  std::unordered_map<std::string_view, std::uint32_t> ids;

  std::pair<std::uint32_t, std::string_view> intern(std::string_view name) {
    std::lock_guard lock(mu);
    if (auto it = ids.find(name); it != ids.end())
      return {it->second, it->first};
    const std::string& stored = names.emplace_back(name);
    const auto id = static_cast<std::uint32_t>(names.size());
    ids.emplace(std::string_view(stored), id);
    return {id, std::string_view(stored)};
  }
};

KeyRegistry& registry() {
  static KeyRegistry r;
  return r;
}

}  // namespace

StateKey::StateKey(std::string_view name) {
  auto [id, stored] = registry().intern(name);
  id_ = id;
  name_ = stored;
}

void CycleState::put(std::uint32_t id, std::string_view name, std::unique_ptr<StateData> data) {
  for (auto& e : entries_) {
    if (e.id == id) {
      e.data = std::move(data);
      return;
    }
  }
  entries_.push_back(Entry{id, name, std::move(data)});
}

void CycleState::write(std::string_view key, std::unique_ptr<StateData> data) {
  auto [id, stored] = registry().intern(key);
  put(id, stored, std::move(data));
}

void CycleState::write(const StateKey& key, std::unique_ptr<StateData> data) {
  put(key.id(), key.name(), std::move(data));
}

void CycleState::erase(std::string_view key) {
  std::erase_if(entries_, [&](const Entry& e) { return e.name == key; });
}

const StateData* CycleState::find(std::string_view key) const {
  // Name-keyed reads (kept for plugins not moved to StateKey) run on every node too. Keys share
  // long prefixes ("PreFilterNode...") and differ near the end, so the length and last byte
  // settle almost every mismatch before a full compare.
  if (key.empty())
    return nullptr;
  for (const auto& e : entries_) {
    if (e.name.size() == key.size() && e.name.back() == key.back() && e.name == key)
      return e.data.get();
  }
  return nullptr;
}

CycleState CycleState::clone() const {
  CycleState out;
  out.skip_filter_plugins_for_nominated = skip_filter_plugins_for_nominated;
  out.skip_filter_plugins = skip_filter_plugins;
  out.skip_score_plugins = skip_score_plugins;
  out.record_plugin_metrics = record_plugin_metrics;
  out.preferred_nodes = preferred_nodes;
  out.pre_filter_rejected_by = pre_filter_rejected_by;
  out.entries_.reserve(entries_.size());
  for (const auto& e : entries_)
    out.entries_.push_back(Entry{e.id, e.name, e.data ? e.data->clone() : nullptr});
  return out;
}

}  // namespace koord::roles::scheduler
