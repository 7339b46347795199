#include "cycle_state.h"

#include <algorithm>

namespace koord::roles::scheduler {

void CycleState::write(std::string_view key, std::unique_ptr<StateData> data) {
  for (auto& [k, v] : entries_) {
    if (k == key) {
      v = std::move(data);
      return;
    }
  }
  entries_.emplace_back(std::string(key), std::move(data));
}

void CycleState::erase(std::string_view key) {
  std::erase_if(entries_, [&](const auto& e) { return e.first == key; });
}

const StateData* CycleState::find(std::string_view key) const {
  // Every Filter and Score call looks its state up, on every node. Keys share long prefixes
  // ("PreFilterNode...") and differ near the end, so the length and last byte settle almost
  // every mismatch before a full compare.
  if (key.empty())
    return nullptr;
  for (const auto& [k, v] : entries_) {
    if (k.size() == key.size() && k.back() == key.back() && k == key)
      return v.get();
  }
  return nullptr;
}

CycleState CycleState::clone() const {
  CycleState out;
  out.skip_filter_plugins_for_nominated = skip_filter_plugins_for_nominated;
  out.entries_.reserve(entries_.size());
  for (const auto& [k, v] : entries_)
    out.entries_.emplace_back(k, v ? v->clone() : nullptr);
  return out;
}

}  // namespace koord::roles::scheduler
