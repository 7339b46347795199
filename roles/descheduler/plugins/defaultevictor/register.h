// Adds DefaultEvictor (the community descheduler's evictor filter, Koordinator's name for it) to
// the descheduler's plugin registry.
#pragma once

#include "framework/plugin_registry.h"

namespace koord::roles::descheduler {

void registerDefaultEvictor(PluginRegistry& r);

}  // namespace koord::roles::descheduler
