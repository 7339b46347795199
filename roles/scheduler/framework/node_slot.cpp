#include "framework/node_slot.h"

#include <mutex>
#include <string>

#include "koord/core/log.h"
#include "koord/core/string_map.h"

namespace koord::roles::scheduler {

std::uint32_t nodeSlotOf(std::string_view name) {
  static std::mutex mu;
  static StringMap<std::uint32_t> slots;
  static bool full_logged = false;
  std::lock_guard lock(mu);
  if (auto it = slots.find(name); it != slots.end())
    return it->second;
  if (slots.size() >= kMaxNodeSlots) {
    if (!full_logged) {
      KOORD_LOG_ERROR(
          "scheduler: more than {} distinct node names seen; node {} and later new "
          "names get no per-node plugin state",
          kMaxNodeSlots, name);
      full_logged = true;
    }
    return kNoNodeSlot;
  }
  const auto slot = static_cast<std::uint32_t>(slots.size());
  slots.emplace(std::string(name), slot);
  return slot;
}

}  // namespace koord::roles::scheduler
