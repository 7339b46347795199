#include "plugins/upstream/volumezone/register.h"

#include <string>
#include <utility>

#include "framework/plugin_factory.h"
#include "plugins/upstream/storage/storage_informers.h"
#include "plugins/upstream/volumezone/volume_zone.h"

namespace koord::roles::scheduler::upstream {

void registerVolumeZone(PluginRegistry& registry) {
  PluginFactory factory = makePluginFactory<VolumeZone>(kVolumeZoneName);
  factory.objects.push_back(storage::declarePersistentVolumeClaims());
  factory.objects.push_back(storage::declarePersistentVolumes());
  factory.objects.push_back(storage::declareStorageClasses());
  registry.add(std::string(kVolumeZoneName), std::move(factory));
}

}  // namespace koord::roles::scheduler::upstream
