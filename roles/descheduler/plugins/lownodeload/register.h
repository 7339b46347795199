// Adds LowNodeLoad (Koordinator's load-aware balance plugin) to the descheduler's plugin
// registry.
#pragma once

#include "framework/plugin_registry.h"

namespace koord::roles::descheduler {

void registerLowNodeLoad(PluginRegistry& r);

}  // namespace koord::roles::descheduler
