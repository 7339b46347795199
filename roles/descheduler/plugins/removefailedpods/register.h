// Adds RemoveFailedPods (the community descheduler's plugin) to the descheduler's plugin
// registry, with upstream's defaults when a profile gives it no args.
#pragma once

#include "framework/plugin_registry.h"

namespace koord::roles::descheduler {

void registerRemoveFailedPods(PluginRegistry& r);

}  // namespace koord::roles::descheduler
