#include "plugins/upstream/defaultbinder/default_binder.h"

#include <utility>

#include "framework/framework_handle.h"
#include "plugins/upstream/args_decode.h"

namespace koord::roles::scheduler::upstream {

void DefaultBinder::bind(std::shared_ptr<CycleState> /*state*/, std::shared_ptr<const PodInfo> pod,
                         const std::string& node, StatusCallback done) {
  handle_.cluster().bindPod(std::move(pod), node,
                            [done = std::move(done)](kube::Expected<void> result) {
                              if (result)
                                done(Status::success());
                              else
                                done(Status::error(result.error().message));
                            });
}

}  // namespace koord::roles::scheduler::upstream
