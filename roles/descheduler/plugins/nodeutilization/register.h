// Adds LowNodeUtilization and HighNodeUtilization (the community descheduler's nodeutilization
// plugins) to the descheduler's plugin registry.
#pragma once

#include "framework/plugin_registry.h"

namespace koord::roles::descheduler {

void registerLowNodeUtilization(PluginRegistry& r);
void registerHighNodeUtilization(PluginRegistry& r);

}  // namespace koord::roles::descheduler
