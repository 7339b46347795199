// Adds PodLifeTime (the community descheduler's plugin) to the descheduler's plugin registry. Its
// args have no usable defaults: a profile that enables it must configure it.
#pragma once

#include "framework/plugin_registry.h"

namespace koord::roles::descheduler {

void registerPodLifeTime(PluginRegistry& r);

}  // namespace koord::roles::descheduler
