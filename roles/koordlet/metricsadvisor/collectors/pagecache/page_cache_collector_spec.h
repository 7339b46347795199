// Koordinator's PageCacheCollector: pod and container memory usage with page cache from
// memory.stat into the metric cache, for the NodeMetric's usageWithPageCache policy.
#pragma once

#include <cstdint>
#include <string_view>

#include "koord/cgroup/cgroup_version.h"
#include "koord/kube/error.h"
#include "metricsadvisor/framework/collector.h"

namespace koord::roles::koordlet::metricsadvisor {

/// No gate, as in Koordinator: -enable-pagecache-collector turns it on. Every
/// -collect-res-used-interval. The node's node_memory_usage_with_page_cache (MemTotal - MemFree)
/// is not written here: the usage collector records it every round already, and a second writer
/// would halve the window the series' ring covers.
CollectorSpec pageCacheCollector();

/// memory.stat's inactive_anon + active_anon + unevictable + active_file + inactive_file, in
/// bytes: v1's hierarchical total_* keys, v2's plain ones. A missing key or a line that is not
/// "key value" is an error naming it.
kube::Expected<std::uint64_t> memoryUsageWithPageCache(std::string_view memory_stat,
                                                       cgroup::CgroupVersion version);

}  // namespace koord::roles::koordlet::metricsadvisor
