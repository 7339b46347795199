// Adds RemovePodsHavingTooManyRestarts (the community descheduler's plugin) to the descheduler's
// plugin registry.
#pragma once

#include "framework/plugin_registry.h"

namespace koord::roles::descheduler {

void registerRemovePodsHavingTooManyRestarts(PluginRegistry& r);

}  // namespace koord::roles::descheduler
