// Registration of Koordinator's LoadAwareScheduling plugin (load-aware filtering and scoring
// from NodeMetric usage) in the scheduler's plugin registry, with the NodeMetric informer it reads.
#pragma once

#include <chrono>
#include <functional>

namespace koord::roles::scheduler {

class PluginRegistry;

/// Adds "LoadAwareScheduling": its args decoder (Koordinator's defaults, strict fields), a
/// factory reading the real clock (its coarse reading, a few milliseconds grained) and its
/// declared NodeMetric informer (kNodeMetricSource), kept on each node's NodeInfo.
void registerLoadAwareScheduling(PluginRegistry& registry);
/// The same with `now` as the plugin's clock: koord explain reads a recording as of the time it
/// was taken, so that its NodeMetrics are as fresh as they were then.
void registerLoadAwareScheduling(PluginRegistry& registry,
                                 std::function<std::chrono::system_clock::time_point()> now);

}  // namespace koord::roles::scheduler
