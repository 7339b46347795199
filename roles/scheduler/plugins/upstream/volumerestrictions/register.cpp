#include "plugins/upstream/volumerestrictions/register.h"

#include <string>

#include "framework/plugin_factory.h"
#include "plugins/upstream/volumerestrictions/volume_restrictions.h"

namespace koord::roles::scheduler::upstream {

void registerVolumeRestrictions(PluginRegistry& registry) {
  // Reads only the pods' own volumes: no informer beyond pods.
  registry.add(std::string(kVolumeRestrictionsName),
               makePluginFactory<VolumeRestrictions>(kVolumeRestrictionsName));
}

}  // namespace koord::roles::scheduler::upstream
