// Reads the node.koordinator.sh/extended-resource-spec pod annotation the manager's webhook
// writes: each container's batch requests and limits, all a runtime hook knows of the pod spec.
#pragma once

#include <string_view>
#include <vector>

#include "koord/kube/error.h"
#include "statesinformer/pod_meta.h"

namespace koord::roles::koordlet {

/// {"containers":{"<name>":{"requests":{...},"limits":{...}}}} as ContainerMetas holding only
/// name, requests and limits (in name order). Errors name the field.
kube::Expected<std::vector<ContainerMeta>> parseExtendedResourceSpec(std::string_view json);

}  // namespace koord::roles::koordlet
