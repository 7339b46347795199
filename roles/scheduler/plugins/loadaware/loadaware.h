// Registration of Koordinator's LoadAwareScheduling plugin (load-aware filtering and scoring
// from NodeMetric usage) in the scheduler's plugin registry.
#pragma once

#include "framework/plugin_registry.h"

namespace koord::roles::scheduler {

/// Adds "LoadAwareScheduling": its args decoder (Koordinator's defaults, strict fields) and a
/// factory reading the real clock (its coarse reading, a few milliseconds grained).
void registerLoadAwareScheduling(PluginRegistry& registry);

}  // namespace koord::roles::scheduler
