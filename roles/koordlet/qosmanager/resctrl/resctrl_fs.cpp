#include "qosmanager/resctrl/resctrl_fs.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <boost/system/error_code.hpp>

#include <cerrno>
#include <charconv>
#include <cstring>

#include <fmt/format.h>

#include "qosmanager/sysreconcile/kernel_file.h"

namespace koord::roles::koordlet::qosmanager {

namespace fs = std::filesystem;

namespace {

kube::Expected<std::string> readRequired(const fs::path& path, std::size_t limit) {
  auto text = readKernelFile(path, limit);
  if (!text)
    return text.error();
  if (!*text)
    return kube::makeKubeError(fmt::format("read {}: missing", path.string()));
  return std::move(**text);
}

fs::path groupDir(const fs::path& root, ResctrlGroup group) {
  return root / resctrlGroupName(group);
}

}  // namespace

std::string resctrlMissingInterface(const fs::path& root) {
  for (const char* rel : {"schemata", "info/L3/cbm_mask", "info/MB/num_closids"}) {
    std::error_code ec;
    const fs::path path = root / rel;
    if (!fs::exists(path, ec))
      return path.string();
  }
  return "";
}

kube::Expected<ResctrlCaps> readResctrlCaps(const fs::path& root) {
  ResctrlCaps caps;
  const fs::path cbm_path = root / "info/L3/cbm_mask";
  auto cbm_text = readRequired(cbm_path, kMaxKernelFileBytes);
  if (!cbm_text)
    return cbm_text.error();
  auto cbm = parseCbmMask(trimKernelText(*cbm_text));
  if (!cbm)
    return kube::makeKubeError(fmt::format("{}: {}", cbm_path.string(), cbm.error().message));
  caps.cbm = *cbm;
  // Older kernels have no min_cbm_bits: one way is then the least a mask may hold.
  const fs::path min_path = root / "info/L3/min_cbm_bits";
  auto min_text = readKernelFile(min_path);
  if (!min_text)
    return min_text.error();
  if (*min_text) {
    const auto t = trimKernelText(**min_text);
    int bits = 0;
    auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), bits);
    if (t.empty() || ec != std::errc() || end != t.data() + t.size() || bits < 1 || bits > 64) {
      return kube::makeKubeError(
          fmt::format("{}: {:?} is not a bit count", min_path.string(), std::string(t)));
    }
    caps.min_cbm_bits = bits;
  }
  const fs::path schemata_path = root / "schemata";
  auto schemata_text = readRequired(schemata_path, kMaxKernelFileBytes);
  if (!schemata_text)
    return schemata_text.error();
  auto schemata = parseResctrlSchemata(*schemata_text);
  if (!schemata)
    return kube::makeKubeError(
        fmt::format("{}: {}", schemata_path.string(), schemata.error().message));
  for (const auto& [id, mask] : schemata->l3)
    caps.l3_ids.push_back(id);
  for (const auto& [id, value] : schemata->mb)
    caps.mb_ids.push_back(id);
  if (caps.l3_ids.empty())
    return kube::makeKubeError(fmt::format("{}: no L3 line", schemata_path.string()));
  return caps;
}

kube::Expected<bool> ensureResctrlGroup(const fs::path& root, ResctrlGroup group) {
  const fs::path dir = groupDir(root, group);
  struct stat st {};
  if (::lstat(dir.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode))
      return false;
    return kube::makeKubeError(fmt::format("{}: exists and is not a directory", dir.string()));
  }
  if (::mkdir(dir.c_str(), 0755) != 0) {
    const int e = errno;
    if (e == EEXIST)
      return false;
    return kube::Error(fmt::format("mkdir {}: {}", dir.string(), std::strerror(e)),
                       boost::system::error_code(e, boost::system::system_category()));
  }
  return true;
}

kube::Expected<ResctrlSchemata> readGroupSchemata(const fs::path& root, ResctrlGroup group) {
  const fs::path path = groupDir(root, group) / "schemata";
  auto text = readRequired(path, kMaxKernelFileBytes);
  if (!text)
    return text.error();
  auto parsed = parseResctrlSchemata(*text);
  if (!parsed)
    return kube::makeKubeError(fmt::format("{}: {}", path.string(), parsed.error().message));
  return parsed;
}

kube::Expected<void> writeGroupSchemata(const fs::path& root, ResctrlGroup group,
                                        std::string_view text) {
  return writeKernelFile(groupDir(root, group) / "schemata", text);
}

kube::Expected<std::unordered_set<std::int32_t>> readGroupTasks(const fs::path& root,
                                                                ResctrlGroup group) {
  const fs::path path = groupDir(root, group) / "tasks";
  auto text = readRequired(path, kMaxResctrlTasksBytes);
  if (!text)
    return text.error();
  auto ids = parseTaskIds(*text, kMaxResctrlTasks);
  if (!ids)
    return kube::makeKubeError(fmt::format("{}: {}", path.string(), ids.error().message));
  return std::unordered_set<std::int32_t>(ids->begin(), ids->end());
}

TaskWriteStats addGroupTasks(const fs::path& root, ResctrlGroup group,
                             std::span<const std::int32_t> ids) {
  TaskWriteStats stats;
  if (ids.empty())
    return stats;
  const fs::path path = groupDir(root, group) / "tasks";
  const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    const int e = errno;
    stats.failed = ids.size();
    stats.first_error = fmt::format("open {}: {}", path.string(), std::strerror(e));
    return stats;
  }
  for (std::int32_t id : ids) {
    // One id per write: the kernel moves the thread named by each write and stops at the first
    // id of a write that fails.
    const std::string text = fmt::format("{}\n", id);
    const auto n = ::write(fd, text.data(), text.size());
    if (n == static_cast<ssize_t>(text.size())) {
      ++stats.written;
      continue;
    }
    const int e = n < 0 ? errno : EIO;
    ++stats.failed;
    if (stats.first_error.empty())
      stats.first_error = fmt::format("write {}: {}", path.string(), std::strerror(e));
  }
  ::close(fd);
  return stats;
}

}  // namespace koord::roles::koordlet::qosmanager
