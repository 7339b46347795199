#include "plugins/upstream/volumebinding/register.h"

#include <memory>
#include <string>

#include "framework/plugin_factory.h"
#include "plugins/upstream/storage/storage_informers.h"
#include "plugins/upstream/volumebinding/args.h"
#include "plugins/upstream/volumebinding/volume_binding.h"

namespace koord::roles::scheduler::upstream {

void registerVolumeBinding(PluginRegistry& registry) {
  using volumebinding::VolumeBindingArgs;
  PluginFactory factory = makePluginFactory<volumebinding::VolumeBinding, VolumeBindingArgs>(
      volumebinding::decodeVolumeBindingArgs,
      // upstream's words
      "want args to be of type VolumeBindingArgs");
  factory.objects.push_back(storage::declarePersistentVolumes());
  factory.objects.push_back(storage::declarePersistentVolumeClaims());
  factory.objects.push_back(storage::declareStorageClasses());
  factory.objects.push_back(storage::declareCSINodes());
  registry.add(std::string(volumebinding::kName), std::move(factory));
}

}  // namespace koord::roles::scheduler::upstream
