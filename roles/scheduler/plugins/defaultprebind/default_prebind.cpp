#include "plugins/defaultprebind/default_prebind.h"

#include "framework/pod_changes.h"

namespace koord::roles::scheduler::defaultprebind {

void DefaultPreBind::preBind(std::shared_ptr<CycleState> state, std::shared_ptr<const PodInfo> pod,
                             const std::string& /*node*/, StatusCallback done) {
  applyPodChanges(handle_.cluster(), state, pod, std::move(done));
}

}  // namespace koord::roles::scheduler::defaultprebind
