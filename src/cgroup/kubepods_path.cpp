#include "koord/cgroup/kubepods_path.h"

#include <algorithm>

#include <fmt/format.h>

namespace koord::cgroup {

namespace {

bool isLowerHex(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

std::string_view tierName(QoSTier tier) {
  return tier == QoSTier::kBurstable ? "burstable" : "besteffort";
}

}  // namespace

bool validPodUid(std::string_view uid) {
  if (uid.size() < 32 || uid.size() > 36 || !isLowerHex(uid.front()) || !isLowerHex(uid.back()))
    return false;
  return std::all_of(uid.begin(), uid.end(), [](char c) { return isLowerHex(c) || c == '-'; });
}

bool validContainerId(std::string_view id) {
  return id.size() == 64 && std::all_of(id.begin(), id.end(), isLowerHex);
}

Expected<ContainerRef> parseContainerStatusId(std::string_view container_id) {
  auto sep = container_id.find("://");
  if (sep == std::string_view::npos || sep == 0) {
    return invalidArgument(
        fmt::format("container ID {:?}: not <runtime>://<id>", std::string(container_id)));
  }
  ContainerRef ref{std::string(container_id.substr(0, sep)),
                   std::string(container_id.substr(sep + 3))};
  if (ref.runtime != "containerd" && ref.runtime != "docker" && ref.runtime != "cri-o") {
    return invalidArgument(fmt::format("container ID {:?}: unknown runtime {:?}",
                                       std::string(container_id), ref.runtime));
  }
  if (!validContainerId(ref.id)) {
    return invalidArgument(
        fmt::format("container ID {:?}: not 64 lowercase hex digits", std::string(container_id)));
  }
  return ref;
}

std::string kubepodsDir(CgroupDriver d) {
  return d == CgroupDriver::kSystemd ? "kubepods.slice" : "kubepods";
}

std::string qosTierDir(CgroupDriver d, QoSTier tier) {
  if (tier == QoSTier::kGuaranteed)
    return kubepodsDir(d);
  if (d == CgroupDriver::kSystemd)
    return fmt::format("kubepods.slice/kubepods-{}.slice", tierName(tier));
  return fmt::format("kubepods/{}", tierName(tier));
}

Expected<std::string> podDir(CgroupDriver d, QoSTier tier, std::string_view uid) {
  if (!validPodUid(uid)) {
    return invalidArgument(
        fmt::format("pod UID {:?}: not 32-36 lowercase hex digits and dashes", std::string(uid)));
  }
  if (d == CgroupDriver::kCgroupfs)
    return fmt::format("{}/pod{}", qosTierDir(d, tier), uid);
  // systemd escapes '-' in a unit name as a hierarchy separator, so the kubelet writes '_'.
  std::string escaped(uid);
  std::replace(escaped.begin(), escaped.end(), '-', '_');
  if (tier == QoSTier::kGuaranteed)
    return fmt::format("kubepods.slice/kubepods-pod{}.slice", escaped);
  return fmt::format("{}/kubepods-{}-pod{}.slice", qosTierDir(d, tier), tierName(tier), escaped);
}

Expected<std::string> containerDir(CgroupDriver d, std::string_view pod_dir,
                                   std::string_view runtime, std::string_view id) {
  if (!validRelativeDir(pod_dir)) {
    return invalidArgument(
        fmt::format("pod cgroup {:?}: not a relative cgroup directory", std::string(pod_dir)));
  }
  if (!validContainerId(id)) {
    return invalidArgument(
        fmt::format("container ID {:?}: not 64 lowercase hex digits", std::string(id)));
  }
  if (d == CgroupDriver::kCgroupfs)
    return fmt::format("{}/{}", pod_dir, id);
  std::string_view prefix;
  if (runtime == "containerd")
    prefix = "cri-containerd";
  else if (runtime == "docker")
    prefix = "docker";
  else if (runtime == "cri-o")
    prefix = "crio";
  else
    return invalidArgument(fmt::format("container runtime {:?}: unknown", std::string(runtime)));
  return fmt::format("{}/{}-{}.scope", pod_dir, prefix, id);
}

Expected<std::string> cgroupParentDir(CgroupDriver d, std::string_view parent) {
  std::string dir;
  std::string_view rest = parent;
  while (!rest.empty() && rest.front() == '/')
    rest.remove_prefix(1);
  const bool slice_name = d == CgroupDriver::kSystemd && rest.ends_with(".slice") &&
                          rest.find('/') == std::string_view::npos;
  if (slice_name) {
    // systemd's own expansion: a-b-c.slice lives in a.slice/a-b.slice/.
    std::string_view name = rest.substr(0, rest.size() - 6);
    for (std::size_t dash = name.find('-'); dash != std::string_view::npos;
         dash = name.find('-', dash + 1)) {
      dir += fmt::format("{}.slice/", name.substr(0, dash));
    }
    dir += rest;
  } else {
    dir = std::string(rest);
  }
  if (!validRelativeDir(dir)) {
    return invalidArgument(fmt::format("cgroup parent {:?}: not a cgroup directory",
                                       std::string(parent.substr(0, 256))));
  }
  return dir;
}

bool validRelativeDir(std::string_view dir) {
  if (dir.empty())
    return false;
  std::size_t start = 0;
  while (true) {
    auto slash = dir.find('/', start);
    auto part = dir.substr(start, slash == std::string_view::npos ? dir.npos : slash - start);
    if (part.empty() || part == "." || part == "..")
      return false;
    for (char c : part) {
      bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                c == '.' || c == '_' || c == '-' || c == '@';
      if (!ok)
        return false;
    }
    if (slash == std::string_view::npos)
      return true;
    start = slash + 1;
  }
}

}  // namespace koord::cgroup
