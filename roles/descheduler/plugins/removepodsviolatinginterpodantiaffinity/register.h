// Adds RemovePodsViolatingInterPodAntiAffinity (the community descheduler's plugin Koordinator
// embeds) to the descheduler's plugin registry.
#pragma once

#include "framework/plugin_registry.h"

namespace koord::roles::descheduler {

void registerRemovePodsViolatingInterPodAntiAffinity(PluginRegistry& r);

}  // namespace koord::roles::descheduler
