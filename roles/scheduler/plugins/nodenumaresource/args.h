// NodeNUMAResourceArgs: the NodeNUMAResource plugin's pluginConfig args with Koordinator's field
// names and defaults (the default CPU bind policy, the node and NUMA-node scoring strategies).
#pragma once

#include <boost/json/fwd.hpp>

#include <string_view>

#include "config/koord_scoring_strategy.h"
#include "framework/plugin.h"
#include "koord/kube/error.h"
#include "plugins/nodenumaresource/numa_policy.h"

namespace koord::roles::scheduler::nodenumaresource {

inline constexpr std::string_view kPluginName = "NodeNUMAResource";
inline constexpr std::string_view kArgsKind = "NodeNUMAResourceArgs";

/// LeastAllocated over cpu and memory, weight 1 each: Koordinator's default for both strategies.
config::KoordScoringStrategy defaultNUMAResourceScoring();

/// Default-constructed, it holds Koordinator's defaults (what decoding `null` gives).
struct NodeNUMAResourceArgs : PluginArgs {
  /// The policy for LSE/LSR pods that name none (or "Default"); kNone binds no CPUs for them.
  CpuBindPolicy default_cpu_bind_policy = CpuBindPolicy::kFullPCPUs;
  config::KoordScoringStrategy scoring_strategy = defaultNUMAResourceScoring();
  config::KoordScoringStrategy numa_scoring_strategy = defaultNUMAResourceScoring();
};

/// Strict: unknown fields are errors; defaultCPUBindPolicy must be "", FullPCPUs or
/// SpreadByPCPUs (Koordinator's validation); errors name the field.
kube::Expected<NodeNUMAResourceArgs> decodeNodeNUMAResourceArgs(const boost::json::value* args,
                                                                std::string_view api_version);

}  // namespace koord::roles::scheduler::nodenumaresource
