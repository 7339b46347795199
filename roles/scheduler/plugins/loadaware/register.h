// Registration of Koordinator's LoadAwareScheduling plugin (load-aware filtering and scoring
// from NodeMetric usage) in the scheduler's plugin registry, with the NodeMetric informer it reads.
#pragma once

namespace koord::roles::scheduler {

class PluginRegistry;

/// Adds "LoadAwareScheduling": its args decoder (Koordinator's defaults, strict fields), a
/// factory reading the real clock (its coarse reading, a few milliseconds grained) and its
/// declared NodeMetric informer (kNodeMetricSource), kept on each node's NodeInfo.
void registerLoadAwareScheduling(PluginRegistry& registry);

}  // namespace koord::roles::scheduler
