// The resctrl file system as the koordlet uses it, under a root given by the caller
// (<-sys-fs-root-dir>/resctrl, a temp tree in tests): what the hardware offers (info/), the
// control groups' schemata and tasks, and nothing else. Nothing is mounted here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "koord/kube/error.h"
#include "qosmanager/resctrl/resctrl_policy.h"

namespace koord::roles::koordlet::qosmanager {

/// Bounds on what is read from resctrl: a group's tasks file and the ids taken from it.
inline constexpr std::size_t kMaxResctrlTasksBytes = 8u << 20;
inline constexpr std::size_t kMaxResctrlTasks = 1u << 20;

/// The path of the first file missing among root/schemata (resctrl mounted), root/info/L3/
/// cbm_mask (L3 CAT) and root/info/MB/num_closids (MBA), or "" when all are there. Koordinator
/// needs both CAT and MBA (its cat_l3 and mba CPU flags) before it touches resctrl.
std::string resctrlMissingInterface(const std::filesystem::path& root);

/// What the hardware offers: the root's cbm_mask and min_cbm_bits, and the cache ids of the
/// root schemata's L3 and MB lines.
struct ResctrlCaps {
  std::uint64_t cbm = 0;
  int min_cbm_bits = 1;
  std::vector<int> l3_ids;
  std::vector<int> mb_ids;
};
/// Errors name the file: a bad cbm_mask or min_cbm_bits, a root schemata that does not parse or
/// has no L3 line.
kube::Expected<ResctrlCaps> readResctrlCaps(const std::filesystem::path& root);

/// mkdir root/<group> (the kernel then creates its files); true when it was created now.
kube::Expected<bool> ensureResctrlGroup(const std::filesystem::path& root, ResctrlGroup group);

kube::Expected<ResctrlSchemata> readGroupSchemata(const std::filesystem::path& root,
                                                  ResctrlGroup group);
/// One write of `text` (lines ending in '\n') to the group's schemata.
kube::Expected<void> writeGroupSchemata(const std::filesystem::path& root, ResctrlGroup group,
                                        std::string_view text);

/// The ids in the group's tasks file; errors past kMaxResctrlTasksBytes or kMaxResctrlTasks.
kube::Expected<std::unordered_set<std::int32_t>> readGroupTasks(const std::filesystem::path& root,
                                                                ResctrlGroup group);

struct TaskWriteStats {
  std::size_t written = 0;
  /// Ids the kernel refused, most often a thread that exited since it was read (ESRCH).
  std::size_t failed = 0;
  /// The first failure's path and errno text (without the id, so that it reads the same from
  /// one round to the next).
  std::string first_error;
};
/// Appends `ids` to the group's tasks file, one id per write() as the kernel takes them.
TaskWriteStats addGroupTasks(const std::filesystem::path& root, ResctrlGroup group,
                             std::span<const std::int32_t> ids);

}  // namespace koord::roles::koordlet::qosmanager
