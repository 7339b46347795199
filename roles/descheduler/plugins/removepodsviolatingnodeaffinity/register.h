// Adds RemovePodsViolatingNodeAffinity (the community descheduler's plugin Koordinator embeds) to
// the descheduler's plugin registry.
#pragma once

#include "framework/plugin_registry.h"

namespace koord::roles::descheduler {

void registerRemovePodsViolatingNodeAffinity(PluginRegistry& r);

}  // namespace koord::roles::descheduler
