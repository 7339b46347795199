#include "plugins/upstream/nodevolumelimits/register.h"

#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "framework/plugin_factory.h"
#include "plugins/upstream/nodevolumelimits/csi_limits.h"
#include "plugins/upstream/nodevolumelimits/non_csi_limits.h"
#include "plugins/upstream/storage/storage_informers.h"

namespace koord::roles::scheduler::upstream {

namespace {

void declareStorage(PluginFactory& factory) {
  factory.objects.push_back(storage::declarePersistentVolumeClaims());
  factory.objects.push_back(storage::declarePersistentVolumes());
  factory.objects.push_back(storage::declareStorageClasses());
  factory.objects.push_back(storage::declareCSINodes());
}

// Read once per process (kube-scheduler reads it on every call): a running process's
// environment does not change.
std::optional<std::int64_t> maxFromEnv() {
  static const std::optional<std::int64_t> value = maxPDVolumesFromEnv();
  return value;
}

void registerInTree(PluginRegistry& registry, std::string_view name,
                    const volumelimits::InTreePlugin& plugin) {
  PluginFactory factory;
  factory.decode_args = [name](const boost::json::value* args, std::string_view) {
    return refuseArgs(args, name);
  };
  factory.create = [name, &plugin](
                       std::shared_ptr<const PluginArgs>,
                       FrameworkHandle& handle) -> kube::Expected<std::shared_ptr<Plugin>> {
    return std::shared_ptr<Plugin>(
        std::make_shared<NonCSILimits>(name, plugin, handle, maxFromEnv()));
  };
  declareStorage(factory);
  registry.add(std::string(name), std::move(factory));
}

}  // namespace

void registerNodeVolumeLimits(PluginRegistry& registry) {
  PluginFactory factory = makePluginFactory<NodeVolumeLimits>(kNodeVolumeLimitsName);
  declareStorage(factory);
  registry.add(std::string(kNodeVolumeLimitsName), std::move(factory));
}

void registerEBSLimits(PluginRegistry& registry) {
  registerInTree(registry, kEBSLimitsName, volumelimits::kAWSEBS);
}

void registerGCEPDLimits(PluginRegistry& registry) {
  registerInTree(registry, kGCEPDLimitsName, volumelimits::kGCEPD);
}

void registerAzureDiskLimits(PluginRegistry& registry) {
  registerInTree(registry, kAzureDiskLimitsName, volumelimits::kAzureDisk);
}

void registerCinderLimits(PluginRegistry& registry) {
  registerInTree(registry, kCinderLimitsName, volumelimits::kCinder);
}

}  // namespace koord::roles::scheduler::upstream
