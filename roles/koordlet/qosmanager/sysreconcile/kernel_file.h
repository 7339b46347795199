// Reads and writes of the kernel's own files outside the cgroup tree (/proc/sys, /sys/kernel/mm,
// /sys/fs/resctrl): bounded reads, no file ever created, no symlink followed at the last step,
// no write of a value the file already holds.
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "koord/kube/error.h"

namespace koord::roles::koordlet::qosmanager {

/// Enough for any single-value file, a schemata file or /proc/cpuinfo's first CPU.
inline constexpr std::size_t kMaxKernelFileBytes = 64 * 1024;

/// The file's text; nullopt when it does not exist; an error naming it when it cannot be read
/// or is longer than `limit`.
kube::Expected<std::optional<std::string>> readKernelFile(const std::filesystem::path& path,
                                                          std::size_t limit = kMaxKernelFileBytes);

/// The file's first `limit` bytes (nullopt when it does not exist): for files whose head is
/// enough, such as /proc/cpuinfo.
kube::Expected<std::optional<std::string>> readKernelFileHead(const std::filesystem::path& path,
                                                              std::size_t limit);

/// Writes `value` with one write() to a file that must exist. The error names the path, the
/// value and the errno's text; its code is the errno in the system category, so a caller can
/// tell the kernel's refusal (EINVAL, ESRCH) from a missing file (ENOENT).
kube::Expected<void> writeKernelFile(const std::filesystem::path& path, std::string_view value);

enum class KernelWrite { kWritten, kUnchanged };
/// Reads the file; writes `value` unless the file already holds it (both trimmed). A missing file
/// is an error (ENOENT).
kube::Expected<KernelWrite> updateKernelFile(const std::filesystem::path& path,
                                             std::string_view value);

/// Whitespace (spaces, tabs, CR, LF) off both ends.
std::string_view trimKernelText(std::string_view s);

}  // namespace koord::roles::koordlet::qosmanager
