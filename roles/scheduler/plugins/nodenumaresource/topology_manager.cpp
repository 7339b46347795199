// Admit: hints from every provider, the policy's merge, the affinity stored, then allocation.
#include "plugins/nodenumaresource/topology_manager.h"

#include <string>
#include <vector>

#include "plugins/nodenumaresource/numa_hint.h"

namespace koord::roles::scheduler::nodenumaresource {

Status admitNumaTopology(std::span<NUMATopologyHintProvider* const> providers,
                         const CycleState& state, const PodInfo& pod, const NodeInfo& node,
                         const NumaAdmitRequest& request) {
  std::vector<ProviderHints> hints;
  hints.reserve(providers.size());
  for (const NUMATopologyHintProvider* provider : providers)
    hints.push_back(provider->podTopologyHints(state, pod, node));
  const NumaMergeResult merged = mergeNumaHints(request.policy, request.numa_nodes, hints,
                                                request.exclusive, request.statuses);
  if (!merged.admit)
    return Status::unschedulable(
        std::string(merged.reason.empty() ? kReasonNumaAffinityError : merged.reason));
  if (const NUMAAffinityStore* store = numaAffinityStore(state))
    store->set(node.name(), merged.hint);
  for (const NUMATopologyHintProvider* provider : providers) {
    Status status = provider->allocate(state, merged.hint, pod, node);
    if (!status.ok())
      return status;
  }
  return Status::success();
}

}  // namespace koord::roles::scheduler::nodenumaresource
