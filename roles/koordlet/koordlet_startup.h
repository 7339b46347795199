// What the koordlet resolves about its node and cluster before it builds its modules: the
// cgroup root, the CPU topology and how pods are read from the kubelet.
// Each throws app::ConfigError when the koordlet cannot run without it.
#pragma once

#include "koord/cgroup/cpu_topology.h"
#include "koord/cgroup/resource_executor.h"
#include "koord/kube/kubeconfig.h"
#include "koordlet_options.h"
#include "statesinformer/states_informer.h"

namespace koord {
class FlagSet;
}

namespace koord::roles::koordlet {

/// The kubelet makes kubepods at start; a koordlet started first waits for it (a minute at most)
/// rather than guessing the driver and writing to the wrong tree.
cgroup::CgroupRoot cgroupRoot(const KoordletOptions& o);
cgroup::CpuTopology cpuTopology(const KoordletOptions& o);
/// The states informer's options; how pods are read from the kubelet is logged, with a warning
/// for each kubelet flag that has no effect in that mode.
StatesInformerOptions statesInformerOptions(const KoordletOptions& o, const FlagSet& flags,
                                            const kube::RestConfig& api_server);

}  // namespace koord::roles::koordlet
