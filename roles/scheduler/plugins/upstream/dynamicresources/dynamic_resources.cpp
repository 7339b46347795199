#include "plugins/upstream/dynamicresources/dynamic_resources.h"

#include <string>

#include <fmt/format.h>

namespace koord::roles::scheduler::upstream {

Status DynamicResources::preFilter(CycleState&, const PodInfo& pod) {
  if (pod.resource_claims == 0)
    return Status::skip();
  return Status::unresolvable(
      fmt::format("pod has {} spec.resourceClaims: koord's scheduler does not allocate dynamic "
                  "resources",
                  pod.resource_claims));
}

}  // namespace koord::roles::scheduler::upstream
