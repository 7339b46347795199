// Adds RemoveDuplicates (the community descheduler's plugin Koordinator embeds) to the
// descheduler's plugin registry.
#pragma once

#include "framework/plugin_registry.h"

namespace koord::roles::descheduler {

void registerRemoveDuplicates(PluginRegistry& r);

}  // namespace koord::roles::descheduler
