#include "qosmanager/blkio/blkio_device.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <optional>
#include <system_error>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "koord/cgroup/kubepods_path.h"
#include "qosmanager/sysreconcile/kernel_file.h"

namespace koord::roles::koordlet::qosmanager {

namespace fs = std::filesystem;

namespace {

using DevNumber = std::pair<unsigned, unsigned>;

// The deepest stack of device-mapper or md devices followed down to a disk.
constexpr int kMaxStackDepth = 8;
constexpr std::size_t kMaxVolumeNameBytes = 253;

std::string format(DevNumber d) {
  return fmt::format("{}:{}", d.first, d.second);
}

// Relative, without empty, "." or ".." components: it cannot leave the root it is joined to.
bool safeRelative(std::string_view rel) {
  if (rel.empty() || rel.find('\0') != std::string_view::npos)
    return false;
  std::size_t start = 0;
  while (true) {
    const auto slash = rel.find('/', start);
    const auto part = rel.substr(start, slash == std::string_view::npos ? rel.npos : slash - start);
    if (part.empty() || part == "." || part == "..")
      return false;
    if (slash == std::string_view::npos)
      return true;
    start = slash + 1;
  }
}

std::optional<unsigned> parseUnsigned(std::string_view s) {
  unsigned v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size())
    return std::nullopt;
  return v;
}

// A sysfs "dev" file: "MAJ:MIN\n".
std::optional<DevNumber> readDev(const fs::path& path) {
  auto text = readKernelFile(path, 64);
  if (!text || !*text)
    return std::nullopt;
  const auto value = trimKernelText(**text);
  const auto colon = value.find(':');
  if (colon == std::string_view::npos)
    return std::nullopt;
  auto major = parseUnsigned(value.substr(0, colon));
  auto minor = parseUnsigned(value.substr(colon + 1));
  if (!major || !minor)
    return std::nullopt;
  return DevNumber{*major, *minor};
}

std::string errnoText(int e) {
  return std::strerror(e);
}

}  // namespace

std::string wholeDiskOf(const fs::path& sys_root, unsigned major, unsigned minor) {
  DevNumber dev{major, minor};
  for (int depth = 0; depth < kMaxStackDepth; ++depth) {
    const fs::path dir = sys_root / "dev/block" / format(dev);
    std::error_code ec;
    std::vector<fs::path> slaves;
    for (fs::directory_iterator it(dir / "slaves", ec); !ec && it != fs::directory_iterator();
         it.increment(ec)) {
      slaves.push_back(it->path());
      if (slaves.size() > 1)
        break;
    }
    if (slaves.size() == 1) {
      if (auto below = readDev(slaves.front() / "dev")) {
        dev = *below;
        continue;
      }
    }
    // A partition's sysfs directory sits inside its disk's; the kernel resolves the link first.
    if (fs::exists(dir / "partition", ec)) {
      if (auto disk = readDev(dir / ".." / "dev"))
        return format(*disk);
    }
    break;
  }
  return format(dev);
}

kube::Expected<std::string> resolveDeviceBlock(const BlkIORoots& roots, std::string_view name) {
  constexpr std::string_view kPrefix = "/dev/";
  if (name.substr(0, kPrefix.size()) != kPrefix || !safeRelative(name.substr(kPrefix.size()))) {
    return kube::makeKubeError(
        fmt::format("device {:?}: not a path under /dev/", std::string(name)));
  }
  const fs::path path = roots.dev_root / name.substr(kPrefix.size());
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    return kube::makeKubeError(fmt::format("device {}: {}", path.string(), errnoText(errno)));
  if (!S_ISBLK(st.st_mode))
    return kube::makeKubeError(fmt::format("device {}: not a block device", path.string()));
  return wholeDiskOf(roots.sys_root, major(st.st_rdev), minor(st.st_rdev));
}

kube::Expected<std::string> resolvePodVolumeBlock(const BlkIORoots& roots, std::string_view pod_uid,
                                                  std::string_view volume) {
  if (!cgroup::validPodUid(pod_uid))
    return kube::makeKubeError(fmt::format("pod UID {:?}: not a UID", std::string(pod_uid)));
  if (volume.size() > kMaxVolumeNameBytes || volume.find('/') != std::string_view::npos ||
      !safeRelative(volume)) {
    return kube::makeKubeError(fmt::format("volume {:?}: not a volume name", std::string(volume)));
  }
  const fs::path dir = roots.kubelet_root / "pods" / pod_uid / "volumes/kubernetes.io~csi" / volume;
  const fs::path mount = dir / "mount";
  struct stat st {};
  if (::stat(mount.c_str(), &st) != 0) {
    const int e = errno;
    if (e == ENOENT) {
      return kube::makeKubeError(fmt::format(
          "volume {}: no CSI volume mounted at {} (a PVC's volume is mounted under its PV's "
          "name, and koord does not look PVCs up)",
          volume, mount.string()));
    }
    return kube::makeKubeError(
        fmt::format("volume {}: {}: {}", volume, mount.string(), errnoText(e)));
  }
  // Nothing mounted there yet: the directory is on its parent's file system.
  struct stat parent {};
  if (::stat(dir.c_str(), &parent) == 0 && parent.st_dev == st.st_dev) {
    return kube::makeKubeError(
        fmt::format("volume {}: nothing is mounted at {}", volume, mount.string()));
  }
  if (major(st.st_dev) == 0) {
    return kube::makeKubeError(
        fmt::format("volume {}: {} is not on a block device", volume, mount.string()));
  }
  return wholeDiskOf(roots.sys_root, major(st.st_dev), minor(st.st_dev));
}

}  // namespace koord::roles::koordlet::qosmanager
