#include "qosmanager/blkio/blkio_apply.h"

#include <algorithm>
#include <optional>
#include <system_error>
#include <utility>

#include <fmt/format.h>

#include "koord/cgroup/kubepods_path.h"
#include "qosmanager/blkio/blkio_format.h"
#include "qosmanager/sysreconcile/kernel_file.h"

namespace koord::roles::koordlet::qosmanager {

namespace fs = std::filesystem;

namespace {

bool fileExists(const fs::path& p) {
  std::error_code ec;
  return fs::exists(p, ec);
}

DeviceSetting settingFor(cgroup::Resource r, cgroup::CgroupVersion v, const BlkIOConfig* io) {
  if (r == cgroup::Resource::kBlkioCostQos)
    return costQosSetting(io);
  if (r == cgroup::Resource::kBlkioCostModel)
    return costModelSetting(*io);
  return cgroupDeviceSetting(r, v, io);
}

class Applier {
 public:
  Applier(const std::vector<cgroup::Resource>& skip, cgroup::ResourceExecutor& cgroups)
      : skip_(skip), cgroups_(cgroups) {}

  void apply(const BlkIOTarget& t) {
    if (!t.root && !cgroups_.exists(t.dir, cgroup::Resource::kBlkioReadBps)) {
      ++stats_.absent;
      return;
    }
    if (t.root) {
      for (auto r : kBlkIORootResources)
        applyFile(t, r);
    } else {
      for (auto r : kBlkIOCgroupResources)
        applyFile(t, r);
    }
  }

  BlkIOApplyStats take() { return std::move(stats_); }

 private:
  std::string pathOf(const BlkIOTarget& t, cgroup::Resource r) const {
    return t.root ? blkioRootFile(cgroups_, r).string() : cgroups_.pathOf(t.dir, r).string();
  }

  Expected<std::string> read(const BlkIOTarget& t, cgroup::Resource r) const {
    if (!t.root)
      return cgroups_.read(t.dir, r);
    auto text = readKernelFile(blkioRootFile(cgroups_, r));
    if (!text)
      return text.error();
    if (!*text)
      return kube::makeKubeError(fmt::format("{}: not there", pathOf(t, r)));
    return std::move(**text);
  }

  void applyFile(const BlkIOTarget& t, cgroup::Resource r) {
    if (std::find(skip_.begin(), skip_.end(), r) != skip_.end())
      return;
    auto text = read(t, r);
    if (!text) {
      stats_.errors.push_back(text.error().message);
      return;
    }
    auto lines = parseDeviceLines(*text);
    if (!lines) {
      stats_.errors.push_back(fmt::format("{}: {}", pathOf(t, r), lines.error().message));
      return;
    }
    const auto version = cgroups_.root().version;
    for (const auto& d : t.devices)
      applyDevice(t, r, d.device, settingFor(r, version, &d.io), *lines, false);
    if (r == cgroup::Resource::kBlkioCostModel)
      return;
    for (const auto& [device, current] : *lines) {
      const bool planned = std::any_of(t.devices.begin(), t.devices.end(),
                                       [&](const BlkIODevice& d) { return d.device == device; });
      if (!planned)
        applyDevice(t, r, device, settingFor(r, version, nullptr), *lines, true);
    }
  }

  void applyDevice(const BlkIOTarget& t, cgroup::Resource r, const std::string& device,
                   const DeviceSetting& want, const std::map<std::string, std::string>& lines,
                   bool reset) {
    std::optional<std::string> current;
    if (auto it = lines.find(device); it != lines.end())
      current = it->second;
    if (deviceSettingHeld(current, want)) {
      ++stats_.unchanged;
      return;
    }
    const std::string value = fmt::format("{} {}", device, want.value);
    if (t.root) {
      writeRoot(t, r, value, reset);
      return;
    }
    auto written = cgroups_.write(t.dir, r, value);
    if (!written) {
      // Refusals (the kernel's, the range check's) are logged and counted by the executor.
      if (!cgroup::isRefusedWrite(written.error()))
        stats_.errors.push_back(written.error().message);
      return;
    }
    count(*written == cgroup::WriteOutcome::kWritten, reset);
  }

  // The root is no cgroup directory the executor walks to: its files are written directly,
  // after the same range check.
  void writeRoot(const BlkIOTarget& t, cgroup::Resource r, const std::string& value, bool reset) {
    auto valid = cgroup::validateValue(r, value);
    if (!valid) {
      stats_.errors.push_back(fmt::format("{}: {}", pathOf(t, r), valid.error().message));
      return;
    }
    auto written = writeKernelFile(blkioRootFile(cgroups_, r), *valid);
    if (!written) {
      stats_.errors.push_back(written.error().message);
      return;
    }
    count(true, reset);
  }

  void count(bool written, bool reset) {
    if (!written) {
      ++stats_.unchanged;
      return;
    }
    ++stats_.written;
    if (reset)
      ++stats_.reset;
  }

  const std::vector<cgroup::Resource>& skip_;
  cgroup::ResourceExecutor& cgroups_;
  BlkIOApplyStats stats_;
};

}  // namespace

fs::path blkioRootFile(const cgroup::ResourceExecutor& cgroups, cgroup::Resource r) {
  const auto file = cgroup::resourceFile(r, cgroups.root().version);
  fs::path p = cgroups.root().root;
  if (!file.subsystem.empty())
    p /= file.subsystem;
  return p / file.file;
}

std::vector<MissingBlkIOFile> missingBlkIOFiles(const cgroup::ResourceExecutor& cgroups) {
  std::vector<MissingBlkIOFile> out;
  const std::string kubepods = cgroup::kubepodsDir(cgroups.root().driver);
  for (auto r : kBlkIOCgroupResources) {
    auto path = cgroups.pathOf(kubepods, r);
    if (!fileExists(path))
      out.push_back({r, path.string()});
  }
  for (auto r : kBlkIORootResources) {
    auto path = blkioRootFile(cgroups, r);
    if (!fileExists(path))
      out.push_back({r, path.string()});
  }
  return out;
}

std::string blkioMissingInterface(const cgroup::ResourceExecutor& cgroups) {
  auto path =
      cgroups.pathOf(cgroup::kubepodsDir(cgroups.root().driver), cgroup::Resource::kBlkioReadBps);
  return fileExists(path) ? "" : path.string();
}

BlkIOApplyStats applyBlkIOPlan(const BlkIOPlan& plan, const std::vector<cgroup::Resource>& skip,
                               cgroup::ResourceExecutor& cgroups) {
  Applier applier(skip, cgroups);
  for (const auto& t : plan.targets)
    applier.apply(t);
  return applier.take();
}

}  // namespace koord::roles::koordlet::qosmanager
