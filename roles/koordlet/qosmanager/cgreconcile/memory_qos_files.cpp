#include "qosmanager/cgreconcile/memory_qos_files.h"

#include <filesystem>
#include <system_error>

#include "koord/cgroup/kubepods_path.h"

namespace koord::roles::koordlet::qosmanager {

namespace {

bool fileExists(const cgroup::ResourceExecutor& cgroups, cgroup::Resource r) {
  std::error_code ec;
  return std::filesystem::exists(cgroups.pathOf(cgroup::kubepodsDir(cgroups.root().driver), r), ec);
}

}  // namespace

bool hierarchicalMemoryResource(cgroup::Resource r) {
  return r == cgroup::Resource::kMemoryMin || r == cgroup::Resource::kMemoryLow ||
         r == cgroup::Resource::kMemoryHigh;
}

std::vector<MissingMemoryFile> missingMemoryQOSFiles(const cgroup::ResourceExecutor& cgroups) {
  std::vector<MissingMemoryFile> out;
  for (auto r : kMemoryQOSResources) {
    if (!fileExists(cgroups, r)) {
      out.push_back({r, cgroups.pathOf(cgroup::kubepodsDir(cgroups.root().driver), r).string()});
    }
  }
  return out;
}

std::string memoryQOSMissingInterface(const cgroup::ResourceExecutor& cgroups) {
  if (fileExists(cgroups, cgroup::Resource::kMemoryMin))
    return "";
  return cgroups.pathOf(cgroup::kubepodsDir(cgroups.root().driver), cgroup::Resource::kMemoryMin)
      .string();
}

}  // namespace koord::roles::koordlet::qosmanager
