#include "runtimehooks/groupidentity/bvt_apply.h"

#include <map>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "koord/apis/extension.h"
#include "koord/cgroup/kubepods_path.h"
#include "koord/cgroup/resource_executor.h"
#include "metricsadvisor/resource_collector.h"
#include "qosmanager/sysreconcile/kernel_file.h"

namespace koord::roles::koordlet {

namespace fs = std::filesystem;

namespace {

constexpr cgroup::Resource kBvt = cgroup::Resource::kCpuBvtWarpNs;
constexpr cgroup::QoSTier kTiers[] = {cgroup::QoSTier::kGuaranteed, cgroup::QoSTier::kBurstable,
                                      cgroup::QoSTier::kBestEffort};

void writeOne(cgroup::ResourceExecutor& cgroups, const std::string& dir, std::int64_t value,
              BvtApplyStats& stats) {
  auto r = cgroups.write(dir, kBvt, std::to_string(value));
  if (!r && cgroup::isRefusedWrite(r.error()))
    ++stats.refused;
  else if (!r)
    stats.errors.push_back(r.error().message);
  else if (*r == cgroup::WriteOutcome::kWritten)
    ++stats.written;
  else
    ++stats.unchanged;
}

// A pod cgroup's name: "pod<uid>" (cgroupfs) or "kubepods[-<tier>]-pod<uid>.slice" (systemd).
bool isPodDirName(std::string_view name) {
  return name.starts_with("pod") || name.find("-pod") != std::string_view::npos;
}

std::string_view baseName(std::string_view dir) {
  auto slash = dir.rfind('/');
  return slash == std::string_view::npos ? dir : dir.substr(slash + 1);
}

// 0 or 1 from a sysctl file; nullopt when it is missing.
kube::Expected<std::optional<bool>> readSwitch(const fs::path& path) {
  auto text = qosmanager::readKernelFile(path);
  if (!text)
    return text.error();
  if (!*text)
    return std::optional<bool>();
  const auto t = qosmanager::trimKernelText(**text);
  if (t != "0" && t != "1")
    return kube::makeKubeError(
        fmt::format("{}: {:?} is not 0 or 1", path.string(), std::string(t)));
  return std::optional<bool>(t == "1");
}

}  // namespace

std::string groupIdentityMissingInterface(const cgroup::ResourceExecutor& cgroups) {
  const auto dir = cgroup::kubepodsDir(cgroups.root().driver);
  if (cgroups.read(dir, kBvt))
    return "";
  return cgroups.pathOf(dir, kBvt).string();
}

kube::Expected<bool> prepareGroupIdentitySysctl(const fs::path& proc_root, bool rule_enable) {
  const fs::path gi = proc_root / "sys/kernel/sched_group_identity_enabled";
  const fs::path core = proc_root / "sys/kernel/sched_core";
  auto current = readSwitch(gi);
  if (!current)
    return current.error();
  if (!*current)
    return true;  // older Anolis kernels: group identity is always on
  if (!rule_enable)
    return **current;
  std::error_code ec;
  if (fs::exists(core, ec)) {
    auto off = qosmanager::updateKernelFile(core, "0");
    if (!off)
      return off.error();
  }
  auto on = qosmanager::updateKernelFile(gi, "1");
  if (!on)
    return on.error();
  return true;
}

void writePodBvt(cgroup::ResourceExecutor& cgroups, const std::string& pod_dir, std::int64_t value,
                 BvtApplyStats& stats) {
  writeOne(cgroups, pod_dir, value, stats);
  auto children = cgroups.listChildren(pod_dir, kBvt);
  if (!children) {
    stats.errors.push_back(children.error().message);
    return;
  }
  for (const auto& child : *children)
    writeOne(cgroups, child, value, stats);
}

BvtApplyStats applyBvtRule(cgroup::ResourceExecutor& cgroups, const BvtRule& rule,
                           const std::vector<PodMeta>& pods, const HostApplications* host_apps) {
  BvtApplyStats stats;
  const auto driver = cgroups.root().driver;
  std::map<std::string, std::int64_t> dangling;  // pod cgroup -> its tier's value
  for (auto tier : kTiers) {
    const auto dir = cgroup::qosTierDir(driver, tier);
    if (!cgroups.exists(dir, kBvt))
      continue;
    writeOne(cgroups, dir, rule.tierValue(tier), stats);
    auto children = cgroups.listChildren(dir, kBvt);
    if (!children) {
      stats.errors.push_back(children.error().message);
      continue;
    }
    for (const auto& child : *children) {
      bool is_tier = false;
      for (auto t : kTiers)
        is_tier |= child == cgroup::qosTierDir(driver, t);
      if (!is_tier && isPodDirName(baseName(child)))
        dangling[child] = rule.tierValue(tier);
    }
  }
  for (const auto& pod : pods) {
    auto dir = podCgroupDir(driver, pod);
    if (!dir) {
      stats.errors.push_back(fmt::format("pod {}: {}", pod.key(), dir.error().message));
      continue;
    }
    dangling.erase(*dir);
    if (!cgroups.exists(*dir, kBvt))
      continue;
    writePodBvt(cgroups, *dir, rule.podValue(apis::podQoSClassRaw(pod.labels), pod.kube_qos),
                stats);
  }
  if (host_apps != nullptr) {
    for (const auto& app : host_apps->apps) {
      const auto dir = hostAppCgroupDir(driver, app);
      if (cgroups.exists(dir, kBvt))
        writeOne(cgroups, dir, rule.hostAppValue(app.qos), stats);
    }
  }
  for (const auto& [dir, value] : dangling)
    writePodBvt(cgroups, dir, value, stats);
  return stats;
}

}  // namespace koord::roles::koordlet
